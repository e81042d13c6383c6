package io.agentbox.worker.runtime.net;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** TCP reachability as seen from one network namespace, against {@link Probe.Listener}s. */
final class Probe {
    /** How long a connection attempt may take; drops by the filter show up as this time-out. */
    static final int CONNECT_TIMEOUT_MS = 1500;

    private Probe() {
    }

    /**
     * What one connection attempt gave.
     *
     * @param reply the line the listener sent ({@code peer=<address it saw>}), null when not connected
     * @param error why it did not connect, null when it did
     */
    record Outcome(String target, String reply, String error) {
        boolean connected() {
            return reply != null;
        }

        /** The source address the listener saw. */
        String peer() {
            return reply == null ? null : reply.substring("peer=".length());
        }
    }

    /** Connects from the namespace at {@code ns} (null: the test's own, the host's) and reads the listener's line. */
    static Outcome connect(Path ns, InetAddress address, int port) throws Exception {
        String target = address.getHostAddress() + ":" + port;
        if (ns == null) {
            return attempt(target, address, port);
        }
        return Netns.call(ns, () -> attempt(target, address, port));
    }

    private static Outcome attempt(String target, InetAddress address, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, port), CONNECT_TIMEOUT_MS);
            s.setSoTimeout(5000);
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            String line = in.readLine();
            return line == null ? new Outcome(target, null, "connected, but the listener sent nothing")
                    : new Outcome(target, line, null);
        } catch (IOException e) {
            return new Outcome(target, null, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /** Sends one UDP datagram {@code payload} from the namespace at {@code ns} (null: the host's). */
    static void sendUdp(Path ns, InetAddress address, int port, String payload) throws Exception {
        Callable<Void> send = () -> {
            try (DatagramSocket s = new DatagramSocket()) {
                byte[] b = payload.getBytes(StandardCharsets.US_ASCII);
                s.send(new DatagramPacket(b, b.length, address, port));
            }
            return null;
        };
        if (ns == null) {
            send.call();
        } else {
            Netns.call(ns, send);
        }
    }

    /** The payload of the next datagram on {@code socket}, or null when none comes within {@code timeoutMs}. */
    static String receiveUdp(DatagramSocket socket, int timeoutMs) throws IOException {
        socket.setSoTimeout(timeoutMs);
        byte[] buf = new byte[512];
        DatagramPacket p = new DatagramPacket(buf, buf.length);
        try {
            socket.receive(p);
            return new String(buf, 0, p.getLength(), StandardCharsets.US_ASCII);
        } catch (SocketTimeoutException e) {
            return null;
        }
    }

    /** Answers every connection with {@code peer=<source address>\n} and closes it. */
    static final class Listener implements AutoCloseable {
        private final ServerSocket server;

        private Listener(ServerSocket server) {
            this.server = server;
            Thread t = new Thread(this::serve, "probe listener " + server.getLocalSocketAddress());
            t.setDaemon(true);
            t.start();
        }

        /** Listens on {@code bind}:{@code port} (port 0: any) inside {@code ns} (null: the host's namespace). */
        static Listener open(Path ns, InetAddress bind, int port) throws Exception {
            if (ns == null) {
                return new Listener(new ServerSocket(port, 50, bind));
            }
            return new Listener(Netns.call(ns, () -> new ServerSocket(port, 50, bind)));
        }

        int port() {
            return server.getLocalPort();
        }

        private void serve() {
            while (!server.isClosed()) {
                try (Socket s = server.accept(); OutputStream out = s.getOutputStream()) {
                    out.write(("peer=" + s.getInetAddress().getHostAddress() + "\n").getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // closed, or a client that went away: keep serving until closed
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
