package io.agentbox.worker.runtime.net;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Host-level plumbing of the network tests. Every name the tests make starts with {@code abxt}
 * (bridges abxt0/abxt1, the netns abxt-far, its veth abxtfar0) and every policy-routing entry
 * uses table and priority {@link #TABLE}, so {@link #sweep} can remove all of it, leftovers of a
 * crashed earlier run included.
 */
final class TestNet {
    /** Routing table (and rule priority) for the routes to the fake far hosts. */
    static final int TABLE = 7713;
    /** Routing table for blackhole routes that occupy pool space. */
    static final int BUSY_TABLE = 7714;

    private TestNet() {
    }

    /** Runs a command; returns its stdout; fails the test with its output when it exits non-zero. */
    static String sh(String... command) {
        NetCommands.Result r = NetCommands.run(resolved(command), "");
        if (!r.ok()) {
            throw new AssertionError(String.join(" ", command) + " exited with " + r.exitCode() + ": " + r.message());
        }
        return r.stdout();
    }

    /** Runs a command whose failure does not matter (removing what may not exist). */
    static void quietly(String... command) {
        try {
            NetCommands.run(resolved(command), "");
        } catch (RuntimeException e) {
            // cleanup of something absent
        }
    }

    /** The command with its program looked up in the sbin and bin directories (the JVM's PATH may lack sbin). */
    static List<String> resolved(String... command) {
        List<String> out = new ArrayList<>(List.of(command));
        if (!out.get(0).contains("/")) {
            Stream.of("/usr/sbin", "/sbin", "/usr/bin", "/bin").map(d -> Path.of(d, command[0]))
                    .filter(Files::isExecutable).findFirst().ifPresent(p -> out.set(0, p.toString()));
        }
        return out;
    }

    /** Fails the test naming the Debian package when a program the tests drive is missing. */
    static void requirePrograms() {
        for (String[] p : new String[][] {{"ip", "iproute2"}, {"nft", "nftables"}, {"nsenter", "util-linux"}, {"unshare", "util-linux"}}) {
            boolean found = Stream.of("/usr/sbin", "/sbin", "/usr/bin", "/bin").anyMatch(d -> Files.isExecutable(Path.of(d, p[0])));
            if (!found) {
                throw new AssertionError("the network tests need '" + p[0] + "': install the '" + p[1] + "' package");
            }
        }
    }

    /** Removes every interface, namespace, table, rule and route the tests make. */
    static void sweep() throws Exception {
        quietly("ip", "netns", "delete", "abxt-far");
        List<String> links = new ArrayList<>();
        try (Stream<Path> names = Files.list(Path.of("/sys/class/net"))) {
            names.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("abxt")).forEach(links::add);
        }
        for (String l : links) {
            quietly("ip", "link", "del", l);
        }
        for (String t : new String[] {"abxt0", "abxt1", "abxb0"}) {
            NetCommands.run(resolved("nft", "-f", "-"), EgressRules.deleteScript(t));
        }
        for (int prio : new int[] {TABLE, BUSY_TABLE}) {
            for (int i = 0; i < 10; i++) {
                if (!NetCommands.run(resolved("ip", "rule", "del", "priority", Integer.toString(prio)), "").ok()) {
                    break;
                }
            }
            quietly("ip", "route", "flush", "table", Integer.toString(prio));
        }
    }
}
