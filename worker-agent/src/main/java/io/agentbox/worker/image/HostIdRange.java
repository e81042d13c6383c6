package io.agentbox.worker.image;

/**
 * The host uids and gids sandboxes run as: a sandbox's ids 0..{@code SIZE - 1} are host ids
 * {@code BASE + id} (one range for every sandbox of a worker; sandboxes are kept apart by their
 * namespaces, not by their ids). Image layers are stored with owners already shifted into it.
 */
public final class HostIdRange {
    /** Host id of the sandbox's root. Far above the ranges useradd hands out (/etc/subuid starts at 100000). */
    public static final int BASE = 1_000_000;
    /** Ids a sandbox can use: 0..65535. */
    public static final int SIZE = 65_536;

    private HostIdRange() {}

    /** Host id of sandbox id {@code id}; @throws IllegalArgumentException outside 0..SIZE-1 */
    public static int toHost(long id) {
        if (id < 0 || id >= SIZE) {
            throw new IllegalArgumentException("id " + id + " is outside the sandbox range 0.." + (SIZE - 1));
        }
        return BASE + (int) id;
    }
}
