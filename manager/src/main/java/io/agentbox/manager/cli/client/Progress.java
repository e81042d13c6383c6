package io.agentbox.manager.cli.client;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * Progress of a pull or build on stderr (stdout stays clean for {@code --output json}).
 *
 * <p>On a terminal: one line redrawn in place, {@code LABEL [#########           ]  45% DETAIL}.
 * Elsewhere (a pipe, a CI log, a test): plain lines {@code LABEL: DETAIL}, only when the percentage
 * enters a new tenth or, without a known total, when the detail changes, so logs stay short.
 *
 * <p>Not thread-safe: one thread reports.
 */
public final class Progress implements AutoCloseable {
    static final int BAR_WIDTH = 30;

    private final PrintWriter err;
    private final boolean tty;
    private final String label;
    private String lastLine = "";
    private long lastTenth = -1;
    private int drawnWidth;

    /**
     * @param tty whether {@code err} is a terminal (redraw in place) or not (plain lines)
     * @param label what is in progress, e.g. {@code pulling python:3.12}
     */
    public Progress(PrintWriter err, boolean tty, String label) {
        this.err = err;
        this.tty = tty;
        this.label = label;
    }

    /**
     * Reports {@code done} of {@code total} units (any unit; {@code total <= 0} = unknown) with a
     * short detail such as {@code 3/7 layers, 412/1630 MB}.
     */
    public void update(long done, long total, String detail) {
        if (tty) {
            String bar = "";
            if (total > 0) {
                int filled = (int) Math.min(BAR_WIDTH, BAR_WIDTH * done / total);
                bar = " [" + "#".repeat(filled) + " ".repeat(BAR_WIDTH - filled) + "] "
                        + String.format(Locale.ROOT, "%3d%%", Math.min(100, 100 * done / total));
            }
            redraw(label + bar + (detail == null ? "" : " " + detail));
            return;
        }
        long tenth = total > 0 ? Math.min(10, 10 * done / total) : -1;
        String line = label + ": " + (detail == null ? done + (total > 0 ? "/" + total : "") : detail);
        boolean print = total > 0 ? tenth != lastTenth : !line.equals(lastLine);
        if (print) {
            lastTenth = tenth;
            lastLine = line;
            err.println(line);
            err.flush();
        }
    }

    /** A status without a measure (e.g. {@code building}); printed when it changes. */
    public void status(String detail) {
        update(0, 0, detail);
    }

    /** Ends the progress line (on a terminal, moves below the bar). */
    @Override
    public void close() {
        if (tty && drawnWidth > 0) {
            err.println();
            err.flush();
            drawnWidth = 0;
        }
    }

    private void redraw(String line) {
        if (line.equals(lastLine)) {
            return;
        }
        lastLine = line;
        // pad over the rest of a longer previous line
        err.print("\r" + line + " ".repeat(Math.max(0, drawnWidth - line.length())));
        err.flush();
        drawnWidth = line.length();
    }
}
