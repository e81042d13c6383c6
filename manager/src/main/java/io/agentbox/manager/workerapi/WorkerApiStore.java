package io.agentbox.manager.workerapi;

import io.agentbox.manager.store.ApiStore;
import io.agentbox.manager.auth.ApiKeys;
import io.agentbox.manager.auth.Principal;
import io.agentbox.manager.store.SandboxRecord;
import io.agentbox.manager.store.StoreException;
import io.agentbox.protocol.v1.ApiKey;
import io.agentbox.protocol.v1.Template;
import io.agentbox.worker.sync.WatchReplica;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link ApiStore} of a worker serving the public API inside its cluster: API keys and
 * templates are the worker's replicas of what the hub pushes (so a key revoked at the hub stops
 * working here as soon as the revocation arrives), sandbox records are the sandboxes created
 * through this API, in memory. A record is dropped when its sandbox ends, so at most
 * {@link #MAX_RECORDS} are held. Secrets are random per process: envd tokens issued before a
 * worker restart stop working with it (as do its sandboxes).
 */
public final class WorkerApiStore implements ApiStore {
    /** Live sandbox records held at most (the worker's own sandbox limit is far lower). */
    public static final int MAX_RECORDS = 100_000;

    private final WatchReplica<ApiKey> keys;
    private final WatchReplica<Template> templates;
    private final Clock clock;
    private final Map<String, SandboxRecord> sandboxes = new ConcurrentHashMap<>();
    private final Map<String, byte[]> secrets = new ConcurrentHashMap<>();
    private final SecureRandom random = new SecureRandom();

    public WorkerApiStore(WatchReplica<ApiKey> keys, WatchReplica<Template> templates, Clock clock) {
        this.keys = keys;
        this.templates = templates;
        this.clock = clock;
    }

    @Override
    public Optional<Principal> authenticate(String plaintextKey) {
        if (plaintextKey == null || plaintextKey.isEmpty() || plaintextKey.length() > 256) {
            return Optional.empty();
        }
        ApiKey k = keys.get(ApiKeys.hash(plaintextKey));
        if (k == null || (k.getExpiresAtMs() != 0 && k.getExpiresAtMs() <= clock.millis())) {
            return Optional.empty();
        }
        return Optional.of(new Principal(k.getTeam(), k.getRole()));
    }

    @Override
    public List<Template> templates() {
        return templates.items();
    }

    @Override
    public Optional<Template> template(String name) {
        return Optional.ofNullable(templates.get(name));
    }

    @Override
    public void insertSandbox(SandboxRecord r) {
        if (sandboxes.size() >= MAX_RECORDS) {
            throw StoreException.conflict("this worker holds " + MAX_RECORDS + " live sandbox records; kill some first");
        }
        if (sandboxes.putIfAbsent(r.sandboxId(), r) != null) {
            throw StoreException.conflict("sandbox '" + r.sandboxId() + "' is already recorded");
        }
    }

    @Override
    public Optional<SandboxRecord> sandbox(String sandboxId) {
        return Optional.ofNullable(sandboxes.get(sandboxId));
    }

    @Override
    public List<SandboxRecord> activeSandboxes(String team) {
        return sandboxes.values().stream()
                .filter(r -> team == null || r.team().equals(team))
                .sorted(Comparator.comparingLong(SandboxRecord::createdAtMs).thenComparing(SandboxRecord::sandboxId))
                .toList();
    }

    @Override
    public void updateEndAt(String sandboxId, long endAtMs) {
        sandboxes.computeIfPresent(sandboxId, (id, r) -> r.withEndAt(endAtMs));
    }

    @Override
    public boolean markEnded(String sandboxId, String reason) {
        return sandboxes.remove(sandboxId) != null;
    }

    @Override
    public boolean markPaused(String sandboxId, long atMs) {
        boolean[] done = new boolean[1];
        sandboxes.computeIfPresent(sandboxId, (id, r) -> {
            done[0] = !r.paused();
            return done[0] ? r.withPause(atMs, r.endAtMs()) : r;
        });
        return done[0];
    }

    @Override
    public boolean markResumed(String sandboxId, long endAtMs) {
        boolean[] done = new boolean[1];
        sandboxes.computeIfPresent(sandboxId, (id, r) -> {
            done[0] = r.paused();
            return done[0] ? r.withPause(0, endAtMs) : r;
        });
        return done[0];
    }

    @Override
    public byte[] secret(String name) {
        return secrets.computeIfAbsent(name, n -> {
            byte[] b = new byte[32];
            random.nextBytes(b);
            return b;
        });
    }
}
