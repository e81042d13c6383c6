package io.agentbox.manager.envd;

import io.agentbox.manager.store.SandboxRecord;
import io.grpc.Channel;

/**
 * A data-plane request's sandbox: its id, the hub's record, the channel to the owning worker, and
 * the user the request acts as ({@link SandboxUser#USER}, {@link SandboxUser#ROOT}, or empty for the
 * sandbox's default user, passed to
 * the worker in the requests' {@code user} field).
 */
record SandboxTarget(String sandboxId, SandboxRecord record, Channel channel, String user) {

    /** The same sandbox, acting as {@code user} (already checked with {@link SandboxUser#isKnown}). */
    SandboxTarget as(String user) {
        return new SandboxTarget(sandboxId, record, channel, SandboxUser.normalize(user));
    }
}
