package io.agentbox.manager.builds;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The COPY archives uploaded for template builds (docs/e2b-wire.md#archive-upload, docs/e2b-wire.md#copy-archives), kept by
 * (template id, files hash) under {@code <hub data>/template-files/<template id>/<hash>}: E2B's
 * default cache scope is the template. A write goes to a temporary file beside the target and is
 * renamed into place only when complete, so parallel and repeated uploads of one hash (the JS SDK
 * uploads every COPY at once; two COPY steps with the same src and dest share a hash) never show
 * a half-written archive; the last complete one wins, and they hold the same bytes anyway.
 */
public final class TemplateFiles {
    /** Default largest archive: build contexts can be hundreds of MB. */
    public static final long DEFAULT_MAX_BYTES = 1L << 30;
    public static final Pattern HASH = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern TEMPLATE_ID = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");

    /** An upload that did not end as declared or passed the limit. */
    public static final class BadUpload extends IOException {
        private final boolean tooLarge;

        BadUpload(String message, boolean tooLarge) {
            super(message);
            this.tooLarge = tooLarge;
        }

        public boolean tooLarge() {
            return tooLarge;
        }
    }

    private final Path root;
    private final long maxBytes;

    /** @param root directory of the archives (created if missing) */
    public TemplateFiles(Path root, long maxBytes) throws IOException {
        if (maxBytes < 1) {
            throw new IllegalArgumentException("the largest upload must be at least 1 byte, got " + maxBytes);
        }
        this.root = Files.createDirectories(root);
        this.maxBytes = maxBytes;
        try (var dirs = Files.list(this.root)) { // temporary files of uploads a previous hub did not finish
            for (Path dir : dirs.toList()) {
                if (Files.isDirectory(dir)) {
                    try (var files = Files.list(dir)) {
                        for (Path f : files.toList()) {
                            if (f.getFileName().toString().startsWith(".tmp-")) {
                                Files.deleteIfExists(f);
                            }
                        }
                    }
                }
            }
        }
    }

    public long maxBytes() {
        return maxBytes;
    }

    /** The stored archive, if any. */
    public Optional<Path> file(String templateId, String hash) {
        Path p = path(templateId, hash);
        return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }

    /**
     * Stores the archive read from {@code in}.
     *
     * @param declared the request's Content-Length, or -1 when chunked
     * @return the number of bytes stored
     * @throws BadUpload beyond {@link #maxBytes()} (tooLarge) or when the body ended before {@code declared}
     *     bytes or went past them
     * @throws IOException when the hub cannot write it
     */
    public long put(String templateId, String hash, long declared, InputStream in) throws IOException {
        if (declared > maxBytes) {
            throw new BadUpload("the archive is " + declared + " bytes; the hub takes at most " + maxBytes, true);
        }
        Path target = path(templateId, hash);
        Files.createDirectories(target.getParent());
        Path tmp = target.resolveSibling(".tmp-" + hash + "-" + UUID.randomUUID());
        long n = 0;
        try {
            try (OutputStream out = Files.newOutputStream(tmp)) {
                byte[] buf = new byte[64 << 10];
                int r;
                while ((r = in.read(buf)) >= 0) {
                    n += r;
                    if (n > maxBytes) {
                        throw new BadUpload("the archive passes the hub's limit of " + maxBytes + " bytes", true);
                    }
                    if (declared >= 0 && n > declared) {
                        throw new BadUpload("the body is longer than its Content-Length " + declared, false);
                    }
                    out.write(buf, 0, r);
                }
            }
            if (declared >= 0 && n != declared) {
                throw new BadUpload("the body ended after " + n + " of " + declared + " bytes", false);
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException | FileAlreadyExistsException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            return n;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Removes every archive of a template (it was deleted). */
    public void deleteTemplate(String templateId) throws IOException {
        Path dir = root.resolve(checkedId(templateId));
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }

    private Path path(String templateId, String hash) {
        if (!HASH.matcher(hash).matches()) {
            throw new IllegalArgumentException("files hash must be 64 lowercase hex digits");
        }
        return root.resolve(checkedId(templateId)).resolve(hash);
    }

    private static String checkedId(String templateId) {
        if (!TEMPLATE_ID.matcher(templateId).matches()) {
            throw new IllegalArgumentException("bad template id " + templateId);
        }
        return templateId;
    }
}
