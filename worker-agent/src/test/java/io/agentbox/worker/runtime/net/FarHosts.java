package io.agentbox.worker.runtime.net;

import static io.agentbox.worker.runtime.net.TestNet.sh;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;

/**
 * Stand-ins for everything outside the host, all inside one network namespace {@code abxt-far}
 * that the test makes, so no packet of the tests ever leaves this machine:
 * <ul>
 *   <li>a LAN: the veth {@code abxtfar0} with 198.18.7.1/24 on the host, 198.18.7.2 on the far side
 *       (made before any bridge, so the bridge sees it as one of the host's subnets);</li>
 *   <li>an "internet" host 198.51.100.1 (TEST-NET-2), and private / link-local hosts 10.77.0.10,
 *       192.168.77.10, 169.254.169.254 and a "DNS server" 10.77.0.53, all on the far side's
 *       loopback.</li>
 * </ul>
 * The host reaches those five only from the test bridges: their routes are in table
 * {@link TestNet#TABLE}, used for packets coming in on a test bridge, so the host's own traffic
 * (its real metadata service included) is never redirected. One listener on port
 * {@link #PORT} and one on 53 answer on every far address with the source address they saw.
 */
final class FarHosts implements AutoCloseable {
    static final int PORT = 8077;
    static final InetAddress HOST_ON_LAN = addr("198.18.7.1");
    static final InetAddress LAN_NEIGHBOUR = addr("198.18.7.2");
    static final InetAddress INTERNET = addr("198.51.100.1");
    static final InetAddress PRIVATE_10 = addr("10.77.0.10");
    static final InetAddress PRIVATE_192 = addr("192.168.77.10");
    static final InetAddress METADATA = addr("169.254.169.254");
    static final InetAddress DNS = addr("10.77.0.53");
    private static final List<InetAddress> ROUTED = List.of(INTERNET, PRIVATE_10, PRIVATE_192, METADATA, DNS);

    private final Probe.Listener web;
    private final Probe.Listener dns;

    FarHosts() throws Exception {
        sh("ip", "netns", "add", "abxt-far");
        try {
            sh("ip", "link", "add", "abxtfar0", "type", "veth", "peer", "name", "eth0", "netns", "abxt-far");
            sh("ip", "addr", "add", "198.18.7.1/24", "dev", "abxtfar0");
            sh("ip", "link", "set", "abxtfar0", "up");
            sh("ip", "-n", "abxt-far", "link", "set", "lo", "up");
            sh("ip", "-n", "abxt-far", "addr", "add", "198.18.7.2/24", "dev", "eth0");
            sh("ip", "-n", "abxt-far", "link", "set", "eth0", "up");
            sh("ip", "-n", "abxt-far", "route", "add", "default", "via", "198.18.7.1");
            for (InetAddress a : ROUTED) {
                sh("ip", "-n", "abxt-far", "addr", "add", a.getHostAddress() + "/32", "dev", "lo");
                sh("ip", "route", "add", a.getHostAddress() + "/32", "via", "198.18.7.2", "table", Integer.toString(TestNet.TABLE));
            }
            Path ns = Path.of("/run/netns/abxt-far");
            web = Probe.Listener.open(ns, addr("0.0.0.0"), PORT);
            dns = Probe.Listener.open(ns, addr("0.0.0.0"), 53);
        } catch (Exception | AssertionError e) {
            close();
            throw e;
        }
    }

    /** Sends what comes in on {@code bridge} to the far hosts (policy routing, nothing else changes). */
    static void routeFrom(String bridge) {
        sh("ip", "rule", "add", "iif", bridge, "lookup", Integer.toString(TestNet.TABLE), "priority", Integer.toString(TestNet.TABLE));
    }

    static void unrouteFrom(String bridge) {
        TestNet.quietly("ip", "rule", "del", "iif", bridge, "lookup", Integer.toString(TestNet.TABLE),
                "priority", Integer.toString(TestNet.TABLE));
    }

    @Override
    public void close() throws Exception {
        if (web != null) {
            web.close();
        }
        if (dns != null) {
            dns.close();
        }
        TestNet.quietly("ip", "netns", "delete", "abxt-far");
        TestNet.quietly("ip", "link", "del", "abxtfar0");
        TestNet.quietly("ip", "route", "flush", "table", Integer.toString(TestNet.TABLE));
    }

    static InetAddress addr(String dotted) {
        try {
            return InetAddress.getByName(dotted);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
