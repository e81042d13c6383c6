package io.agentbox.worker.runtime.net;

import static io.agentbox.worker.runtime.net.TestNet.sh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.worker.runtime.net.SandboxNetwork.Attachment;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.net.Inet4Address;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link BridgeNetwork} on the real kernel: real bridge, veths, nftables and network namespaces
 * (stand-in sandboxes are {@code unshare --net sleep infinity}); the "outside" is {@link FarHosts}.
 * Every object made here is removed after each test and, by name, after the class.
 */
class BridgeNetworkTest {
    private static final String BRIDGE = "abxt0";
    private static final BridgeConfig CONFIG = BridgeConfig.defaults().withBridge(BRIDGE)
            .withNameservers(List.of((Inet4Address) FarHosts.DNS))
            // a pool of its own: workers on this host (10.213.0.0/16 by default) never shift its subnets
            .withPool(Ipv4Cidr.parse("10.219.0.0/16"), 22);
    private static FarHosts far;

    private final List<AutoCloseable> cleanup = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void world() throws Exception {
        TestNet.requirePrograms();
        TestNet.sweep();
        far = new FarHosts();
        FarHosts.routeFrom(BRIDGE);
    }

    @AfterAll
    static void removeWorld() throws Exception {
        try {
            if (far != null) {
                far.close();
            }
        } finally {
            TestNet.sweep();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        List<AutoCloseable> items = new ArrayList<>(cleanup);
        Collections.reverse(items);
        for (AutoCloseable c : items) {
            c.close();
        }
    }

    private BridgeNetwork network(BridgeConfig config) {
        BridgeNetwork n = new BridgeNetwork(config);
        cleanup.add(n);
        return n;
    }

    private StandInSandbox sandbox() throws Exception {
        StandInSandbox s = new StandInSandbox();
        cleanup.add(s);
        return s;
    }

    private Probe.Listener listener(Path ns) throws Exception {
        Probe.Listener l = Probe.Listener.open(ns, InetAddress.getByName("0.0.0.0"), 0);
        cleanup.add(l);
        return l;
    }

    @Test
    void sandboxReachesTheInternetThroughNatAndNothingOfTheHostNorItsNeighbours() throws Exception {
        BridgeNetwork net = network(CONFIG);
        StandInSandbox a = sandbox();
        StandInSandbox b = sandbox();
        Attachment att = net.attach("sbx-a", a.pid());
        Attachment btt = net.attach("sbx-b", b.pid());
        assertThat(net.subnet().contains((Inet4Address) att.address())).isTrue();
        assertThat(att.address()).isNotEqualTo(btt.address());
        assertThat(att.hostInterface()).hasSizeLessThanOrEqualTo(15).startsWith(BRIDGE + "-");
        assertThat(att.nameservers()).containsExactly(FarHosts.DNS);
        // layer 2 between sandboxes is cut by the port flag; the nftables rule on the subnet is the second wall
        assertThat(sh("ip", "-d", "link", "show", att.hostInterface())).contains("master " + BRIDGE).contains("isolated on");

        // out through NAT: the far host sees the host's address on that link, never the sandbox's
        Probe.Outcome internet = Probe.connect(a.ns(), FarHosts.INTERNET, FarHosts.PORT);
        assertThat(internet.connected()).as(internet.toString()).isTrue();
        assertThat(internet.peer()).isEqualTo(FarHosts.HOST_ON_LAN.getHostAddress())
                .isNotEqualTo(att.address().getHostAddress());
        // the configured nameserver is open on port 53 although it is a 10/8 address
        Probe.Outcome dns = Probe.connect(a.ns(), FarHosts.DNS, 53);
        assertThat(dns.connected()).as(dns.toString()).isTrue();

        // the worker reaches a listener inside the sandbox at the attachment's address, from the gateway
        Probe.Listener inA = listener(a.ns());
        Probe.Outcome worker = Probe.connect(null, att.address(), inA.port());
        assertThat(worker.connected()).as(worker.toString()).isTrue();
        assertThat(worker.peer()).isEqualTo(net.gateway().getHostAddress());

        Probe.Listener onHost = listener(null);
        Probe.Listener inB = listener(b.ns());
        InetAddress primary = primaryHostAddress();
        // controls: each target below answers when asked from where it is allowed
        assertThat(Probe.connect(null, primary, onHost.port()).connected()).isTrue();
        assertThat(Probe.connect(null, FarHosts.LAN_NEIGHBOUR, FarHosts.PORT).connected()).isTrue();
        assertThat(Probe.connect(null, btt.address(), inB.port()).connected()).isTrue();

        List<Probe.Outcome> blocked = inParallel(List.of(
                () -> Probe.connect(a.ns(), net.gateway(), onHost.port()),
                () -> Probe.connect(a.ns(), primary, onHost.port()),
                () -> Probe.connect(a.ns(), FarHosts.HOST_ON_LAN, onHost.port()),
                () -> Probe.connect(a.ns(), FarHosts.LAN_NEIGHBOUR, FarHosts.PORT),
                () -> Probe.connect(a.ns(), FarHosts.DNS, FarHosts.PORT),
                () -> Probe.connect(a.ns(), FarHosts.PRIVATE_10, FarHosts.PORT),
                () -> Probe.connect(a.ns(), FarHosts.PRIVATE_192, FarHosts.PORT),
                () -> Probe.connect(a.ns(), FarHosts.METADATA, FarHosts.PORT),
                () -> Probe.connect(a.ns(), btt.address(), inB.port())));
        assertThat(blocked).allSatisfy(o -> assertThat(o.connected()).as("reached " + o.target() + ": " + o).isFalse());
    }

    @Test
    void hostLoopbackStaysUnreachableEvenWhenTheKernelWouldRouteIt() throws Exception {
        BridgeNetwork net = network(CONFIG);
        StandInSandbox a = sandbox();
        net.attach("sbx-a", a.pid());
        try (DatagramSocket onLoopback = new DatagramSocket(0, InetAddress.getByName("127.0.0.1"))) {
            int port = onLoopback.getLocalPort();
            Probe.sendUdp(null, InetAddress.getByName("127.0.0.1"), port, "from the host");
            assertThat(Probe.receiveUdp(onLoopback, 2000)).isEqualTo("from the host");
            // take away the kernel's own martian checks (kube-proxy, for one, turns route_localnet on):
            // then a datagram for 127.0.0.1 sent to the gateway is delivered, unless the filter drops it
            sh("sh", "-c", "echo 1 > /proc/sys/net/ipv4/conf/" + BRIDGE + "/route_localnet");
            sh("nsenter", "--net=" + a.ns(), "sh", "-c", "echo 1 > /proc/sys/net/ipv4/conf/eth0/route_localnet");
            a.ip("route", "del", "local", "127.0.0.0/8", "dev", "lo", "table", "local");
            a.ip("route", "del", "local", "127.0.0.1", "dev", "lo", "table", "local");
            a.ip("route", "add", "127.0.0.1/32", "via", net.gateway().getHostAddress(), "dev", "eth0");
            assertThat(a.ip("route", "get", "127.0.0.1")).contains("via " + net.gateway().getHostAddress());
            Probe.sendUdp(a.ns(), InetAddress.getByName("127.0.0.1"), port, "from the sandbox");
            assertThat(Probe.receiveUdp(onLoopback, 1500)).isNull();
        }
    }

    @Test
    void ipv6IsOffInsideAndOnTheBridge() throws Exception {
        BridgeNetwork net = network(CONFIG);
        StandInSandbox a = sandbox();
        net.attach("sbx-a", a.pid());
        assertThat(a.ip("-6", "addr", "show", "dev", "eth0")).doesNotContain("inet6");
        assertThat(a.ip("-6", "route", "show")).doesNotContain("eth0");
        assertThat(Files.readString(Path.of("/proc/sys/net/ipv6/conf", BRIDGE, "disable_ipv6")).strip()).isEqualTo("1");
        assertThat(sh("nft", "list", "table", "inet", EgressRules.table(BRIDGE))).contains("meta nfproto != ipv4 drop");
    }

    @Test
    void detachRemovesTheVethAndTheAddressIsReused() throws Exception {
        BridgeNetwork net = network(CONFIG);
        StandInSandbox a = sandbox();
        Attachment att = net.attach("sbx-a", a.pid());
        assertThat(Path.of("/sys/class/net", att.hostInterface())).exists();
        assertThat(a.ip("-o", "-4", "addr", "show", "dev", "eth0")).contains(att.address().getHostAddress() + "/22");
        assertThat(sh("ip", "neigh", "show", "dev", BRIDGE)).contains(att.address().getHostAddress());

        net.detach(att);
        assertThat(Path.of("/sys/class/net", att.hostInterface())).doesNotExist();
        assertThat(a.ip("-o", "link", "show")).doesNotContain("eth0");
        assertThat(sh("ip", "neigh", "show", "dev", BRIDGE)).doesNotContain(att.address().getHostAddress() + " ");
        net.detach(att); // again: nothing to do

        StandInSandbox b = sandbox();
        Attachment again = net.attach("sbx-b", b.pid());
        assertThat(again.address()).isEqualTo(att.address());
        assertThat(Probe.connect(b.ns(), FarHosts.INTERNET, FarHosts.PORT).connected()).isTrue();
    }

    @Test
    void closeRemovesBridgeVethsAndTable() throws Exception {
        BridgeNetwork net = network(CONFIG);
        StandInSandbox a = sandbox();
        Attachment att = net.attach("sbx-a", a.pid());
        assertThat(sh("nft", "list", "tables")).contains("inet " + EgressRules.table(BRIDGE));

        net.close();
        assertThat(Path.of("/sys/class/net", BRIDGE)).doesNotExist();
        assertThat(Path.of("/sys/class/net", att.hostInterface())).doesNotExist();
        assertThat(sh("nft", "list", "tables")).doesNotContain(EgressRules.table(BRIDGE));
        assertThatThrownBy(() -> net.attach("sbx-b", a.pid()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        net.close(); // again: nothing to do
    }

    @Test
    void aNewNetworkOnTheSameBridgeRemovesWhatAnEarlierWorkerLeft() throws Exception {
        BridgeNetwork crashed = new BridgeNetwork(CONFIG); // never closed: stands for a worker that died
        StandInSandbox a = sandbox();
        Attachment old = crashed.attach("sbx-a", a.pid());
        sh("ip", "link", "add", BRIDGE + "-3ff", "type", "veth", "peer", "name", "abxtpeer");
        // a rule someone added to our table by hand must go with it
        sh("nft", "add", "rule", "inet", EgressRules.table(BRIDGE), "forward", "counter");

        BridgeNetwork net = network(CONFIG);
        assertThat(Path.of("/sys/class/net", old.hostInterface())).doesNotExist();
        assertThat(Path.of("/sys/class/net", BRIDGE + "-3ff")).doesNotExist();
        assertThat(a.ip("-o", "link", "show")).doesNotContain("eth0");
        String table = sh("nft", "list", "table", "inet", EgressRules.table(BRIDGE));
        assertThat(table).doesNotContain("counter");
        assertThat(sh("nft", "list", "tables").split("\n")).filteredOn(l -> l.contains(EgressRules.table(BRIDGE))).hasSize(1);

        Attachment att = net.attach("sbx-a", a.pid());
        assertThat(att.address()).isEqualTo(old.address());
        assertThat(Probe.connect(a.ns(), FarHosts.INTERNET, FarHosts.PORT).connected()).isTrue();
    }

    @Test
    void theSubnetOverlapsNoRouteOfTheHost() throws Exception {
        try {
            sh("ip", "route", "add", "blackhole", "10.219.0.0/23", "table", Integer.toString(TestNet.BUSY_TABLE));
            sh("ip", "route", "add", "blackhole", "10.219.5.128/25", "table", Integer.toString(TestNet.BUSY_TABLE));
            BridgeNetwork net = network(CONFIG);
            assertThat(net.subnet()).hasToString("10.219.8.0/22");
            assertThat(net.gateway().getHostAddress()).isEqualTo("10.219.8.1");
            assertThat(sh("ip", "-4", "-o", "addr", "show", "dev", BRIDGE)).contains("10.219.8.1/22");
            net.close();

            assertThatThrownBy(() -> new BridgeNetwork(CONFIG.withPool(Ipv4Cidr.parse("10.219.0.0/21"), 22)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no free /22 for bridge abxt0 in address pool 10.219.0.0/21")
                    .hasMessageContaining("10.219.0.0/22 overlaps route 10.219.0.0/23")
                    .hasMessageContaining("10.219.4.0/22 overlaps route 10.219.5.128/25");
            assertThat(Path.of("/sys/class/net", BRIDGE)).doesNotExist();
            assertThat(sh("nft", "list", "tables")).doesNotContain(EgressRules.table(BRIDGE));
        } finally {
            TestNet.quietly("ip", "route", "flush", "table", Integer.toString(TestNet.BUSY_TABLE));
        }
    }

    @Test
    void aFullSubnetAnswersResourceExhaustedUntilAnAddressIsFreed() throws Exception {
        BridgeNetwork net = network(CONFIG.withPool(Ipv4Cidr.parse("10.219.0.0/16"), 29));
        assertThat(net.capacity()).isEqualTo(5);
        List<Attachment> atts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            atts.add(net.attach("sbx-" + i, sandbox().pid()));
        }
        StandInSandbox sixth = sandbox();
        assertThatThrownBy(() -> net.attach("sbx-6", sixth.pid()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    // the first free /29 of the pool: another worker's bridge on this host may hold lower ones
                    assertThat(e.getStatus().getDescription()).contains("all 5 of " + net.subnet() + " are in use");
                });
        assertThat(sixth.ip("-o", "link", "show")).doesNotContain("eth0");
        net.detach(atts.get(2));
        assertThat(net.attach("sbx-6", sixth.pid()).address()).isEqualTo(atts.get(2).address());
    }

    @Test
    void aFailedAttachSaysWhichStepFailedAndLeavesNothingBehind() throws Exception {
        BridgeNetwork net = network(CONFIG);
        // the host side fails: the namespace already has an eth0
        StandInSandbox taken = sandbox();
        taken.ip("link", "add", "eth0", "type", "veth", "peer", "name", "eth0p"); // this kernel has no dummy driver
        assertThatThrownBy(() -> net.attach("sbx-taken", taken.pid()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("sbx-taken").contains("creating veth abxt0-2");
                });
        assertNoVeths();

        // the sandbox side fails: a default route is already there
        StandInSandbox routed = sandbox();
        routed.ip("link", "add", "up0", "type", "veth", "peer", "name", "up1");
        routed.ip("link", "set", "up0", "up");
        routed.ip("route", "add", "default", "dev", "up0");
        assertThatThrownBy(() -> net.attach("sbx-routed", routed.pid()))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    assertThat(e.getStatus().getDescription()).contains("configuring eth0 inside the namespace failed");
                });
        assertNoVeths();
        assertThat(routed.ip("-o", "link", "show")).doesNotContain("eth0");
        assertThat(sh("ip", "neigh", "show", "dev", BRIDGE)).doesNotContain("PERMANENT");

        // the worker's own namespace is refused before anything is made
        assertThatThrownBy(() -> net.attach("sbx-host", ProcessHandle.current().pid()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        // a process that is gone
        StandInSandbox gone = new StandInSandbox();
        gone.close();
        assertThatThrownBy(() -> net.attach("sbx-gone", gone.pid()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        assertNoVeths();

        // the failures freed their addresses: the next good sandbox gets the first one
        StandInSandbox good = sandbox();
        assertThat(net.attach("sbx-good", good.pid()).address()).isEqualTo(net.subnet().address(2));
    }

    private static void assertNoVeths() throws Exception {
        try (var names = Files.list(Path.of("/sys/class/net"))) {
            assertThat(names.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(BRIDGE + "-"));
        }
    }

    /** An IPv4 address of the host's default-route interface (its "primary" address). */
    private static InetAddress primaryHostAddress() throws Exception {
        String dev = HostNetworkState.read(NetCommands.locate()).defaultRouteDevice();
        assertThat(dev).as("the host has a default route").isNotNull();
        return NetworkInterface.getByName(dev).inetAddresses().filter(a -> a instanceof Inet4Address).findFirst()
                .orElseThrow(() -> new AssertionError(dev + " has no IPv4 address"));
    }

    private static List<Probe.Outcome> inParallel(List<Callable<Probe.Outcome>> probes) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(probes.size());
        try {
            List<Probe.Outcome> out = new ArrayList<>();
            for (Future<Probe.Outcome> f : pool.invokeAll(probes)) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
