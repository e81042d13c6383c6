package io.agentbox.manager.store;

/**
 * A change of a sandbox record, as {@link SandboxStore} reports it to its listeners: the record as
 * it is after the change.
 *
 * @param op     {@code CREATED} (recorded, also adopted from a worker), {@code UPDATED} (new
 *               deadline, paused, resumed) or {@code ENDED} (killed, timed out, gone, lost)
 * @param record the record after the change
 */
public record SandboxChange(Op op, SandboxRecord record) {
    public enum Op { CREATED, UPDATED, ENDED }

    /**
     * Told of sandbox changes. Called on the thread that made the change, in the order of that
     * sandbox's changes, so it must not block (hand the change to another thread).
     */
    public interface Listener {
        /** Whether changes are wanted now; false spares the store reading back the changed record. */
        default boolean active() {
            return true;
        }

        void changed(SandboxChange change);
    }
}
