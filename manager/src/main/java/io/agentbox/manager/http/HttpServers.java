package io.agentbox.manager.http;

import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The hub's HTTP/1.1 listeners (public API, management API) set up one way: a bounded named thread
 * pool, no server/version headers, an idle timeout, and Jetty's own errors as JSON.
 */
public final class HttpServers {
    private HttpServers() {}

    /**
     * A stopped Jetty server with one connector on {@code host:port} (0 = ephemeral).
     *
     * @param threadName  name prefix of its threads
     * @param maxThreads  upper bound of its thread pool
     * @param minThreads  threads kept when idle
     * @param idleTimeoutMs connection idle timeout, milliseconds
     */
    public static Server create(String threadName, int maxThreads, int minThreads, String host, int port, long idleTimeoutMs) {
        return create(threadName, maxThreads, minThreads, host, port, idleTimeoutMs, null);
    }

    /** As above; a non-null {@code tls} serves HTTPS (HTTP/1.1 over TLS) instead of plain HTTP. */
    public static Server create(String threadName, int maxThreads, int minThreads, String host, int port, long idleTimeoutMs,
                                SslContextFactory.Server tls) {
        QueuedThreadPool threads = new QueuedThreadPool(maxThreads, minThreads);
        threads.setName(threadName);
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        if (tls != null) {
            http.addCustomizer(new SecureRequestCustomizer());
        }
        ServerConnector connector = tls == null ? new ServerConnector(server, new HttpConnectionFactory(http))
                : new ServerConnector(server, tls, new HttpConnectionFactory(http));
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(idleTimeoutMs);
        server.addConnector(connector);
        server.setErrorHandler(new JsonErrorHandler());
        return server;
    }

    /**
     * Lets request paths carry an encoded slash ({@code %2F}): Jetty's default refuses it with a 400
     * before any handler, but the E2B SDKs encode {@code /} inside template, tag and snapshot names.
     * The other ambiguous forms (encoded dot segments, {@code %25}, {@code //}) stay refused.
     * Handlers then see the raw path and must split it into segments before decoding them.
     */
    public static void allowEncodedSlash(Server server) {
        for (var connector : server.getConnectors()) {
            HttpConnectionFactory http = connector.getConnectionFactory(HttpConnectionFactory.class);
            http.getHttpConfiguration().setUriCompliance(UriCompliance.DEFAULT.with("DEFAULT+ENCODED_SLASH",
                    UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR));
        }
    }

    /** The port {@code server}'s connector is bound to (after start). */
    public static int port(Server server) {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }
}
