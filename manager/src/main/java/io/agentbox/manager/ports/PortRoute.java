package io.agentbox.manager.ports;

import io.agentbox.manager.http.ApiException;
import io.agentbox.manager.envd.EnvdHandler;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.server.Request;

/**
 * A request for a user port of a sandbox (anything but envd's 49983), in one of E2B's three
 * routing forms (docs/e2b-wire.md#surfaces-and-routing): header {@code E2b-Sandbox-Id} +
 * {@code E2b-Sandbox-Port}; host {@code {port}-{sandboxId}.{domain}} (what {@code getHost(port)}
 * returns); path {@code /sandboxes/{sandboxId}/{port}/...} (path-routing gateways).
 *
 * @param sandboxId the sandbox
 * @param port      TCP port inside the sandbox, 1..65535
 * @param target    request target for the sandbox's server: path (prefix removed in the path form) and query
 */
public record PortRoute(String sandboxId, int port, String target) {
    private static final int ENVD_PORT = EnvdHandler.ENVD_PORT;
    private static final Pattern PATH = Pattern.compile("^/sandboxes/([a-z0-9-]{1,63})/(\\d{1,5})(/.*)?$");

    /**
     * The port route of {@code request}, or null when it is for envd or the control plane.
     *
     * @throws ApiException 400 when the port is not 1..65535
     */
    public static PortRoute of(Request request) {
        HttpURI uri = request.getHttpURI();
        String query = uri.getQuery() == null ? "" : "?" + uri.getQuery();
        String path = uri.getPath() == null || uri.getPath().isEmpty() ? "/" : uri.getPath();
        String id = request.getHeaders().get(EnvdHandler.SANDBOX_ID_HEADER);
        if (id != null) {
            String port = request.getHeaders().get(EnvdHandler.SANDBOX_PORT_HEADER);
            return port == null || port.trim().equals(Integer.toString(ENVD_PORT)) ? null
                    : new PortRoute(id, port(port.trim()), path + query);
        }
        String host = request.getHeaders().get(HttpHeader.HOST);
        Matcher m = host == null ? null : EnvdHandler.SANDBOX_HOST.matcher(host.toLowerCase());
        if (m != null && m.matches()) {
            return m.group(1).equals(Integer.toString(ENVD_PORT)) ? null
                    : new PortRoute(m.group(2), port(m.group(1)), path + query);
        }
        m = PATH.matcher(path);
        if (m.matches()) {
            if (m.group(2).equals(Integer.toString(ENVD_PORT))) {
                throw ApiException.e2b(400, "envd is not served under /sandboxes/{id}/" + ENVD_PORT
                        + "/; send envd requests with the E2b-Sandbox-Id header (E2B_SANDBOX_URL)");
            }
            return new PortRoute(m.group(1), port(m.group(2)), (m.group(3) == null ? "/" : m.group(3)) + query);
        }
        return null;
    }

    private static int port(String s) {
        int port;
        try {
            port = Integer.parseInt(s);
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw ApiException.e2b(400, "sandbox port must be 1..65535, got '" + s + "'");
        }
        return port;
    }
}
