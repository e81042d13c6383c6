package io.agentbox.worker.runtime.net;

import java.net.Inet4Address;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Settings of one {@link BridgeNetwork}.
 *
 * @param bridge name of the Linux bridge, 1-10 lower-case letters and digits (host veth names
 *     are {@code <bridge>-<hex slot>}, which must fit the kernel's 15 characters); also names the
 *     nftables table {@code inet agentbox_<bridge>}
 * @param pool where the sandbox subnet is taken from: the first block of {@code subnetPrefix}
 *     inside it that overlaps no route or address of the host
 * @param subnetPrefix length of the sandbox subnet, 22..29: a /22 gives 1,021 sandbox addresses,
 *     just under the 1,023 ports a Linux bridge takes
 * @param nameservers servers handed to sandboxes (and allowed on port 53); null = the host's, see
 *     {@link Nameservers}
 */
public record BridgeConfig(String bridge, Ipv4Cidr pool, int subnetPrefix, List<Inet4Address> nameservers) {
    private static final Pattern NAME = Pattern.compile("[a-z0-9]{1,10}");
    /** The most ports the kernel's bridge takes (port numbers are 10 bits, 0 is reserved); measured on 6.18. */
    public static final int BRIDGE_MAX_PORTS = 1023;

    /** @throws IllegalArgumentException naming the setting that is out of range */
    public BridgeConfig {
        if (bridge == null || !NAME.matcher(bridge).matches()) {
            throw new IllegalArgumentException("bridge name must be 1-10 lower-case letters or digits, got '" + bridge + "'");
        }
        if (subnetPrefix < 22 || subnetPrefix > 29) {
            throw new IllegalArgumentException("sandbox subnet prefix must be 22..29, got /" + subnetPrefix);
        }
        if (pool == null || pool.prefixLength() > subnetPrefix) {
            throw new IllegalArgumentException("address pool " + pool + " is smaller than one /" + subnetPrefix);
        }
        nameservers = nameservers == null ? null : List.copyOf(nameservers);
    }

    /** Bridge {@code abx0}, pool {@code 10.213.0.0/16}, /22 subnets, the host's nameservers. */
    public static BridgeConfig defaults() {
        return new BridgeConfig("abx0", Ipv4Cidr.parse("10.213.0.0/16"), 22, null);
    }

    /**
     * The defaults with a bridge named after the worker's data directory ({@code abx} + 7 hex
     * digits of its path's SHA-256), so several workers on one host (or one JVM) each keep their
     * own bridge, and a restarted worker finds its predecessor's leftovers by name.
     */
    public static BridgeConfig forDataDir(Path dataDir) {
        String path = dataDir.toAbsolutePath().normalize().toString();
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(path.getBytes(StandardCharsets.UTF_8));
            return defaults().withBridge("abx" + HexFormat.of().formatHex(d).substring(0, 7));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public BridgeConfig withBridge(String name) {
        return new BridgeConfig(name, pool, subnetPrefix, nameservers);
    }

    public BridgeConfig withPool(Ipv4Cidr newPool, int newSubnetPrefix) {
        return new BridgeConfig(bridge, newPool, newSubnetPrefix, nameservers);
    }

    public BridgeConfig withNameservers(List<Inet4Address> servers) {
        return new BridgeConfig(bridge, pool, subnetPrefix, servers);
    }

    /** Prefix of every host-side veth of this bridge. */
    String vethPrefix() {
        return bridge + "-";
    }
}
