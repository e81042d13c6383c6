package io.agentbox.worker.runtime.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parts of the bridge network that need no kernel: prefixes, address slots, nameservers, subnet choice, rules text. */
class NetPartsTest {

    private static Inet4Address ip(String s) throws Exception {
        return (Inet4Address) InetAddress.getByName(s);
    }

    @Test
    void prefixesParseNormaliseAndCompare() throws Exception {
        Ipv4Cidr c = Ipv4Cidr.parse("10.213.5.7/22");
        assertThat(c).hasToString("10.213.4.0/22");
        assertThat(c.size()).isEqualTo(1024);
        assertThat(c.contains(ip("10.213.7.255"))).isTrue();
        assertThat(c.contains(ip("10.213.8.0"))).isFalse();
        assertThat(c.address(1).getHostAddress()).isEqualTo("10.213.4.1");
        assertThat(c.overlaps(Ipv4Cidr.parse("10.213.0.0/16"))).isTrue();
        assertThat(c.overlaps(Ipv4Cidr.parse("10.213.6.128/25"))).isTrue();
        assertThat(c.overlaps(Ipv4Cidr.parse("10.213.8.0/22"))).isFalse();
        assertThat(Ipv4Cidr.parse("198.51.100.1")).hasToString("198.51.100.1/32");
        assertThat(Ipv4Cidr.parse("255.255.255.255/0")).hasToString("0.0.0.0/0");
        assertThat(Ipv4Cidr.parse("240.0.0.0/4").contains(ip("255.255.255.255"))).isTrue();
        for (String bad : new String[] {"10.0.0/8", "10.0.0.256/8", "10.0.0.0/33", "10.0.0.0/x", "a.b.c.d", "10.0.0.0/-1", "1.2.3.4.5"}) {
            assertThatThrownBy(() -> Ipv4Cidr.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(bad);
        }
    }

    @Test
    void addressSlotsSkipNetworkGatewayAndBroadcastAndReuseTheLowestFreed() {
        AddressPool pool = new AddressPool(Ipv4Cidr.parse("10.213.0.0/29"));
        assertThat(pool.gateway().getHostAddress()).isEqualTo("10.213.0.1");
        assertThat(pool.capacity()).isEqualTo(5);
        List<Integer> slots = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            slots.add(pool.allocate().orElseThrow());
        }
        assertThat(slots).containsExactly(2, 3, 4, 5, 6);
        assertThat(pool.address(6).getHostAddress()).isEqualTo("10.213.0.6");
        assertThat(pool.allocate()).isEmpty();
        pool.free(4);
        pool.free(3);
        assertThat(pool.allocate()).hasValue(3);
        assertThat(pool.inUse()).isEqualTo(4);
        assertThat(new AddressPool(Ipv4Cidr.parse("10.213.0.0/22")).capacity())
                .isEqualTo(1021).isLessThan(BridgeConfig.BRIDGE_MAX_PORTS);
    }

    @Test
    void configRefusesNamesAndSizesThatCannotWork() {
        BridgeConfig d = BridgeConfig.defaults();
        assertThat(d.bridge()).isEqualTo("abx0");
        assertThat(d.pool()).hasToString("10.213.0.0/16");
        assertThatThrownBy(() -> d.withBridge("a-b")).hasMessageContaining("'a-b'");
        assertThatThrownBy(() -> d.withBridge("abcdefghijk")).hasMessageContaining("1-10");
        assertThatThrownBy(() -> d.withPool(Ipv4Cidr.parse("10.0.0.0/8"), 21)).hasMessageContaining("/21");
        assertThatThrownBy(() -> d.withPool(Ipv4Cidr.parse("10.0.0.0/24"), 22)).hasMessageContaining("smaller than one /22");
        // the longest host veth name fits the kernel's 15 characters
        assertThat(d.withBridge("abcdefghij").vethPrefix() + Integer.toHexString(1021)).hasSizeLessThanOrEqualTo(15);
    }

