package io.agentbox.worker.runtime;

/**
 * What a sandbox uses at one instant, as its runtime measures it (the local runtime: its cgroup and
 * its writable layer). All values are bytes, except {@code cpuNanos}.
 *
 * @param cpuNanos CPU time the sandbox's processes used since its cgroup was made (a counter:
 *     callers take differences)
 * @param memUsed memory charged to the sandbox minus its page cache
 * @param memCache page cache charged to the sandbox (file pages, including its tmpfs files)
 * @param memLimit the sandbox's memory limit; -1 when it has none
 * @param diskUsed bytes in use on the writable layer
 * @param diskTotal size of the writable layer
 */
public record ResourceUsage(long cpuNanos, long memUsed, long memCache, long memLimit, long diskUsed, long diskTotal) {}
