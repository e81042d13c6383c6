package io.agentbox.worker.runtime.net;

import java.net.Inet4Address;
import java.util.ArrayList;
import java.util.List;

/** Picks the sandbox subnet: the first block of the pool that collides with nothing of the host's. */
final class SubnetChoice {
    private static final int REASONS_SHOWN = 3;

    private SubnetChoice() {
    }

    /**
     * The first {@code /subnetPrefix} block of {@code config.pool()} that overlaps no route (any
     * table) and no interface subnet of the host and holds none of the nameservers (which would
     * then be unreachable behind the bridge).
     *
     * @throws IllegalStateException naming the pool and what the first blocks collide with
     */
    static Ipv4Cidr choose(BridgeConfig config, HostNetworkState host, List<Inet4Address> nameservers) {
        List<String> reasons = new ArrayList<>();
        long step = 1L << (32 - config.subnetPrefix());
        for (long offset = 0; offset < config.pool().size(); offset += step) {
            Ipv4Cidr candidate = new Ipv4Cidr((int) (config.pool().network() + offset), config.subnetPrefix());
            String conflict = conflict(candidate, host, nameservers);
            if (conflict == null) {
                return candidate;
            }
            if (reasons.size() < REASONS_SHOWN) {
                reasons.add(candidate + " overlaps " + conflict);
            }
        }
        throw new IllegalStateException("no free /" + config.subnetPrefix() + " for bridge " + config.bridge()
                + " in address pool " + config.pool() + ": " + String.join("; ", reasons)
                + (reasons.size() < config.pool().size() / step ? "; ..." : "")
                + " (configure another pool)");
    }

    private static String conflict(Ipv4Cidr candidate, HostNetworkState host, List<Inet4Address> nameservers) {
        for (HostNetworkState.Prefix route : host.routes()) {
            if (route.cidr().overlaps(candidate)) {
                return "route " + route.cidr() + (route.device() == null ? "" : " dev " + route.device());
            }
        }
        for (HostNetworkState.Prefix addr : host.addressPrefixes()) {
            if (addr.cidr().overlaps(candidate)) {
                return "address subnet " + addr.cidr() + " of " + addr.device();
            }
        }
        for (Inet4Address ns : nameservers) {
            if (candidate.contains(ns)) {
                return "nameserver " + ns.getHostAddress();
            }
        }
        return null;
    }
}
