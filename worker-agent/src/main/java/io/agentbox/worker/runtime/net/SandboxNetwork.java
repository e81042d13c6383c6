package io.agentbox.worker.runtime.net;

import java.net.InetAddress;
import java.util.List;

/**
 * Connects sandboxes' network namespaces to the outside for the {@code isolated} network mode:
 * outbound traffic leaves through NAT, nothing of the host (any of its addresses, loopback
 * included) nor other sandboxes can be reached from inside, and the worker reaches the sandbox's
 * ports at {@link Attachment#address()}. Thread-safe.
 */
public interface SandboxNetwork extends AutoCloseable {

    /**
     * Connects the network namespace that process {@code nsPid} lives in (it must already have
     * its own, holding only loopback) and configures address, route and DNS reachability.
     *
     * @throws io.grpc.StatusRuntimeException UNAVAILABLE naming the step that failed (nothing is
     *     left behind on the host then); RESOURCE_EXHAUSTED when no address is free
     */
    Attachment attach(String sandboxId, long nsPid);

    /** Removes what {@link #attach} made on the host; idempotent. */
    void detach(Attachment attachment);

    /** Removes everything this network made on the host (bridge, rules, leftovers of attachments). */
    @Override
    void close();

    /**
     * One sandbox's connection.
     *
     * @param sandboxId the sandbox
     * @param hostInterface name of the host side of the link (at most 15 characters)
     * @param address the sandbox's address, reachable from the worker
     * @param nameservers what the sandbox's /etc/resolv.conf should list
     */
    record Attachment(String sandboxId, String hostInterface, InetAddress address,
                      List<InetAddress> nameservers) {
        public Attachment {
            nameservers = List.copyOf(nameservers);
        }
    }
}
