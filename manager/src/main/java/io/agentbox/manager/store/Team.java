package io.agentbox.manager.store;

/**
 * A tenant: API keys belong to one team, and a team sees only its own sandboxes.
 *
 * @param name            1-63 lowercase letters, digits, '.', '_' or '-'
 * @param description     free text, at most 1024 characters
 * @param createdAtMs     Unix epoch milliseconds
 * @param resourceVersion hub-wide version of its last change
 */
public record Team(String name, String description, long createdAtMs, long resourceVersion) {}
