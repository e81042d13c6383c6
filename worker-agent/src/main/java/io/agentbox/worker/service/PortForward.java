package io.agentbox.worker.service;

import com.google.protobuf.ByteString;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.PortRequest;
import io.agentbox.protocol.v1.PortResponse;
import io.agentbox.worker.runtime.LaunchSpec;
import io.agentbox.worker.runtime.LaunchedProcess;
import io.agentbox.worker.runtime.RuntimeSandbox;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * One {@code ForwardPort} call: a TCP connection to a port on the sandbox's loopback, opened
 * from inside the sandbox (its network namespace, as the sandbox user) by a bash relay using
 * bash's {@code /dev/tcp}, so it works the same for host and isolated networks and needs no
 * extra tool. Bytes of {@code data} requests go to the connection; what the connection sends
 * comes back as {@code data} responses, in chunks of at most {@link #CHUNK_BYTES}. The call ends
 * when the sandbox side closes (completed) or the hub cancels (the relay is killed).
 *
 * <p>Limits: {@link #MAX_OPEN} relays per worker; the relay's pipes bound what is in flight
 * toward the sandbox, gRPC flow control what is in flight toward the hub.
 */
final class PortForward implements StreamObserver<PortRequest> {
    static final int CHUNK_BYTES = 64 * 1024;
    static final int MAX_OPEN = 512;
    /**
     * Connects (exit 7 when refused), says so on stderr, copies the socket to stdout in the
     * background and stdin to the socket in the foreground. When the sandbox side closes, the
     * background copy ends the whole relay (its process group): nsenter keeps stdout open until
     * its child exits, so that is what gives the worker its EOF.
     */
    private static final String RELAY = "exec 3<>\"/dev/tcp/127.0.0.1/$1\" || exit 7; echo connected >&2; "
            + "{ cat <&3; kill -KILL 0; } & exec >&-; exec cat >&3";
    private static final String CONNECTED = "connected";
    private static final AtomicInteger OPEN = new AtomicInteger();

    private final ServerCallStreamObserver<PortResponse> call;
    private final Function<String, RuntimeSandbox> sandboxes;
    private final Executor blocking;
    private final ReadyGate gate = new ReadyGate();
    private volatile LaunchedProcess relay;
    private volatile OutputStream toSandbox;
    private volatile boolean opened;
    private volatile boolean done;

    PortForward(ServerCallStreamObserver<PortResponse> call, Function<String, RuntimeSandbox> sandboxes,
                Executor blocking) {
        this.call = call;
        this.sandboxes = sandboxes;
        this.blocking = blocking;
        call.setOnReadyHandler(gate::signal);
        call.setOnCancelHandler(() -> {
            gate.close();
            close();
        });
    }

    @Override
    public void onNext(PortRequest req) {
        if (done) {
            return;
        }
        try {
            switch (req.getRequestCase()) {
                case OPEN -> {
                    if (opened) {
                        throw Status.INVALID_ARGUMENT.withDescription("open may only be sent once").asRuntimeException();
                    }
                    opened = true;
                    int port = req.getOpen().getPort();
                    if (port < 1 || port > 65535) {
                        throw Status.INVALID_ARGUMENT.withDescription("port must be 1..65535, got " + port).asRuntimeException();
                    }
                    RuntimeSandbox sandbox = sandboxes.apply(req.getOpen().getSandboxId());
                    blocking.execute(() -> connect(sandbox, port));
                }
                case DATA -> {
                    OutputStream out = toSandbox;
                    if (out == null) {
                        throw Status.FAILED_PRECONDITION.withDescription("data before the connection was open")
                                .asRuntimeException();
                    }
                    // blocks while the relay's pipe is full: backpressure toward the hub
                    req.getData().writeTo(out);
                    out.flush();
                }
                default -> throw Status.INVALID_ARGUMENT.withDescription("empty ForwardPort request").asRuntimeException();
            }
        } catch (StatusRuntimeException e) {
            fail(e.getStatus());
        } catch (IOException e) {
            fail(Status.UNAVAILABLE.withDescription("connection to the sandbox port closed: " + e.getMessage()));
        }
    }

    private void connect(RuntimeSandbox sandbox, int port) {
        if (OPEN.incrementAndGet() > MAX_OPEN) {
            OPEN.decrementAndGet();
            fail(Status.RESOURCE_EXHAUSTED.withDescription("worker already forwards " + MAX_OPEN + " connections"));
            return;
        }
        try {
            LaunchedProcess p = sandbox.launch(new LaunchSpec("/bin/bash",
                    List.of("-c", RELAY, "relay", Integer.toString(port)), Map.of(), "/", true));
            relay = p;
            if (done) {
                close();
                return;
            }
            String line = firstLine(p.stderr());
            if (!CONNECTED.equals(line)) {
                fail(Status.FAILED_PRECONDITION.withDescription("nothing accepts connections on port " + port
                        + " in sandbox " + sandbox.id() + (line == null ? "" : " (" + line + ")")));
                return;
            }
            toSandbox = p.stdin();
            call.onNext(PortResponse.newBuilder().setConnected(true).build());
            pump(p.stdout());
        } catch (StatusRuntimeException e) {
            fail(e.getStatus());
        } finally {
            close();
            OPEN.decrementAndGet();
        }
    }

    /** Sandbox → hub until EOF (completed) or cancel. */
    private void pump(InputStream in) {
        byte[] buf = new byte[CHUNK_BYTES];
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                if (!gate.awaitReady(call)) {
                    return;
                }
                synchronized (this) {
                    if (done) {
                        return;
                    }
                    call.onNext(PortResponse.newBuilder().setData(ByteString.copyFrom(buf, 0, n)).build());
                }
            }
            synchronized (this) {
                if (!done) {
                    done = true;
                    call.onCompleted();
                }
            }
        } catch (IOException e) {
            fail(Status.UNAVAILABLE.withDescription("connection to the sandbox port failed: " + e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void onError(Throwable t) {
        close();
    }

    @Override
    public void onCompleted() {
        // the hub sends no more bytes: end the copy toward the sandbox, keep reading its answer
        OutputStream out = toSandbox;
        if (out != null) {
            try {
                out.close();
            } catch (IOException ignored) {
                // relay already gone
            }
        }
    }

    private void fail(Status status) {
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
        }
        close();
        if (!call.isCancelled()) {
            call.onError(status.asRuntimeException());
        }
    }

    private void close() {
        done = true;
        LaunchedProcess p = relay;
        if (p != null && p.isAlive()) {
            p.signalGroup(9);
        }
    }

    /** The relay's first stderr line (null at EOF); at most 512 bytes. */
    private static String firstLine(InputStream in) {
        StringBuilder sb = new StringBuilder();
        try {
            int b;
            while ((b = in.read()) >= 0 && b != '\n' && sb.length() < 512) {
                sb.append((char) b);
            }
            if (b < 0 && sb.length() == 0) {
                return null;
            }
        } catch (IOException e) {
            return null;
        }
        return new String(sb.toString().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8).strip();
    }
}
