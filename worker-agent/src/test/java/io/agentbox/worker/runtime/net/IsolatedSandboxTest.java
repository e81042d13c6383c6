package io.agentbox.worker.runtime.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.agentbox.worker.runtime.local.LocalRuntime;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real crun sandboxes of the local runtime on a real {@link BridgeNetwork}: network
 * {@code isolated} reaches the "internet" (a TEST-NET host of {@link FarHosts}) through NAT but
 * nothing of the host, and the worker reaches the sandbox's ports; {@code none} has no way out.
 * Probes run inside the sandbox with the runtime's own busybox ({@code nc}).
 */
class IsolatedSandboxTest {
    private static final String BRIDGE = "abxtrt";
    private static final String NC = "/.agentbox/bin/busybox";
    private static FarHosts far;
    private static Path dataDir;
    private static LocalRuntime runtime;

    @BeforeAll
    static void start() throws Exception {
        TestNet.requirePrograms();
        TestNet.sweep();
        far = new FarHosts();
        FarHosts.routeFrom(BRIDGE);
        dataDir = Files.createTempDirectory("agentbox-isolated-test");
        BridgeConfig config = BridgeConfig.defaults().withBridge(BRIDGE).withNameservers(List.of((Inet4Address) FarHosts.DNS));
        runtime = new LocalRuntime(dataDir, List.of(), null, new BridgeNetwork(config));
    }

    @AfterAll
    static void stop() throws Exception {
        if (runtime != null) {
            runtime.close();
        }
        FarHosts.unrouteFrom(BRIDGE);
        if (far != null) {
            far.close();
        }
        TestNet.sweep();
        if (dataDir != null) {
            io.agentbox.worker.image.unpack.Trees.deleteRecursively(dataDir);
        }
    }

    private static RuntimeSandbox sandbox(String id, String network) {
        return runtime.start(id, Template.newBuilder().setName("base").setNetwork(network).build());
    }

    /** Runs {@code script} with the sandbox's busybox sh; returns exit code and output. */
    private static String[] run(RuntimeSandbox s, String script) throws Exception {
        LaunchedProcess p = s.launch(new LaunchSpec(NC, List.of("sh", "-c", script), Map.of(), "/", false));
        String out = new String(p.stdout().readAllBytes(), StandardCharsets.UTF_8)
                + new String(p.stderr().readAllBytes(), StandardCharsets.UTF_8);
        return new String[] {Integer.toString(p.waitFor()), out};
    }

    private static String connect(RuntimeSandbox s, InetAddress address, int port) throws Exception {
        String[] r = run(s, NC + " nc -w 3 " + address.getHostAddress() + " " + port + " </dev/null");
        return r[0] + ":" + r[1].strip();
    }

    @Test
    void isolatedReachesTheInternetThroughNatButNothingOfTheHost() throws Exception {
        RuntimeSandbox s = sandbox("isolated-net-a", "isolated");
        try (Probe.Listener onHost = Probe.Listener.open(null, InetAddress.getByName("0.0.0.0"), 0)) {
            // the far host answers with the address it saw: the host's, not the sandbox's
            assertThat(connect(s, FarHosts.INTERNET, FarHosts.PORT)).isEqualTo("0:peer=" + FarHosts.HOST_ON_LAN.getHostAddress());
            String resolv = run(s, "cat /etc/resolv.conf")[1];
            assertThat(resolv).contains("nameserver " + FarHosts.DNS.getHostAddress());
            String gateway = gateway(s);
            // each of these answers from the host itself, never from the sandbox
            assertThat(Probe.connect(null, InetAddress.getByName(gateway), onHost.port()).connected()).isTrue();
            for (InetAddress blocked : List.of(InetAddress.getByName(gateway), FarHosts.HOST_ON_LAN, FarHosts.METADATA,
                    FarHosts.PRIVATE_10, FarHosts.PRIVATE_192)) {
                int port = blocked.equals(FarHosts.HOST_ON_LAN) || blocked.getHostAddress().equals(gateway) ? onHost.port()
                        : FarHosts.PORT;
                assertThat(connect(s, blocked, port)).as("connect to " + blocked).doesNotStartWith("0:");
            }
        } finally {
            s.kill();
        }
    }

    @Test
    void theWorkerReachesAPortInsideAnIsolatedSandbox() throws Exception {
        RuntimeSandbox s = sandbox("isolated-net-b", "isolated");
        try {
            String address = address(s);
            LaunchedProcess server = s.launch(new LaunchSpec(NC, List.of("sh", "-c", "echo hello-from-sandbox | " + NC
                    + " nc -l -p 9000"), Map.of(), "/", false));
            String got = null;
            for (int i = 0; i < 50 && got == null; i++) {
                try (Socket c = new Socket()) {
                    c.connect(new InetSocketAddress(address, 9000), 1000);
                    got = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
                } catch (IOException notYet) {
                    Thread.sleep(100);
                }
            }
            assertThat(got).isEqualTo("hello-from-sandbox");
            server.signalGroup(9);
        } finally {
            s.kill();
        }
    }

    @Test
    void noneHasOnlyLoopbackAndNoWayOut() throws Exception {
        RuntimeSandbox s = sandbox("none-net-c", "none");
        try {
            assertThat(run(s, "ls /sys/class/net")[1].split("\\s+")).containsExactly("lo");
            assertThat(connect(s, FarHosts.INTERNET, FarHosts.PORT)).doesNotStartWith("0:");
        } finally {
            s.kill();
        }
    }

    private static String address(RuntimeSandbox s) throws Exception {
        Matcher m = Pattern.compile("inet (\\d+\\.\\d+\\.\\d+\\.\\d+)/").matcher(run(s, NC + " ip -4 addr show eth0")[1]);
        assertThat(m.find()).as("eth0 has an address").isTrue();
        return m.group(1);
    }

    private static String gateway(RuntimeSandbox s) throws Exception {
        Matcher m = Pattern.compile("default via (\\S+)").matcher(run(s, NC + " ip route")[1]);
        assertThat(m.find()).as("a default route").isTrue();
        return m.group(1);
    }
}
