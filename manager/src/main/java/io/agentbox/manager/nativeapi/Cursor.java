package io.agentbox.manager.nativeapi;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/**
 * Cursor paging over a list in a stable order: items sorted by (time, id); a cursor is the opaque
 * encoding of the last item's (time, id) and the next page starts after it, so creates and deletes
 * between pages neither repeat nor skip the items that stay. {@code ?limit=} is
 * 1..{@value #MAX_LIMIT}, default {@value #DEFAULT_LIMIT}.
 */
final class Cursor {
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;

    /** A sort key: epoch milliseconds and a unique id. */
    record Key(long timeMs, String id) {
        static final Comparator<Key> ORDER = Comparator.comparingLong(Key::timeMs).thenComparing(Key::id);

        String encode() {
            return Base64.getUrlEncoder().withoutPadding().encodeToString((timeMs + ":" + id).getBytes(StandardCharsets.UTF_8));
        }
    }

    /** One page of items and the cursor of the next page (null on the last). */
    record Page<T>(List<T> items, String next) {}

    private Cursor() {}

    /**
     * The page of {@code all} after {@code cursor} (null: from the start), at most {@code limit} items.
     *
     * @throws io.agentbox.manager.http.ApiException 400 for a cursor this server did not issue
     */
    static <T> Page<T> page(List<T> all, Function<T, Key> key, String cursor, int limit) {
        Key after = cursor == null ? null : decode(cursor);
        List<T> sorted = new ArrayList<>(all);
        sorted.sort(Comparator.comparing(key, Key.ORDER));
        List<T> out = new ArrayList<>();
        for (T t : sorted) {
            if (after != null && Key.ORDER.compare(key.apply(t), after) <= 0) {
                continue;
            }
            if (out.size() == limit) {
                return new Page<>(out, key.apply(out.get(out.size() - 1)).encode());
            }
            out.add(t);
        }
        return new Page<>(out, null);
    }

    static Key decode(String cursor) {
        try {
            String s = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            int colon = s.indexOf(':');
            return new Key(Long.parseLong(s.substring(0, colon)), s.substring(colon + 1));
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            throw V1Errors.of(400, "query parameter 'cursor' is not a cursor this server issued");
        }
    }
}
