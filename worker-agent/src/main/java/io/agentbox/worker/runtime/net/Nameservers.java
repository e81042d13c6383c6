package io.agentbox.worker.runtime.net;

import java.io.IOException;
import java.net.Inet4Address;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Which DNS servers a sandbox is given. We run no forwarder: a sandbox asks the host's upstream
 * servers directly, through the same NAT as the rest of its traffic. Loopback resolvers (such as
 * systemd-resolved's 127.0.0.53) are unreachable from a sandbox by design, so when
 * {@code /etc/resolv.conf} lists only those, the upstream list systemd-resolved keeps in
 * {@code /run/systemd/resolve/resolv.conf} is used. IPv6 servers are left out (sandboxes have no
 * IPv6). At most {@link #MAX} servers, as the C library reads no more.
 */
final class Nameservers {
    static final int MAX = 3;
    static final Path RESOLV_CONF = Path.of("/etc/resolv.conf");
    static final Path SYSTEMD_UPSTREAM = Path.of("/run/systemd/resolve/resolv.conf");
    /** Longest resolv.conf read; the real ones are a few hundred bytes. */
    private static final int FILE_LIMIT = 64 << 10;

    private Nameservers() {
    }

    /** The host's servers as described above; empty when there is none a sandbox could use. */
    static List<Inet4Address> ofHost(Path resolvConf, Path systemdUpstream) {
        List<Inet4Address> listed = parse(read(resolvConf));
        List<Inet4Address> usable = withoutLoopback(listed);
        if (usable.isEmpty() && !listed.isEmpty() && Files.isRegularFile(systemdUpstream)) {
            usable = withoutLoopback(parse(read(systemdUpstream)));
        }
        return usable.size() > MAX ? List.copyOf(usable.subList(0, MAX)) : usable;
    }

    /** IPv4 {@code nameserver} lines of resolv.conf text, in order; other lines are ignored. */
    static List<Inet4Address> parse(String text) {
        List<Inet4Address> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] words = line.strip().split("\\s+");
            if (words.length >= 2 && words[0].equals("nameserver")) {
                try {
                    Inet4Address addr = Ipv4Cidr.toAddress(Ipv4Cidr.parseAddress(words[1], words[1]));
                    if (!out.contains(addr)) {
                        out.add(addr);
                    }
                } catch (IllegalArgumentException e) {
                    // an IPv6 server or garbage: not for a sandbox
                }
            }
        }
        return out;
    }

    private static List<Inet4Address> withoutLoopback(List<Inet4Address> servers) {
        return servers.stream().filter(a -> !a.isLoopbackAddress() && !a.isAnyLocalAddress()).toList();
    }

    private static String read(Path file) {
        try (var in = Files.newInputStream(file)) {
            return new String(in.readNBytes(FILE_LIMIT), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
