package io.agentbox.worker.runtime.net;

import java.net.Inet4Address;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The nftables table of one bridge (written as an {@code nft -f} script, applied atomically).
 * The table is ours alone ({@code inet agentbox_<bridge>}); no other table is read or touched.
 * nftables drops are final whatever other tables say, so the table only needs drop rules and its
 * chains default to accept; an accept in another table cannot open what this one drops.
 *
 * <ul>
 *   <li>input (packets for the host itself, any of its addresses, loopback included, the
 *       gateway too): from the bridge only replies of connections the host opened (the worker
 *       reaching sandbox ports) and DNS to a listed server that is a host address.</li>
 *   <li>forward from the bridge: IPv4 only, source inside the subnet (no spoofing), never to the
 *       subnet itself (sandbox to sandbox through the gateway), DNS to the listed servers, never
 *       to {@link #BLOCKED} nor to the host's own subnets (its LAN).</li>
 *   <li>forward to the bridge: replies only; nobody outside opens connections to sandboxes.</li>
 *   <li>postrouting: masquerade of the subnet on every other interface.</li>
 * </ul>
 */
final class EgressRules {

    /**
     * Destinations no sandbox reaches, whatever the host's routes say (IANA special-purpose
     * registry, RFC 6890): 0/8 "this network", 10/8, 172.16/12 and 192.168/16 private (RFC 1918),
     * 100.64/10 carrier-grade NAT (RFC 6598, also used by overlay VPNs), 127/8 loopback,
     * 169.254/16 link-local (cloud metadata services such as 169.254.169.254 live there),
     * 224/4 multicast, 240/4 reserved and the limited broadcast 255.255.255.255.
     */
    static final List<Ipv4Cidr> BLOCKED = List.of(
            Ipv4Cidr.parse("0.0.0.0/8"),
            Ipv4Cidr.parse("10.0.0.0/8"),
            Ipv4Cidr.parse("100.64.0.0/10"),
            Ipv4Cidr.parse("127.0.0.0/8"),
            Ipv4Cidr.parse("169.254.0.0/16"),
            Ipv4Cidr.parse("172.16.0.0/12"),
            Ipv4Cidr.parse("192.168.0.0/16"),
            Ipv4Cidr.parse("224.0.0.0/4"),
            Ipv4Cidr.parse("240.0.0.0/4"));

    private EgressRules() {
    }

    /** Name of the bridge's table in the inet family. */
    static String table(String bridge) {
        return "agentbox_" + bridge;
    }

    /** A script that removes the table when it exists and does nothing otherwise. */
    static String deleteScript(String bridge) {
        // nft 1.0.6 (Debian 12) has no "destroy": declaring the table first makes the delete always valid
        return "table inet " + table(bridge) + "\ndelete table inet " + table(bridge) + "\n";
    }

    /**
     * The whole table, replacing any earlier one in the same transaction.
     *
     * @param lan the host's own subnets, dropped like {@link #BLOCKED}
     * @param dns servers sandboxes may reach on port 53 (TCP and UDP) even inside a blocked range
     */
    static String script(String bridge, Ipv4Cidr subnet, Collection<Ipv4Cidr> lan, Collection<Inet4Address> dns) {
        String br = '"' + bridge + '"';
        List<Ipv4Cidr> blocked = new ArrayList<>(BLOCKED);
        for (Ipv4Cidr c : lan) {
            if (!c.overlaps(subnet) && blocked.stream().noneMatch(b -> b.prefixLength() <= c.prefixLength() && b.overlaps(c))) {
                blocked.add(c);
            }
        }
        StringBuilder s = new StringBuilder(deleteScript(bridge));
        s.append("table inet ").append(table(bridge)).append(" {\n");
        s.append("  set blocked {\n    type ipv4_addr\n    flags interval\n    auto-merge\n    elements = { ")
                .append(blocked.stream().map(Ipv4Cidr::toString).collect(Collectors.joining(", "))).append(" }\n  }\n");
        s.append("  set dns {\n    type ipv4_addr\n");
        if (!dns.isEmpty()) {
            s.append("    elements = { ").append(dns.stream().map(Inet4Address::getHostAddress).collect(Collectors.joining(", ")))
                    .append(" }\n");
        }
        s.append("  }\n");
        s.append("  chain input {\n    type filter hook input priority filter; policy accept;\n")
                .append("    iifname ").append(br).append(" ct state established,related accept\n")
                .append("    iifname ").append(br).append(" ip daddr @dns meta l4proto { tcp, udp } th dport 53 accept\n")
                .append("    iifname ").append(br).append(" drop\n  }\n");
        s.append("  chain forward {\n    type filter hook forward priority filter; policy accept;\n")
                .append("    iifname ").append(br).append(" jump from_sandbox\n")
                .append("    oifname ").append(br).append(" ct state established,related accept\n")
                .append("    oifname ").append(br).append(" drop\n  }\n");
        s.append("  chain from_sandbox {\n")
                .append("    meta nfproto != ipv4 drop\n")
                .append("    ip saddr != ").append(subnet).append(" drop\n")
                .append("    ip daddr ").append(subnet).append(" drop\n")
                .append("    ip daddr @dns meta l4proto { tcp, udp } th dport 53 accept\n")
                .append("    ip daddr @blocked drop\n  }\n");
        s.append("  chain postrouting {\n    type nat hook postrouting priority srcnat; policy accept;\n")
                .append("    ip saddr ").append(subnet).append(" oifname != ").append(br).append(" masquerade\n  }\n");
        s.append("}\n");
        return s.toString();
    }
}