    @Test
    void nameserversSkipLoopbackAndFallBackToTheSystemdUpstreamList(@TempDir Path dir) throws Exception {
        Path resolv = dir.resolve("resolv.conf");
        Path upstream = dir.resolve("upstream.conf");
        Files.writeString(resolv, "# comment\nsearch example.org\nnameserver 127.0.0.53\noptions edns0\n");
        assertThat(Nameservers.ofHost(resolv, upstream)).isEmpty();
        Files.writeString(upstream, "nameserver 203.0.113.53\nnameserver 2001:db8::53\nnameserver 10.1.1.1\n");
        assertThat(Nameservers.ofHost(resolv, upstream)).containsExactly(ip("203.0.113.53"), ip("10.1.1.1"));

        Files.writeString(resolv, "nameserver 10.255.255.53\nnameserver 127.0.0.1\n nameserver  192.0.2.53 \n"
                + "nameserver 192.0.2.54\nnameserver 192.0.2.55\nnameserver 10.255.255.53\n");
        assertThat(Nameservers.ofHost(resolv, upstream)).containsExactly(ip("10.255.255.53"), ip("192.0.2.53"), ip("192.0.2.54"));
        assertThat(Nameservers.ofHost(dir.resolve("missing"), upstream)).isEmpty();
    }

    @Test
    void theSubnetIsTheFirstBlockCollidingWithNothing() throws Exception {
        BridgeConfig config = BridgeConfig.defaults().withPool(Ipv4Cidr.parse("10.213.0.0/20"), 22);
        HostNetworkState host = new HostNetworkState(Map.of("eth0", 1400),
                List.of(new HostNetworkState.Prefix(Ipv4Cidr.parse("10.213.1.0/24"), "wg0"),
                        new HostNetworkState.Prefix(Ipv4Cidr.parse("10.0.0.0/9"), null)),
                List.of(new HostNetworkState.Prefix(Ipv4Cidr.parse("10.213.4.0/23"), "eth1")), "eth0");
        // 10.0.0.0/9 does not reach 10.213; .0/22 has a route, .4/22 an address, .8/22 holds the nameserver
        assertThat(SubnetChoice.choose(config, host, List.of(ip("10.213.9.9")))).hasToString("10.213.12.0/22");
        assertThat(host.uplinkMtu()).isEqualTo(1400);
        assertThatThrownBy(() -> SubnetChoice.choose(config, host, List.of(ip("10.213.9.9"), ip("10.213.13.1"))))
                .hasMessageContaining("no free /22 for bridge abx0 in address pool 10.213.0.0/20")
                .hasMessageContaining("10.213.0.0/22 overlaps route 10.213.1.0/24 dev wg0")
                .hasMessageContaining("10.213.4.0/22 overlaps address subnet 10.213.4.0/23 of eth1")
                .hasMessageContaining("10.213.8.0/22 overlaps nameserver 10.213.9.9");
    }

    @Test
    void rulesBlockEveryListedRangeAndTheHostSubnetsButLetDnsThrough() throws Exception {
        String s = EgressRules.script("abx0", Ipv4Cidr.parse("10.213.0.0/22"),
                List.of(Ipv4Cidr.parse("192.0.2.0/24"), Ipv4Cidr.parse("10.9.0.0/16")), List.of(ip("10.255.255.53")));
        for (Ipv4Cidr c : EgressRules.BLOCKED) {
            assertThat(s).contains(c.toString());
        }
        assertThat(s).contains("192.0.2.0/24").doesNotContain("10.9.0.0/16"); // inside 10/8 already
        assertThat(s).contains("table inet agentbox_abx0 {").contains("elements = { 10.255.255.53 }")
                .contains("ip saddr 10.213.0.0/22 oifname != \"abx0\" masquerade")
                .contains("iifname \"abx0\" drop")
                .contains("meta nfproto != ipv4 drop");
        // the DNS exception comes before the blocked ranges
        assertThat(s.indexOf("ip daddr @dns")).isLessThan(s.indexOf("ip daddr @blocked drop"));
        assertThat(EgressRules.script("abx0", Ipv4Cidr.parse("10.213.0.0/22"), List.of(), List.of()))
                .contains("set dns {\n    type ipv4_addr\n  }");
    }
}
