package io.agentbox.manager.envd;

import io.agentbox.manager.store.SandboxRecord;
import io.grpc.Channel;

/**
 * A data-plane request's sandbox: its id, the hub's record and the channel to the owning worker.
 */
record SandboxTarget(String sandboxId, SandboxRecord record, Channel channel) {}
