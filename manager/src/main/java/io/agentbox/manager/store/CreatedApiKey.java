package io.agentbox.manager.store;

/**
 * A freshly created API key.
 *
 * @param record    what is stored
 * @param plaintext the key itself ({@code e2b_} + 40 hex chars); shown once, never stored
 */
public record CreatedApiKey(ApiKeyRecord record, String plaintext) {}
