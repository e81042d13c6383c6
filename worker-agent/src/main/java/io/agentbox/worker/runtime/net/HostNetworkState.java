package io.agentbox.worker.runtime.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the host's IPv4 configuration looks like right now, read from {@code ip -j} (iproute2's
 * JSON output): the interfaces with their MTU, the prefixes of routes in every table, and the
 * prefix of each interface address (its subnet, the host's LAN).
 *
 * @param mtu MTU by interface name
 * @param routes destination prefix of every route in every table, the default routes (/0) left out
 * @param addressPrefixes subnet of every address outside loopback, taken from its local side
 *     ({@code local/prefixlen}), by the interface that holds it
 * @param defaultRouteDevice the interface of the main table's default route, null when there is none
 */
record HostNetworkState(Map<String, Integer> mtu, List<Prefix> routes, List<Prefix> addressPrefixes,
                        String defaultRouteDevice) {

    /** A prefix and the interface it belongs to (null when the route has none, as blackhole routes). */
    record Prefix(Ipv4Cidr cidr, String device) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** @throws IllegalStateException when {@code ip} fails or prints something that is not its JSON */
    static HostNetworkState read(NetCommands tools) {
        JsonNode links = ipJson(tools, "link", "show");
        JsonNode addrs = ipJson(tools, "-4", "addr", "show");
        JsonNode routeList = ipJson(tools, "-4", "route", "show", "table", "all");

        Map<String, Integer> mtu = new HashMap<>();
        for (JsonNode link : links) {
            mtu.put(link.path("ifname").asText(), link.path("mtu").asInt(1500));
        }
        List<Prefix> addressPrefixes = new ArrayList<>();
        for (JsonNode link : addrs) {
            String dev = link.path("ifname").asText();
            for (JsonNode info : link.path("addr_info")) {
                if (!"inet".equals(info.path("family").asText()) || "host".equals(info.path("scope").asText())) {
                    continue; // loopback addresses: 127/8 is blocked on its own
                }
                Ipv4Cidr cidr = new Ipv4Cidr(Ipv4Cidr.parseAddress(info.path("local").asText(), "ip addr local"),
                        info.path("prefixlen").asInt(32));
                addressPrefixes.add(new Prefix(cidr, dev));
            }
        }
        List<Prefix> routes = new ArrayList<>();
        String defaultDev = null;
        for (JsonNode route : routeList) {
            String dst = route.path("dst").asText("");
            String dev = route.hasNonNull("dev") ? route.get("dev").asText() : null;
            String table = route.path("table").asText("main");
            if (dst.equals("default") || dst.isEmpty()) {
                if (table.equals("main") && defaultDev == null) {
                    defaultDev = dev;
                }
                continue;
            }
            Ipv4Cidr cidr = Ipv4Cidr.parse(dst);
            if (cidr.prefixLength() > 0) {
                routes.add(new Prefix(cidr, dev));
            }
        }
        return new HostNetworkState(Map.copyOf(mtu), List.copyOf(routes), List.copyOf(addressPrefixes), defaultDev);
    }

    private static JsonNode ipJson(NetCommands tools, String... args) {
        List<String> command = new ArrayList<>(List.of(tools.ip.toString(), "-j"));
        command.addAll(List.of(args));
        NetCommands.Result r = NetCommands.run(command, "");
        if (!r.ok()) {
            throw new IllegalStateException("reading the host network (" + String.join(" ", command) + ") failed: " + r.message());
        }
        try {
            JsonNode node = JSON.readTree(r.stdout().isBlank() ? "[]" : r.stdout());
            if (!node.isArray()) {
                throw new IllegalStateException(String.join(" ", command) + " did not print a JSON array");
            }
            return node;
        } catch (IOException e) {
            throw new IllegalStateException("cannot parse the output of " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    /** MTU of the interface the default route leaves by; 1500 when there is no default route. */
    int uplinkMtu() {
        Integer value = defaultRouteDevice == null ? null : mtu.get(defaultRouteDevice);
        return value == null ? 1500 : value;
    }
}
