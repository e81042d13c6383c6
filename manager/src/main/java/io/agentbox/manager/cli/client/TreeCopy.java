package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.LinkOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.stream.Stream;

/**
 * Copies of a directory tree between this machine and a sandbox for {@code sandbox cp -r}, one
 * file route call per file (the native API has no archive route): an upload walks the local tree
 * and {@code PUT}s each file (parents made), making only directories without a file of their own
 * ({@code POST .../files/mkdir}, empty ones included); a
 * download lists the sandbox's tree once ({@code GET .../files/list?depth=64}, the hub's deepest)
 * and reads each regular file. Symbolic links and special files are skipped and counted, as the
 * file routes copy bytes, not links.
 *
 * <p>Errors: a failed call ends the copy with the hub's error; a download writes each file through
 * a temporary file beside it, so no file is left half written, but files copied before the
 * failure stay.
 */
final class TreeCopy {
    /** Deepest listing the hub serves ({@code FileEndpoints.MAX_DEPTH}). */
    static final int MAX_DEPTH = 64;

    /** What a copy moved. */
    record Totals(int files, int directories, long bytes, int skipped) {
        /** {@code copied N files, M directories, B bytes to WHERE[; skipped K ...]}. */
        String describe(String where) {
            return "copied " + files + " files, " + directories + " directories, " + bytes + " bytes to " + where
                    + (skipped == 0 ? "" : "; skipped " + skipped + " symbolic links or special files");
        }
    }

    private final ApiClient client;
    private final String sandboxId;

    TreeCopy(ApiClient client, String sandboxId) {
        this.client = client;
        this.sandboxId = sandboxId;
    }

    /** Copies the local directory {@code from} to the sandbox's {@code to} (made, with parents). */
    Totals upload(Path from, String to) throws IOException {
        String root = to.endsWith("/") && to.length() > 1 ? to.substring(0, to.length() - 1) : to;
        int[] counts = new int[3];
        long[] bytes = {0};
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                // a PUT makes its file's parents: only a directory without a file of its own needs a call
                if (!holdsAFile(dir)) {
                    client.call("POST", "/v1/sandboxes/" + ApiClient.enc(sandboxId) + "/files/mkdir",
                            ApiClient.MAPPER.createObjectNode().put("path", remote(root, from.relativize(dir))));
                }
                counts[1]++;
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (!attrs.isRegularFile()) {
                    counts[2]++;
                    return FileVisitResult.CONTINUE;
                }
                client.upload(route(remote(root, from.relativize(file))), file);
                counts[0]++;
                bytes[0] += Files.size(file);
                return FileVisitResult.CONTINUE;
            }
        });
        return new Totals(counts[0], counts[1], bytes[0], counts[2]);
    }

    private static boolean holdsAFile(Path dir) throws IOException {
        try (Stream<Path> children = Files.list(dir)) {
            return children.anyMatch(c -> Files.isRegularFile(c, LinkOption.NOFOLLOW_LINKS)); // links are skipped
        }
    }

    /** Copies the sandbox's directory {@code from} to the local {@code to} (made, with parents). */
    Totals download(String from, Path to) throws IOException {
        List<JsonNode> entries = client.list(fileRoute(sandboxId, "/list", from) + "&depth=" + MAX_DEPTH);
        Files.createDirectories(to);
        // entries carry absolute paths: the listed directory's own is the prefix of every one
        JsonNode self = client.get(fileRoute(sandboxId, "/stat", from));
        String prefix = self.path("path").asText(from);
        prefix = prefix.endsWith("/") ? prefix : prefix + "/";
        int files = 0;
        int dirs = 1;
        int skipped = 0;
        long bytes = 0;
        for (JsonNode e : entries) {
            String path = e.path("path").asText();
            if (!path.startsWith(prefix)) {
                throw new ClientException("the hub listed " + path + " outside " + prefix);
            }
            Path local = to.resolve(path.substring(prefix.length())).normalize();
            if (!local.startsWith(to.normalize())) {
                throw new ClientException("refusing entry " + path + ": it leads outside " + to);
            }
            switch (e.path("type").asText()) {
                case "dir" -> {
                    Files.createDirectories(local);
                    dirs++;
                }
                case "file" -> {
                    Files.createDirectories(local.getParent());
                    bytes += downloadFile(route(path), local);
                    files++;
                }
                default -> skipped++;
            }
        }
        return new Totals(files, dirs, bytes, skipped);
    }

    /** Streams one sandbox file to {@code local} through a temporary file, moved into place when complete. */
    long downloadFile(String route, Path local) throws IOException {
        Path tmp = Files.createTempFile(local.toAbsolutePath().getParent(), "." + local.getFileName(), ".part");
        try {
            long n;
            try (OutputStream out = Files.newOutputStream(tmp)) {
                n = client.download(route, out);
            }
            Files.move(tmp, local, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return n;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    String route(String path) {
        return fileRoute(sandboxId, "", path);
    }

    /** {@code /v1/sandboxes/{id}/files{sub}?path=}: the file routes of one sandbox ({@code sub} "", "/stat", "/list"). */
    static String fileRoute(String sandboxId, String sub, String path) {
        return "/v1/sandboxes/" + ApiClient.enc(sandboxId) + "/files" + sub + "?path=" + ApiClient.enc(path);
    }

    private static String remote(String root, Path relative) {
        String rel = relative.toString().replace('\\', '/');
        return rel.isEmpty() ? root : root + "/" + rel;
    }
}
