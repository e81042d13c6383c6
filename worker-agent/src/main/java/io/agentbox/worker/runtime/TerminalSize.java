package io.agentbox.worker.runtime;

import io.grpc.Status;

/**
 * A pseudo-terminal's window size in character cells.
 *
 * @param cols columns, 1..{@link #MAX}
 * @param rows rows, 1..{@link #MAX}
 */
public record TerminalSize(int cols, int rows) {
    /** Largest accepted dimension; the kernel stores each in 16 bits. */
    public static final int MAX = 65_535;

    /** @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT when a dimension is out of range */
    public TerminalSize {
        if (cols < 1 || cols > MAX || rows < 1 || rows > MAX) {
            throw Status.INVALID_ARGUMENT.withDescription("pty size must be 1.." + MAX + " columns and rows, got "
                    + cols + "x" + rows).asRuntimeException();
        }
    }
}
