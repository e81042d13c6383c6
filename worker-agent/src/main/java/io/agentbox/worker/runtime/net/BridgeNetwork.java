package io.agentbox.worker.runtime.net;

import io.agentbox.protocol.ErrorReason;
import io.grpc.Status;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code isolated} network for root workers: one Linux bridge with the gateway address, one
 * veth pair per sandbox (host side a bridge port in isolated mode, so sandboxes never talk to
 * each other at layer 2; sandbox side {@code eth0}), NAT out through the host's routes, and the
 * filter of {@link EgressRules}. No process runs per sandbox.
 *
 * <p>Construction sets everything up and first removes what an earlier worker left under the
 * same bridge name (its table, its veths, the bridge). It also turns on
 * {@code net.ipv4.ip_forward}, which {@link #close} leaves on (other software may rely on it).
 *
 * <p>Costs: {@link #attach} runs two programs ({@code ip -batch} on the host side,
 * {@code nsenter --net ip -batch} inside), {@link #detach} one. IPv6: sandboxes get no IPv6
 * address ({@code addrgenmode none}, no route) and the host drops every IPv6 packet from the
 * bridge. Thread-safe.
 */
public final class BridgeNetwork implements SandboxNetwork {
    private static final Logger log = LoggerFactory.getLogger(BridgeNetwork.class);
    private static final Path SYS_NET = Path.of("/sys/class/net");
    private static final Path IP_FORWARD = Path.of("/proc/sys/net/ipv4/ip_forward");
    private static final Path IPV6_CONF = Path.of("/proc/sys/net/ipv6/conf");
    /** Name of the sandbox-side interface. */
    static final String SANDBOX_IF = "eth0";

    private final BridgeConfig config;
    private final NetCommands tools;
    private final Ipv4Cidr subnet;
    private final AddressPool addresses;
    private final List<Inet4Address> nameservers;
    private final int mtu;
    private final boolean ipv6;
    /** Host interface name → address slot, for every attachment made and not yet detached. */
    private final Map<String, Integer> attached = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * Sets up the bridge, its address, forwarding and the nftables table.
     *
     * @throws IllegalStateException when the worker is not root, a program is missing (naming the
     *     Debian package), no subnet of the pool is free (naming what overlaps) or a step fails
     *     (naming it); whatever was made before the failure is removed again
     */
    public BridgeNetwork(BridgeConfig config) {
        this.config = config;
        if (uid() != 0) {
            throw new IllegalStateException("the isolated sandbox network (bridge + nftables) needs a root worker; "
                    + "a rootless worker would need slirp4netns, which is not built yet");
        }
        this.tools = NetCommands.locate();
        this.ipv6 = Files.isDirectory(IPV6_CONF);
        removeEverything();
        try {
            HostNetworkState host = HostNetworkState.read(tools);
            this.nameservers = config.nameservers() != null
                    ? config.nameservers()
                    : Nameservers.ofHost(Nameservers.RESOLV_CONF, Nameservers.SYSTEMD_UPSTREAM);
            if (nameservers.isEmpty()) {
                log.warn("bridge {}: the host lists no IPv4 nameserver a sandbox can reach ({} and {}); sandboxes get no DNS",
                        config.bridge(), Nameservers.RESOLV_CONF, Nameservers.SYSTEMD_UPSTREAM);
            }
            this.subnet = SubnetChoice.choose(config, host, nameservers);
            this.addresses = new AddressPool(subnet);
            this.mtu = host.uplinkMtu();
            createBridge();
            applyRules(host);
        } catch (RuntimeException e) {
            removeEverything();
            throw e;
        }
        log.info("bridge {}: subnet {}, gateway {}, mtu {}, nameservers {}, table inet {}", config.bridge(), subnet,
                addresses.gateway().getHostAddress(), mtu, nameservers, EgressRules.table(config.bridge()));
    }

    /** The sandbox subnet chosen at construction. */
    public Ipv4Cidr subnet() {
        return subnet;
    }

    /** The host's address on the bridge, the sandboxes' default gateway. */
    public Inet4Address gateway() {
        return addresses.gateway();
    }

    /** How many sandboxes can be attached at once. */
    public int capacity() {
        return addresses.capacity();
    }

    public BridgeConfig config() {
        return config;
    }

    private void createBridge() {
        String br = config.bridge();
        String batch = "link add name " + br + " mtu " + mtu + " type bridge\n"
                + "addr add " + gateway().getHostAddress() + "/" + subnet.prefixLength() + " dev " + br + "\n"
                + "link set " + br + " up\n";
        NetCommands.Result r = NetCommands.run(List.of(tools.ip.toString(), "-batch", "-"), batch);
        if (!r.ok()) {
            throw new IllegalStateException("creating bridge " + br + " failed: " + r.message());
        }
        if (ipv6) {
            writeSysctl(IPV6_CONF.resolve(br).resolve("disable_ipv6"), "disabling IPv6 on bridge " + br);
        }
        writeSysctl(IP_FORWARD, "enabling IPv4 forwarding (net.ipv4.ip_forward)");
    }

    private void applyRules(HostNetworkState host) {
        List<Ipv4Cidr> lan = host.addressPrefixes().stream()
                .filter(p -> !config.bridge().equals(p.device()))
                .map(HostNetworkState.Prefix::cidr)
                .toList();
        String script = EgressRules.script(config.bridge(), subnet, lan, nameservers);
        NetCommands.Result r = NetCommands.run(List.of(tools.nft.toString(), "-f", "-"), script);
        if (!r.ok()) {
            throw new IllegalStateException("loading nftables table inet " + EgressRules.table(config.bridge())
                    + " failed: " + r.message());
        }
    }

    @Override
    public Attachment attach(String sandboxId, long nsPid) {
        if (closed) {
            throw Status.UNAVAILABLE.withDescription("bridge " + config.bridge() + " is closed").asRuntimeException();
        }
        checkOwnNamespace(sandboxId, nsPid);
        OptionalInt free = addresses.allocate();
        if (free.isEmpty()) {
            throw ErrorReason.NO_CAPACITY.exception(Status.Code.RESOURCE_EXHAUSTED, "no free sandbox address on bridge "
                    + config.bridge() + ": all " + addresses.capacity() + " of " + subnet + " are in use");
        }
        int slot = free.getAsInt();
        String hostIf = config.vethPrefix() + Integer.toHexString(slot);
        Inet4Address address = addresses.address(slot);
        String step = "creating veth " + hostIf + " into the namespace";
        try {
            NetCommands.Result r = NetCommands.run(List.of(tools.ip.toString(), "-batch", "-"), hostSide(hostIf, address, nsPid));
            if (r.ok()) {
                step = "configuring " + SANDBOX_IF + " inside the namespace";
                r = NetCommands.run(List.of(tools.nsenter.toString(), "--net=/proc/" + nsPid + "/ns/net", "--",
                        tools.ip.toString(), "-batch", "-"), sandboxSide(address));
            }
            if (!r.ok()) {
                throw new IllegalStateException(r.message());
            }
        } catch (RuntimeException e) {
            release(hostIf, slot, address);
            throw Status.UNAVAILABLE.withDescription("attaching sandbox " + sandboxId + " (pid " + nsPid + ") to bridge "
                    + config.bridge() + ": " + step + " failed: " + e.getMessage()).withCause(e).asRuntimeException();
        }
        attached.put(hostIf, slot);
        if (closed && attached.remove(hostIf) != null) {
            // close() ran meanwhile and did not see this one
            release(hostIf, slot, address);
            throw Status.UNAVAILABLE.withDescription("bridge " + config.bridge() + " closed while attaching sandbox "
                    + sandboxId).asRuntimeException();
        }
        return new Attachment(sandboxId, hostIf, address, List.<InetAddress>copyOf(nameservers));
    }

    /** Refuses a pid that is gone or shares the worker's own network namespace. */
    private static void checkOwnNamespace(String sandboxId, long nsPid) {
        Path ns = Path.of("/proc", Long.toString(nsPid), "ns", "net");
        try {
            if (nsPid <= 0 || Files.readSymbolicLink(ns).equals(Files.readSymbolicLink(Path.of("/proc/self/ns/net")))) {
                throw Status.INVALID_ARGUMENT.withDescription("sandbox " + sandboxId + ": process " + nsPid
                        + " is in the worker's own network namespace, not one of its own").asRuntimeException();
            }
        } catch (IOException e) {
            throw Status.UNAVAILABLE.withDescription("attaching sandbox " + sandboxId + ": reading the network namespace of "
                    + "process " + nsPid + " failed (" + e.getClass().getSimpleName() + " " + e.getMessage() + ")")
                    .asRuntimeException();
        }
    }

    /** Host side: the pair, one end straight into the namespace with its fixed MAC; port isolation; a fixed ARP entry. */
    private String hostSide(String hostIf, Inet4Address address, long nsPid) {
        String mac = mac(address);
        // the permanent neighbour entry stops a sandbox from claiming another one's address by ARP
        return "link add " + hostIf + " mtu " + mtu + " master " + config.bridge() + " up type veth peer name " + SANDBOX_IF
                + " mtu " + mtu + " address " + mac + " netns " + nsPid + "\n"
                + "link set " + hostIf + " type bridge_slave isolated on\n"
                + "neigh replace " + address.getHostAddress() + " lladdr " + mac + " dev " + config.bridge() + " nud permanent\n";
    }

    private String sandboxSide(Inet4Address address) {
        return "link set lo up\n"
                + (ipv6 ? "link set " + SANDBOX_IF + " addrgenmode none\n" : "")
                + "addr add " + address.getHostAddress() + "/" + subnet.prefixLength() + " dev " + SANDBOX_IF + "\n"
                + "link set " + SANDBOX_IF + " up\n"
                + "route add default via " + gateway().getHostAddress() + "\n";
    }

    /** Locally administered unicast MAC 02:ab + the four address bytes: unique per address. */
    static String mac(Inet4Address address) {
        byte[] b = address.getAddress();
        return String.format("02:ab:%02x:%02x:%02x:%02x", b[0] & 0xff, b[1] & 0xff, b[2] & 0xff, b[3] & 0xff);
    }

    @Override
    public void detach(Attachment attachment) {
        Integer slot = attached.remove(attachment.hostInterface());
        if (slot != null) {
            release(attachment.hostInterface(), slot, addresses.address(slot));
        }
    }

    /** Deletes the host veth (its peer goes with it) and the ARP entry; frees the slot once the veth is gone. */
    private void release(String hostIf, int slot, Inet4Address address) {
        String batch = "link del " + hostIf + "\nneigh del " + address.getHostAddress() + " dev " + config.bridge() + "\n";
        try {
            // -force: the veth is already gone when the sandbox's namespace died first
            NetCommands.run(List.of(tools.ip.toString(), "-force", "-batch", "-"), batch);
        } catch (RuntimeException e) {
            log.warn("bridge {}: removing {}: {}", config.bridge(), hostIf, e.getMessage());
        }
        if (Files.exists(SYS_NET.resolve(hostIf))) {
            // never hand out an address whose old veth still exists: keep the slot taken
            log.error("bridge {}: veth {} could not be removed; address {} stays reserved", config.bridge(), hostIf,
                    address.getHostAddress());
        } else {
            addresses.free(slot);
        }
    }

    @Override
    public void close() {
        closed = true;
        // every veth goes in one ip process below (each deletion still costs the kernel ~10-20 ms)
        attached.clear();
        try {
            removeEverything();
        } catch (RuntimeException e) {
            log.warn("bridge {}: cleanup incomplete: {}", config.bridge(), e.getMessage());
        }
    }

    /**
     * Removes the table, every veth named after the bridge and the bridge itself, whoever made them.
     *
     * @throws IllegalStateException naming what could not be removed
     */
    private void removeEverything() {
        List<String> problems = new ArrayList<>();
        NetCommands.Result r = NetCommands.run(List.of(tools.nft.toString(), "-f", "-"), EgressRules.deleteScript(config.bridge()));
        if (!r.ok()) {
            problems.add("table inet " + EgressRules.table(config.bridge()) + ": " + r.message());
        }
        List<String> links = new ArrayList<>();
        try (Stream<Path> names = Files.list(SYS_NET)) {
            names.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(config.vethPrefix()))
                    .forEach(links::add);
        } catch (NoSuchFileException e) {
            // no sysfs: nothing to list
        } catch (IOException e) {
            problems.add(SYS_NET + ": " + e.getMessage());
        }
        if (Files.exists(SYS_NET.resolve(config.bridge()))) {
            links.add(config.bridge());
        }
        if (!links.isEmpty()) {
            StringBuilder batch = new StringBuilder();
            links.forEach(l -> batch.append("link del ").append(l).append('\n'));
            NetCommands.run(List.of(tools.ip.toString(), "-force", "-batch", "-"), batch.toString());
            for (String l : links) {
                if (Files.exists(SYS_NET.resolve(l))) {
                    problems.add("interface " + l + " is still there");
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException("removing bridge " + config.bridge() + " and its leftovers failed: "
                    + String.join("; ", problems));
        }
    }

    private static void writeSysctl(Path file, String what) {
        try {
            Files.writeString(file, "1");
        } catch (IOException e) {
            throw new IllegalStateException(what + " failed: cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static int uid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalStateException("the isolated sandbox network needs Linux (cannot read /proc/self): " + e.getMessage(), e);
        }
    }
}
