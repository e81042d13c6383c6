package io.agentbox.manager.builds;

import com.google.protobuf.ByteString;
import io.agentbox.manager.store.StoreException;
import io.agentbox.manager.store.TemplateBuildStore;
import io.agentbox.protocol.grpc.ReadyGate;
import io.agentbox.protocol.v1.BuildEvent;
import io.agentbox.protocol.v1.BuildFileChunk;
import io.agentbox.protocol.v1.BuildInput;
import io.agentbox.protocol.v1.TemplateBuildResult;
import io.agentbox.protocol.v1.TemplateBuildSpec;
import io.agentbox.protocol.v1.TemplateBuildServiceGrpc;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code BuildTemplate} call (template_build.proto) driven by the hub: sends the spec, then each
 * COPY archive from the hub's {@link TemplateFiles} in chunks of at most 1 MiB (waiting while the
 * call is not ready: its flow control bounds what is buffered), then {@code files_done}; stores
 * the log entries the worker streams back in batches, in order, and returns the result. Events
 * pass through a bounded queue the caller's thread drains, so a hub that writes its store slowly
 * slows the worker's build instead of buffering its log.
 */
final class BuildRun {
    static final int CHUNK_BYTES = 1 << 20;
    static final int QUEUE = 1024;

    /** The result: ok with the image's reference and manifest digest, or E2B's reason. */
    record Outcome(boolean ok, String imageReference, String manifestDigest, String errorMessage, String errorStep) {
        Outcome(boolean ok, String imageReference, String errorMessage, String errorStep) {
            this(ok, imageReference, null, errorMessage, errorStep);
        }
    }

    private final Channel channel;
    private final TemplateBuildStore store;
    private final String buildId;
    private final BlockingQueue<Object> events = new ArrayBlockingQueue<>(QUEUE);
    private static final Object COMPLETED = new Object();
    /** Open while the worker's call has not ended: an error or completion waiting in {@link #events} stops a send. */
    private final ReadyGate ready = new ReadyGate(() -> {
        Object early = events.peek();
        return early instanceof Throwable || early == COMPLETED;
    });

    BuildRun(Channel channel, TemplateBuildStore store, String buildId) {
        this.channel = channel;
        this.store = store;
        this.buildId = buildId;
    }

