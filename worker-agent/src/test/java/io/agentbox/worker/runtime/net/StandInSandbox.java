package io.agentbox.worker.runtime.net;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A process in a network namespace of its own holding only loopback, as a sandbox's init would be:
 * {@code unshare --net sleep infinity} (util-linux).
 */
final class StandInSandbox implements AutoCloseable {
    private final Process process;

    StandInSandbox() throws Exception {
        if (!Files.isExecutable(Path.of("/usr/bin/unshare"))) {
            throw new AssertionError("the network tests need /usr/bin/unshare: install the 'util-linux' package");
        }
        process = new ProcessBuilder("/usr/bin/unshare", "--net", "/bin/sleep", "infinity")
                .redirectErrorStream(true).start();
        // unshare(2) happens before exec: wait until the process runs sleep, then its namespace is the new one
        Path ownNs = Files.readSymbolicLink(Path.of("/proc/self/ns/net"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            if (!process.isAlive()) {
                throw new AssertionError("unshare --net sleep infinity exited with " + process.exitValue() + ": "
                        + new String(process.getInputStream().readAllBytes()));
            }
            try {
                String comm = Files.readString(Path.of("/proc", Long.toString(process.pid()), "comm")).strip();
                if (comm.equals("sleep") && !Files.readSymbolicLink(ns()).equals(ownNs)) {
                    break;
                }
            } catch (java.io.IOException e) {
                // racing with exec: try again
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("unshare --net did not start within 10 s");
            }
            Thread.sleep(2);
        }
    }

    long pid() {
        return process.pid();
    }

    /** The namespace file of its network namespace. */
    Path ns() {
        return Netns.of(process.pid());
    }

    /** Runs {@code ip ARGS} inside the namespace; fails the test when it fails. */
    String ip(String... args) {
        return TestNet.sh(java.util.stream.Stream.concat(
                java.util.stream.Stream.of("nsenter", "--net=" + ns(), "ip"), java.util.Arrays.stream(args))
                .toArray(String[]::new));
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
