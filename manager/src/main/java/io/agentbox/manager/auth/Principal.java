package io.agentbox.manager.auth;

/**
 * The caller behind an API key.
 *
 * @param team owner of the sandboxes this caller creates; another team's sandboxes are invisible (404)
 * @param role {@code admin} or {@code user}
 */
public record Principal(String team, String role) {
    public static final String ROLE_ADMIN = "admin";
    public static final String ROLE_USER = "user";

    public boolean isAdmin() {
        return ROLE_ADMIN.equals(role);
    }
}
