package io.agentbox.manager.e2b;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.http.InputText;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An E2B template name {@code [namespace/]alias[:tag]} (docs/e2b-wire.md#names-tags-and-ids): alias
 * and namespace match {@code [a-z0-9-_]+} after trimming and lower-casing, a tag
 * {@code [a-z0-9-_.]+} and is not a UUID. The namespace, when given, must be the caller's team
 * (a team name may also hold '.', so the namespace check is equality with the team, not the alias
 * pattern).
 *
 * @param namespace the namespace as given (lower-cased), or null
 * @param alias     the alias, lower-cased
 * @param tag       the tag as given, or null when the name has none (E2B's implicit {@value #DEFAULT_TAG})
 */
public record TemplateName(String namespace, String alias, String tag) {
    public static final String DEFAULT_TAG = "default";
    static final int MAX_CHARS = 128;
    private static final Pattern ALIAS = Pattern.compile("[a-z0-9_-]{1,63}");
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
    private static final Pattern TAG = Pattern.compile("[a-z0-9_.-]{1,63}");
    private static final Pattern UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    /** The tag, {@value #DEFAULT_TAG} when the name has none. */
    public String tagOrDefault() {
        return tag == null ? DEFAULT_TAG : tag;
    }

    /**
     * Parses {@code raw}.
     *
     * @throws ApiException 400 naming the bad part
     */
    public static TemplateName parse(String raw) {
        if (raw == null || raw.isBlank()) {
            throw ApiException.e2b(400, "Name is required");
        }
        String s = raw.trim().toLowerCase(Locale.ROOT);
        if (s.length() > MAX_CHARS) {
            throw ApiException.e2b(400, "template name longer than " + MAX_CHARS + " characters");
        }
        String namespace = null;
        int slash = s.indexOf('/');
        if (slash >= 0) {
            namespace = s.substring(0, slash);
            s = s.substring(slash + 1);
            if (!NAMESPACE.matcher(namespace).matches()) {
                throw ApiException.e2b(400, "invalid namespace '" + InputText.quote(namespace) + "' in template name '"
                        + InputText.quote(raw) + "': use your team's name");
            }
        }
        String tag = null;
        int colon = s.indexOf(':');
        if (colon >= 0) {
            tag = checkTag(s.substring(colon + 1));
            s = s.substring(0, colon);
        }
        if (!ALIAS.matcher(s).matches()) {
            throw ApiException.e2b(400, "invalid template name '" + InputText.quote(raw)
                    + "': the alias must be 1-63 lowercase letters, digits, '-' or '_'");
        }
        return new TemplateName(namespace, s, tag);
    }

    /**
     * A tag, trimmed and lower-cased.
     *
     * @throws ApiException 400 for a malformed tag or a UUID
     */
    public static String checkTag(String raw) {
        String t = raw == null ? "" : raw.trim().toLowerCase(Locale.ROOT);
        if (!TAG.matcher(t).matches()) {
            throw ApiException.e2b(400, "invalid tag '" + InputText.quote(raw == null ? "" : raw)
                    + "': a tag is 1-63 lowercase letters, digits, '-', '_' or '.'");
        }
        if (UUID.matcher(t).matches()) {
            throw ApiException.e2b(400, "invalid tag '" + t + "': a tag must not be a UUID");
        }
        return t;
    }

    /** Checked, de-duplicated tags in order. */
    public static List<String> checkTags(List<String> raw) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        for (String t : raw) {
            out.add(checkTag(t));
        }
        return new ArrayList<>(out);
    }

    /**
     * Whether this name may be used by {@code team}: no namespace, or the team's own.
     *
     * @throws ApiException 400 when the namespace is another team's
     */
    public TemplateName requireTeam(String team) {
        if (namespace != null && !namespace.equals(team)) {
            throw ApiException.e2b(400, "namespace '" + namespace + "' is not your team ('" + team
                    + "'): name templates without a namespace or with your team's");
        }
        return this;
    }
}
