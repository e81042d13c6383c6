package io.agentbox.mux;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real TCP relay on loopback between two peers, that can be frozen: while paused it reads
 * nothing from either side (as a {@code kill -STOP}ped relay process), so the connections stay
 * open but go silent once the kernel buffers are full.
 */
public final class PausableRelay implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean paused;
    private volatile boolean closed;

    public PausableRelay(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "relay-accept");
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return listener.getLocalPort();
    }

    public void pause() {
        paused = true;
    }

    public void resume() {
        paused = false;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket in = listener.accept();
                Socket out = new Socket(target.getAddress(), target.getPort());
                sockets.add(in);
                sockets.add(out);
                pump(in, out);
                pump(out, in);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) throws IOException {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try {
                while (true) {
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    // bytes read as the pause began are held back too, like a stopped process's
                    while (paused && !closed) {
                        Thread.sleep(10);
                    }
                    out.write(buf, 0, n);
                }
            } catch (IOException | InterruptedException e) {
                // one side went away
            }
            try {
                from.close();
                to.close();
            } catch (IOException ignored) {
                // closing
            }
        }, "relay-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