    Outcome run(TemplateBuildSpec spec, List<String> hashes, List<Path> archives) {
        ClientCallStreamObserver<BuildInput>[] call = new ClientCallStreamObserver[1];
        TemplateBuildServiceGrpc.newStub(channel).buildTemplate(new ClientResponseObserver<BuildInput, BuildEvent>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<BuildInput> requests) {
                call[0] = requests;
                requests.setOnReadyHandler(ready::signal);
            }

            @Override
            public void onNext(BuildEvent e) {
                put(e);
            }

            @Override
            public void onError(Throwable t) {
                put(t);
            }

            @Override
            public void onCompleted() {
                put(COMPLETED);
            }
        });
        ClientCallStreamObserver<BuildInput> requests = call[0];
        try {
            send(requests, BuildInput.newBuilder().setSpec(spec).build());
            for (int i = 0; i < hashes.size(); i++) {
                sendFile(requests, hashes.get(i), archives.get(i));
            }
            send(requests, BuildInput.newBuilder().setFilesDone(true).build());
            requests.onCompleted();
        } catch (IOException e) {
            requests.cancel("the hub cannot read an uploaded archive", e);
            return new Outcome(false, null, "the hub cannot read an uploaded archive: " + e.getMessage(), null);
        } catch (InterruptedException e) {
            requests.cancel("the hub is stopping", e);
            Thread.currentThread().interrupt();
            return new Outcome(false, null, "the hub stopped during the build", null);
        } catch (Failed f) {
            return f.outcome;
        }
        return receive(requests);
    }

    private Outcome receive(ClientCallStreamObserver<BuildInput> requests) {
        TemplateBuildResult result = null;
        try {
            while (true) {
                List<Object> batch = new ArrayList<>();
                batch.add(events.take());
                events.drainTo(batch, QUEUE);
                List<TemplateBuildStore.LogEntry> logs = new ArrayList<>();
                Object end = null;
                for (Object o : batch) {
                    if (o instanceof BuildEvent e) {
                        if (e.hasLog()) {
                            logs.add(new TemplateBuildStore.LogEntry(e.getLog().getTimestampMs(), level(e.getLog().getLevel()),
                                    e.getLog().getStep(), e.getLog().getMessage()));
                        } else if (e.hasResult()) {
                            result = e.getResult();
                        }
                    } else if (end == null) {
                        end = o;
                    }
                }
                append(logs);
                if (end == COMPLETED) {
                    break;
                }
                if (end instanceof Throwable t) {
                    if (result != null) {
                        break; // the result came; what followed does not matter
                    }
                    return new Outcome(false, null, failure(t), null);
                }
            }
        } catch (InterruptedException e) {
            requests.cancel("the hub is stopping", e);
            Thread.currentThread().interrupt();
            return new Outcome(false, null, "the hub stopped during the build", null);
        } catch (StoreException e) { // the build was deleted meanwhile
            requests.cancel("the build was deleted", e);
            return new Outcome(false, null, "the build was deleted", null);
        }
        if (result == null) {
            return new Outcome(false, null, "the worker ended the build without a result", null);
        }
        return result.getOk() ? new Outcome(true, result.getImageReference(), result.getManifestDigest(), null, null)
                : new Outcome(false, null, result.getErrorMessage(), result.getErrorStep().isEmpty() ? null : result.getErrorStep());
    }

    private static String failure(Throwable t) {
        Status s = Status.fromThrowable(t);
        String d = s.getDescription() == null ? s.getCode().name() : s.getDescription();
        return switch (s.getCode()) {
            case UNAVAILABLE -> "the worker became unreachable during the build: " + d;
            case RESOURCE_EXHAUSTED -> "the worker is busy: " + d;
            default -> "the worker refused the build: " + d;
        };
    }

    private void append(List<TemplateBuildStore.LogEntry> logs) {
        if (!logs.isEmpty()) {
            store.appendLogs(buildId, logs);
        }
    }

    private static String level(String l) {
        return switch (l) {
            case "debug", "info", "warn", "error" -> l;
            default -> "info";
        };
    }

    private void put(Object o) {
        try {
            events.put(o); // blocks the call's thread while the hub is behind: the worker's build waits
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void sendFile(ClientCallStreamObserver<BuildInput> requests, String hash, Path file)
            throws IOException, InterruptedException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[CHUNK_BYTES];
            boolean sentAny = false;
            while (true) {
                int n = in.readNBytes(buf, 0, buf.length);
                boolean last = n < buf.length;
                if (n == 0 && sentAny) { // the previous chunk filled the buffer exactly: end with an empty last chunk
                    send(requests, chunk(hash, ByteString.EMPTY, true));
                    return;
                }
                send(requests, chunk(hash, ByteString.copyFrom(buf, 0, n), last));
                sentAny = true;
                if (last) {
                    return;
                }
            }
        }
    }

    private static BuildInput chunk(String hash, ByteString data, boolean last) {
        return BuildInput.newBuilder().setFile(BuildFileChunk.newBuilder().setFilesHash(hash).setData(data).setLast(last)).build();
    }

    /** Sends once the call can take it; a call that ended meanwhile ends the build with its error. */
    private void send(ClientCallStreamObserver<BuildInput> requests, BuildInput in) throws InterruptedException {
        if (!ready.awaitReady(requests)) {
            Object early = events.peek();
            if (early instanceof Throwable t) {
                throw new Failed(new Outcome(false, null, failure(t), null));
            }
            throw new Failed(new Outcome(false, null, "the worker ended the build before it had its files", null));
        }
        requests.onNext(in);
    }

    private static final class Failed extends RuntimeException {
        final Outcome outcome;

        Failed(Outcome outcome) {
            super(null, null, false, false);
            this.outcome = outcome;
        }
    }
}
