package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What a client command prints on stdout: a table for people ({@code --output table}, the default:
 * a header row in capitals, columns two spaces apart, {@code -} for a missing value) or the API's
 * JSON for programs ({@code --output json}: a list is a JSON array of the API's items, one
 * resource is its object, pretty-printed).
 */
public final class Output {
    /** {@code --output} values. */
    public enum Format { table, json }

    private static final ObjectMapper PRETTY = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final PrintWriter out;
    private final Format format;

    public Output(PrintWriter out, Format format) {
        this.out = out;
        this.format = format;
    }

    public boolean json() {
        return format == Format.json;
    }

    /** A table column: its header and how a row's cell is read from an item. */
    public record Column(String header, Function<JsonNode, String> cell) {
        /** The item's field {@code field} as text (arrays joined with commas, objects as k=v). */
        public static Column of(String header, String field) {
            return new Column(header, n -> text(n.get(field)));
        }
    }

    /** A list: the table of {@code columns}, or the items as a JSON array. */
    public void list(List<JsonNode> items, List<Column> columns) {
        if (json()) {
            ArrayNode a = PRETTY.createArrayNode();
            items.forEach(a::add);
            println(write(a));
            return;
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(columns.stream().map(Column::header).toArray(String[]::new));
        for (JsonNode item : items) {
            rows.add(columns.stream().map(c -> {
                String v = c.cell().apply(item);
                return v == null || v.isEmpty() ? "-" : v;
            }).toArray(String[]::new));
        }
        int[] width = new int[columns.size()];
        rows.forEach(r -> {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        });
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(r[i]);
                if (i < r.length - 1) {
                    line.append(" ".repeat(width[i] - r[i].length() + 2));
                }
            }
            println(line.toString());
        }
    }

    /** One resource: its JSON, or for tables the given human line (e.g. just the new id). */
    public void object(JsonNode resource, String human) {
        println(json() ? write(resource) : human);
    }

    /** A line for people only (nothing in JSON mode, where the resource says it). */
    public void note(String line) {
        if (!json()) {
            println(line);
        }
    }

    /** A field as text: null and JSON null are null; arrays joined by commas; objects as {@code k=v,k=v}. */
    public static String text(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return null;
        }
        if (n.isArray()) {
            List<String> parts = new ArrayList<>();
            n.forEach(e -> parts.add(e.asText()));
            return String.join(",", parts);
        }
        if (n.isObject()) {
            List<String> parts = new ArrayList<>();
            n.fields().forEachRemaining(e -> parts.add(e.getKey() + "=" + e.getValue().asText()));
            return String.join(",", parts);
        }
        return n.asText();
    }

    private void println(String s) {
        out.println(s);
        out.flush();
    }

    private static String write(JsonNode n) {
        try {
            return PRETTY.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
