package io.agentbox.worker.pool;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;

/**
 * What a sandbox may use when its template sets no limit: the local runtime enforces no CPU,
 * memory or disk quota yet, so a sandbox can use the whole host and we report the host's figures
 * (E2B clients require the fields, and 0 would claim a sandbox with no CPU).
 */
final class HostShares {
    static final int CPU_COUNT = Runtime.getRuntime().availableProcessors();
    static final int MEMORY_MB = memoryMb();

    private HostShares() {}

    private static int memoryMb() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            return (int) Math.min(Integer.MAX_VALUE, os.getTotalMemorySize() / (1024 * 1024));
        }
        return 0;
    }

    static int orHost(int templateValue, int hostValue) {
        return templateValue > 0 ? templateValue : hostValue;
    }
}
