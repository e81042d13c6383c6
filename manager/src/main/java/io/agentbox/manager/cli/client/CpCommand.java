package io.agentbox.manager.cli.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox sandbox cp [-r] SRC DST}: a file, or with {@code -r} a directory tree
 * ({@link TreeCopy}), between this machine and a sandbox, in either direction. The sandbox side is
 * written {@code SANDBOX_ID:PATH} (absolute, or relative to the user's home); {@code PATH} ending
 * in {@code /} (or empty) means "into that directory, same name". A local destination that is a
 * directory gets the source's name; {@code -} is stdout.
 *
 * <p>Upload: {@code PUT /v1/sandboxes/{id}/files?path=} with the file as the body (parents are
 * made). Download: {@code GET} of the same route streamed to a temporary file beside the target,
 * moved into place when complete, so a failed copy leaves no partial file.
 */
@Command(name = "cp", mixinStandardHelpOptions = true,
        description = "Copy a file (or with -r a directory) to or from a sandbox: cp ./f SANDBOX_ID:/path, "
                + "or cp SANDBOX_ID:/path ./f (- for stdout).")
final class CpCommand implements Callable<Integer> {
    /** {@code ID:PATH}: an id is a DNS label (no slash, so {@code ./a:b} stays local). */
    private static final Pattern REMOTE = Pattern.compile("([a-z0-9][a-z0-9-]{0,62}):(.*)", Pattern.DOTALL);

    @Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    ClientOptions options;

    @Parameters(index = "0", paramLabel = "SRC")
    String source;
    @Parameters(index = "1", paramLabel = "DST")
    String target;
    @Option(names = {"-r", "--recursive"}, description = "Copy a directory and everything under it.")
    boolean recursive;

    record Remote(String sandboxId, String path) {
        String route() {
            return TreeCopy.fileRoute(sandboxId, "", path);
        }

        String statRoute() {
            return TreeCopy.fileRoute(sandboxId, "/stat", path);
        }
    }

    private static JsonNode totals(TreeCopy.Totals t) {
        return ApiClient.MAPPER.createObjectNode().put("files", t.files()).put("directories", t.directories())
                .put("size", t.bytes()).put("skipped", t.skipped());
    }

    /** The sandbox side, or null for a local path. */
    static Remote remote(String arg) {
        Matcher m = REMOTE.matcher(arg);
        return m.matches() ? new Remote(m.group(1), m.group(2)) : null;
    }

    @Override
    public Integer call() throws IOException {
        Remote from = remote(source);
        Remote to = remote(target);
        if ((from == null) == (to == null)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "exactly one of SRC and DST must be SANDBOX_ID:PATH (got '" + source + "' and '" + target + "')");
        }
        ApiClient client = options.client();
        Output output = options.output(spec);
        if (to != null) {
            Path local = Path.of(source);
            if (Files.isDirectory(local) && !recursive) {
                throw new ClientException(source + " is a directory; add -r to copy it and everything under it");
            }
            if (!Files.isDirectory(local) && !Files.isRegularFile(local)) {
                throw new ClientException("no such file: " + source);
            }
            if (to.path().isEmpty() || to.path().endsWith("/")) {
                to = new Remote(to.sandboxId(), to.path() + local.toAbsolutePath().normalize().getFileName());
            }
            if (Files.isDirectory(local)) {
                TreeCopy.Totals t = new TreeCopy(client, to.sandboxId()).upload(local, to.path());
                output.object(totals(t), t.describe(to.sandboxId() + ":" + to.path()));
                return 0;
            }
            JsonNode entry = client.upload(to.route(), local);
            output.object(entry == null ? ApiClient.MAPPER.createObjectNode() : entry,
                    "copied " + Files.size(local) + " bytes to " + to.sandboxId() + ":" + to.path());
            return 0;
        }
        if (recursive && from.path().length() > 1 && from.path().endsWith("/")) {
            from = new Remote(from.sandboxId(), from.path().substring(0, from.path().length() - 1));
        }
        if (from.path().isEmpty() || from.path().endsWith("/")) {
            throw new ClientException("give the file to copy: " + source + "NAME" + (recursive ? " (or the directory)" : ""));
        }
        if (target.equals("-")) {
            OutputStream stdout = System.out;
            client.download(from.route(), stdout);
            stdout.flush();
            return 0;
        }
        Path local = Path.of(target);
        if (Files.isDirectory(local)) {
            local = local.resolve(Path.of(from.path()).getFileName().toString());
        }
        TreeCopy tree = new TreeCopy(client, from.sandboxId());
        if (recursive && "dir".equals(client.get(from.statRoute()).path("type").asText())) {
            TreeCopy.Totals t = tree.download(from.path(), local);
            output.object(totals(t), t.describe(local.toString()));
            return 0;
        }
        long bytes = tree.downloadFile(from.route(), local);
        output.object(ApiClient.MAPPER.createObjectNode().put("path", local.toString()).put("size", bytes),
                "copied " + bytes + " bytes to " + local);
        return 0;
    }
}
