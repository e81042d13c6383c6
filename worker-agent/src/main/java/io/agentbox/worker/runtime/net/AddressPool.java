package io.agentbox.worker.runtime.net;

import java.net.Inet4Address;
import java.util.BitSet;
import java.util.OptionalInt;

/**
 * In-memory address management of one sandbox subnet: offset 1 is the gateway, offsets
 * 2..size-2 go to sandboxes (lowest free first, so a freed address is the next one handed out),
 * the network and broadcast addresses are never used. Thread-safe.
 */
final class AddressPool {
    private final Ipv4Cidr subnet;
    private final int first;
    private final int last;
    private final BitSet used = new BitSet();

    /** @throws IllegalArgumentException when the subnet holds too few sandbox addresses (a prefix longer than /29) */
    AddressPool(Ipv4Cidr subnet) {
        if (subnet.prefixLength() > 29) {
            throw new IllegalArgumentException("subnet " + subnet + " is too small: /29 is the smallest (5 sandboxes)");
        }
        this.subnet = subnet;
        this.first = 2;
        this.last = (int) subnet.size() - 2;
    }

    Inet4Address gateway() {
        return subnet.address(1);
    }

    /** Number of sandbox addresses. */
    int capacity() {
        return last - first + 1;
    }

    /** The lowest free offset, now taken; empty when every address is in use. */
    synchronized OptionalInt allocate() {
        int slot = used.nextClearBit(first);
        if (slot > last) {
            return OptionalInt.empty();
        }
        used.set(slot);
        return OptionalInt.of(slot);
    }

    synchronized void free(int slot) {
        used.clear(slot);
    }

    synchronized int inUse() {
        return used.cardinality();
    }

    Inet4Address address(int slot) {
        return subnet.address(slot);
    }
}
