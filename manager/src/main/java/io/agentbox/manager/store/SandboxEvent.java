package io.agentbox.manager.store;

/**
 * One entry of a sandbox's history.
 *
 * @param sandboxId the sandbox
 * @param atMs      Unix epoch milliseconds
 * @param event     {@code created}, {@code timeout_set}, {@code paused}, {@code resumed} or {@code ended}
 * @param detail    for {@code timeout_set} and {@code resumed} the new deadline (epoch ms), for
 *                  {@code ended} the reason; else empty
 */
public record SandboxEvent(String sandboxId, long atMs, String event, String detail) {
    public static final String CREATED = "created";
    public static final String TIMEOUT_SET = "timeout_set";
    public static final String ENDED = "ended";
    public static final String PAUSED = "paused";
    public static final String RESUMED = "resumed";
}
