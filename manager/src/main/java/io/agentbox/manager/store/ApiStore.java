package io.agentbox.manager.store;

import io.agentbox.manager.auth.Principal;
import io.agentbox.protocol.v1.Template;
import java.util.List;
import java.util.Optional;

/**
 * What the public API needs from a store: API keys, templates, sandbox records and a secret for
 * envd tokens. The hub serves it from its database ({@link io.agentbox.manager.store.HubStore});
 * a worker serving the API inside its cluster serves it from what the hub pushed and its own
 * sandboxes ({@code io.agentbox.manager.workerapi.WorkerApiStore}). Implementations are thread-safe.
 */
public interface ApiStore {

    /** The key's principal, if the key is valid now (known, not revoked, not expired). */
    Optional<Principal> authenticate(String plaintextKey);

    /** Every template, sorted by name. */
    List<Template> templates();

    Optional<Template> template(String name);

    /** Records a new sandbox. */
    void insertSandbox(SandboxRecord r);

    /**
     * Records a sandbox its worker has just created: as {@link #insertSandbox}, except that a
     * record already stored under its id (adopted from the worker's report meanwhile) wins
     * silently, and a store may skip the read that would find it on the caller's thread.
     */
    default void insertCreatedSandbox(SandboxRecord r) {
        try {
            insertSandbox(r);
        } catch (StoreException e) {
            if (e.reason() != StoreException.Reason.CONFLICT) {
                throw e;
            }
        }
    }

    Optional<SandboxRecord> sandbox(String sandboxId);

    /** Sandboxes of {@code team} (every team when null) that have not ended, oldest first. */
    List<SandboxRecord> activeSandboxes(String team);

    void updateEndAt(String sandboxId, long endAtMs);

    /** Marks a sandbox ended; false when unknown or already ended. */
    boolean markEnded(String sandboxId, String reason);

    /** Marks a running sandbox paused at {@code atMs} (epoch ms); false when unknown, ended or paused already. */
    boolean markPaused(String sandboxId, long atMs);

    /** Marks a paused sandbox running again with deadline {@code endAtMs}; false when unknown, ended or not paused. */
    boolean markResumed(String sandboxId, long endAtMs);

    /** A stable random secret of at least 32 bytes, created on first use. */
    byte[] secret(String name);

    /** The snapshots of sandboxes (the hub's store); empty where snapshots are not kept (the snapshot routes then answer 501). */
    default Optional<SnapshotStore> snapshots() {
        return Optional.empty();
    }
}
