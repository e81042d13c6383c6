package io.agentbox.worker.build;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.agentbox.worker.image.Descriptor;
import io.agentbox.worker.image.store.Digests;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What each build step produced, by key (the layers below, the step's content, its user, workdir
 * and ENV, and the archive's hash for COPY: docs/e2b-wire.md#step-cache), one small JSON file
 * per key under {@code <worker data>/builds/cache/}. An entry names a layer blob of the image store
 * or says the step changed nothing; an entry whose layer the store no longer holds is a miss.
 * Entries are written atomically (temp file and rename), so concurrent builds never read half of one.
 */
final class BuildCache {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicLong COUNTER = new AtomicLong();

    /** One step's outcome: {@code layer} and {@code diffId} are null when the step changed nothing. */
    record Entry(Descriptor layer, String diffId) {
        static final Entry EMPTY = new Entry(null, null);

        boolean empty() {
            return layer == null;
        }
    }

    private final Path dir;

    BuildCache(Path dir) throws IOException {
        this.dir = Files.createDirectories(dir);
    }

    /** The key of a step: SHA-256 over the parts, each length-prefixed so no two lists collide. */
    static String key(String... parts) {
        var md = Digests.sha256();
        for (String p : parts) {
            byte[] b = p.getBytes(StandardCharsets.UTF_8);
            md.update((b.length + ":").getBytes(StandardCharsets.US_ASCII));
            md.update(b);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    Optional<Entry> get(String key) {
        try {
            return Optional.of(JSON.readValue(dir.resolve(key + ".json").toFile(), Entry.class));
        } catch (NoSuchFileException | FileNotFoundException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // unreadable: build the step again and overwrite it
        }
    }

    void put(String key, Entry entry) throws IOException {
        Path tmp = dir.resolve(".tmp-" + ProcessHandle.current().pid() + "-" + COUNTER.incrementAndGet());
        try {
            JSON.writeValue(tmp.toFile(), entry);
            Files.move(tmp, dir.resolve(key + ".json"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
