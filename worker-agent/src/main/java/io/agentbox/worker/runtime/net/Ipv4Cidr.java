package io.agentbox.worker.runtime.net;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * An IPv4 prefix such as {@code 10.213.0.0/22}: {@code network} is the first address as an
 * unsigned 32-bit value held in an int, host bits always zero.
 */
public record Ipv4Cidr(int network, int prefixLength) {

    public Ipv4Cidr {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("IPv4 prefix length must be 0..32, got " + prefixLength);
        }
        network &= mask(prefixLength);
    }

    /**
     * Parses {@code a.b.c.d/n} or a bare {@code a.b.c.d} (a /32).
     *
     * @throws IllegalArgumentException naming the text when it is not that
     */
    public static Ipv4Cidr parse(String text) {
        int slash = text.indexOf('/');
        String addr = slash < 0 ? text : text.substring(0, slash);
        int prefix;
        try {
            prefix = slash < 0 ? 32 : Integer.parseInt(text.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not an IPv4 prefix: '" + text + "'");
        }
        if (prefix < 0 || prefix > 32) {
            throw new IllegalArgumentException("not an IPv4 prefix: '" + text + "' (length must be 0..32)");
        }
        return new Ipv4Cidr(parseAddress(addr, text), prefix);
    }

    /** The prefix of length {@code prefixLength} holding {@code address}. */
    public static Ipv4Cidr of(Inet4Address address, int prefixLength) {
        return new Ipv4Cidr(toInt(address), prefixLength);
    }

    /** Dotted-quad text only (no name lookup). */
    static int parseAddress(String dotted, String context) {
        String[] parts = dotted.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: '" + context + "'");
        }
        int value = 0;
        for (String part : parts) {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("not an IPv4 address: '" + context + "'");
            }
            int octet = Integer.parseInt(part);
            if (octet > 255) {
                throw new IllegalArgumentException("not an IPv4 address: '" + context + "'");
            }
            value = (value << 8) | octet;
        }
        return value;
    }

    static int mask(int prefixLength) {
        return prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
    }

    static int toInt(Inet4Address address) {
        byte[] b = address.getAddress();
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    static Inet4Address toAddress(int value) {
        byte[] b = {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
        try {
            return (Inet4Address) InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // four bytes are always a valid address
        }
    }

    /** Number of addresses in the prefix (2^(32 - length)). */
    public long size() {
        return 1L << (32 - prefixLength);
    }

    public boolean contains(int address) {
        return (address & mask(prefixLength)) == network;
    }

    public boolean contains(Inet4Address address) {
        return contains(toInt(address));
    }

    /** True when the two prefixes share at least one address. */
    public boolean overlaps(Ipv4Cidr other) {
        int shorter = Math.min(prefixLength, other.prefixLength);
        return ((network ^ other.network) & mask(shorter)) == 0;
    }

    /** The address {@code offset} places after the network address. */
    public Inet4Address address(long offset) {
        if (offset < 0 || offset >= size()) {
            throw new IllegalArgumentException("offset " + offset + " is outside " + this);
        }
        return toAddress((int) (network + offset));
    }

    @Override
    public String toString() {
        return toAddress(network).getHostAddress() + "/" + prefixLength;
    }
}
