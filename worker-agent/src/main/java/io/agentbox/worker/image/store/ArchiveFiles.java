package io.agentbox.worker.image.store;

import io.agentbox.worker.image.unpack.Compression;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarFile;

/**
 * Named files of an image archive: a directory or a tar (read with random access; a gzip or zstd
 * tar is first decompressed into a scratch file). Names are relative, '/'-separated; one that is
 * absolute or holds {@code ..} is refused, and symlinks are followed only inside the archive.
 */
abstract class ArchiveFiles implements Closeable {
    /** Longest uncompressed archive accepted when it has to be decompressed first. */
    static final long MAX_DECOMPRESSED = 256L << 30;
    private static final int MAX_LINK_HOPS = 16;

    final Path file;

    ArchiveFiles(Path file) {
        this.file = file;
    }

    static ArchiveFiles open(Path file, Path scratchDir) throws IOException {
        if (Files.isDirectory(file)) {
            return new Dir(file);
        }
        if (!Files.isRegularFile(file)) {
            throw new NoSuchFileException(file.toString(), null, "no such archive file or directory");
        }
        Path tar = file;
        Compression c;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
            c = Compression.sniff(in);
            if (c != Compression.NONE) {
                Files.createDirectories(scratchDir);
                tar = scratchDir.resolve("archive.tar");
                try (InputStream plain = Compression.decompress(in); OutputStream out = Files.newOutputStream(tar)) {
                    long n = 0;
                    byte[] buf = new byte[128 * 1024];
                    int r;
                    while ((r = plain.read(buf)) > 0) {
                        n += r;
                        if (n > MAX_DECOMPRESSED) {
                            throw new IOException(file + ": decompresses to more than " + MAX_DECOMPRESSED + " bytes");
                        }
                        out.write(buf, 0, r);
                    }
                }
            }
        }
        try {
            return new Tar(file, new TarFile(tar));
        } catch (IOException | RuntimeException e) {
            throw new IOException(file + " is neither a directory nor a readable tar archive: " + e.getMessage(), e);
        }
    }

    /** Whether {@code name} is a regular file of the archive. */
    abstract boolean exists(String name) throws IOException;

    /** @throws NoSuchFileException naming the archive and {@code name} */
    abstract long size(String name) throws IOException;

    abstract InputStream open(String name) throws IOException;

    /** The whole file, refused when longer than {@code max} bytes. */
    byte[] read(String name, int max) throws IOException {
        if (size(name) > max) {
            throw new IOException(file + ": " + name + " is larger than " + max + " bytes");
        }
        try (InputStream in = open(name)) {
            return in.readNBytes(max);
        }
    }

    IOException missing(String name) {
        return new NoSuchFileException(file + ": no file '" + name + "' in the archive");
    }

    /** {@code name} made relative and plain; @throws IOException when it is absolute or holds '..' */
    String clean(String name) throws IOException {
        StringBuilder b = new StringBuilder();
        if (name.startsWith("/")) {
            throw new IOException(file + ": the archive names '" + name + "', an absolute path");
        }
        for (String c : name.split("/")) {
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                throw new IOException(file + ": the archive names '" + name + "', which leaves the archive");
            }
            if (b.length() > 0) {
                b.append('/');
            }
            b.append(c);
        }
        return b.toString();
    }

    /** A directory (an OCI image layout). */
    static final class Dir extends ArchiveFiles {
        private final Path root;

        Dir(Path root) throws IOException {
            super(root);
            this.root = root.toRealPath();
        }

        private Path resolve(String name) throws IOException {
            Path p = root.resolve(clean(name));
            Path real;
            try {
                real = p.toRealPath();
            } catch (NoSuchFileException e) {
                throw missing(name);
            }
            if (!real.startsWith(root) || !Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS)) {
                throw new IOException(file + ": '" + name + "' is not a regular file inside the layout");
            }
            return real;
        }

        @Override
        boolean exists(String name) throws IOException {
            try {
                resolve(name);
                return true;
            } catch (NoSuchFileException e) {
                return false;
            }
        }

        @Override
        long size(String name) throws IOException {
            return Files.size(resolve(name));
        }

        @Override
        InputStream open(String name) throws IOException {
            return Files.newInputStream(resolve(name));
        }

        @Override
        public void close() {}
    }

    /** A tar file, indexed once. */
    static final class Tar extends ArchiveFiles {
        private final TarFile tar;
        private final Map<String, TarArchiveEntry> entries = new HashMap<>();

        Tar(Path file, TarFile tar) throws IOException {
            super(file);
            this.tar = tar;
            for (TarArchiveEntry e : tar.getEntries()) {
                String n;
                try {
                    n = clean(e.getName());
                } catch (IOException hostile) {
                    continue; // never asked for: names come from the manifests, which are cleaned too
                }
                entries.put(n, e);
            }
        }

        private TarArchiveEntry entry(String name) throws IOException {
            String n = clean(name);
            for (int hop = 0; hop < MAX_LINK_HOPS; hop++) {
                TarArchiveEntry e = entries.get(n);
                if (e == null) {
                    throw missing(name);
                }
                if (e.isSymbolicLink() || e.isLink()) {
                    String target = e.getLinkName();
                    // symlinks are relative to their directory, hardlinks to the archive root
                    String base = e.isSymbolicLink() && n.contains("/") ? n.substring(0, n.lastIndexOf('/') + 1) : "";
                    n = clean(normalizeDots(base + target));
                    continue;
                }
                if (!e.isFile()) {
                    throw new IOException(file + ": '" + name + "' is not a regular file in the archive");
                }
                return e;
            }
            throw new IOException(file + ": '" + name + "': too many links");
        }

        /** Resolves {@code a/b/../c} textually; a '..' above the root stays and is refused by {@link #clean}. */
        private static String normalizeDots(String path) {
            ArrayDeque<String> out = new ArrayDeque<>();
            for (String c : path.split("/")) {
                if (c.equals("..") && !out.isEmpty() && !out.peekLast().equals("..")) {
                    out.removeLast();
                } else if (!c.isEmpty() && !c.equals(".")) {
                    out.addLast(c);
                }
            }
            return String.join("/", out);
        }

        @Override
        boolean exists(String name) throws IOException {
            try {
                entry(name);
                return true;
            } catch (NoSuchFileException e) {
                return false;
            }
        }

        @Override
        long size(String name) throws IOException {
            return entry(name).getSize();
        }

        @Override
        InputStream open(String name) throws IOException {
            return tar.getInputStream(entry(name));
        }

        @Override
        public void close() throws IOException {
            tar.close();
        }
    }
}
