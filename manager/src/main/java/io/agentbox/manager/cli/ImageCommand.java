package io.agentbox.manager.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.agentbox.manager.cli.client.ClientFactory;
import io.agentbox.manager.cli.client.Progress;
import io.agentbox.protocol.image.ImageReference;
import io.agentbox.worker.WorkerDirs;
import io.agentbox.worker.image.registry.RegistryClient;
import io.agentbox.worker.image.registry.RegistryConfig;
import io.agentbox.worker.image.store.PullProgress;
import io.agentbox.worker.image.store.ImageStore;
import io.agentbox.worker.image.store.StoredImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code agentbox image pull|import|ls}: the image store of the worker on <em>this machine</em>
 * (under its {@code --data-dir}), not through the hub: a worker pulls the images its templates name
 * by itself, so these commands are for preloading a worker (air-gapped hosts, private archives) and
 * looking at what it holds. Thin over {@link ImageStore}; pulls and imports show a progress bar on
 * stderr (plain lines when it is not a terminal).
 */
@Command(name = "image", mixinStandardHelpOptions = true,
        description = "Manage the images of the worker on THIS machine (its image store under --data-dir; "
                + "not through the hub: workers pull what their templates name by themselves).",
        subcommands = {ImageCommand.Pull.class, ImageCommand.Import.class, ImageCommand.Ls.class})
final class ImageCommand implements Runnable {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command: pull, import or ls");
    }

    /** The worker data directory option, resolved as {@code agentbox worker} resolves it. */
    static final class DataDirOption {
        @Option(names = "--data-dir",
                description = "The worker's data directory, as given to `agentbox worker --data-dir` "
                        + "(default: $AGENTBOX_DATA_DIR or ~/.agentbox, plus /worker).")
        Path dataDir;

        ImageStore open() throws IOException {
            Path dir = WorkerDirs.sandboxDataDir(dataDir != null ? dataDir : DataDirs.defaultDataDir().resolve("worker"));
            return ImageStore.open(dir);
        }
    }

    @Command(name = "import", mixinStandardHelpOptions = true,
            description = "Load a `docker save` archive or an OCI image layout (directory or tar, optionally gzip or "
                    + "zstd compressed) into the worker's image store; templates can then name the image. Run as the "
                    + "user the worker runs as (root: layer files get the sandboxes' host uids).")
    static final class Import implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FILE", description = "docker save tar, OCI layout directory or OCI layout tar.")
        Path file;

        @Option(names = "--tag", paramLabel = "REF",
                description = "Also store the image as REF (the archive must hold exactly one image); "
                        + "needed when the archive names no image.")
        String tag;

        @CommandLine.Mixin
        DataDirOption data;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (!Files.exists(file)) {
                throw new ParameterException(spec.commandLine(), "no such file or directory: " + file);
            }
            ImageStore store = data.open();
            List<String> refs;
            try (Progress progress = new Progress(err, tty(spec), "importing " + file.getFileName())) {
                refs = store.importArchive(file, tag, p -> report(progress, p));
            } catch (IOException e) {
                err.println("agentbox: import failed: " + e.getMessage());
                err.flush();
                return 1;
            }
            for (String r : refs) {
                StoredImage i = store.find(r).orElseThrow();
                out.println(r + " " + i.manifestDigest());
            }
            out.flush();
            return 0;
        }
    }

    /** Whether progress may be drawn as a bar: the command line was made for a terminal ({@link ClientFactory}). */
    static boolean tty(CommandLine.Model.CommandSpec spec) {
        return spec.commandLine().getFactory() instanceof ClientFactory f && f.tty();
    }

    /**
     * The bar counts fetched bytes and unpacked layers as one measure (half each), since the
     * last layer's unpack may come well after its last byte.
     */
    static void report(Progress progress, PullProgress p) {
        long layerWeight = Math.max(1, p.bytesTotal()) / Math.max(1, p.layersTotal());
        long done = p.bytesDone() + p.layersDone() * layerWeight;
        long total = Math.max(1, p.bytesTotal()) + Math.max(1, p.layersTotal()) * layerWeight;
        progress.update(p.layersTotal() == 0 ? 0 : done, p.layersTotal() == 0 ? 0 : total, p.message());
    }

    @Command(name = "pull", mixinStandardHelpOptions = true,
            description = "Pull an image from its registry into the worker's image store on this machine (a progress "
                    + "bar on stderr); templates naming it then start without a pull. Run as the user the worker runs as.")
    static final class Pull implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @Parameters(index = "0", paramLabel = "REF", description = "OCI image reference, e.g. python:3.12 or 127.0.0.1:5000/app:1.")
        String reference;

        @CommandLine.Mixin
        DataDirOption data;

        @CommandLine.Mixin
        RegistryOptions registry;

        @Override
        public Integer call() throws Exception {
            ImageReference ref;
            try {
                ref = ImageReference.parse(reference);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "REF: " + e.getMessage());
            }
            RegistryConfig config = RegistryConfig.defaults().withInsecure(registry.toSettings(this).insecure());
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            StoredImage image;
            try (RegistryClient client = new RegistryClient(config);
                 Progress progress = new Progress(err, tty(spec), "pulling " + ref)) {
                image = data.open().pull(ref, client, p -> report(progress, p));
            } catch (IOException e) {
                err.println("agentbox: pull failed: " + e.getMessage());
                err.flush();
                return 1;
            }
            out.println(ref + " " + image.manifestDigest());
            out.flush();
            return 0;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List the images in the worker's image store.")
    static final class Ls implements Callable<Integer> {
        @Spec
        CommandLine.Model.CommandSpec spec;

        @CommandLine.Mixin
        DataDirOption data;

        @Option(names = "--output", paramLabel = "FORMAT", defaultValue = "table",
                description = "table or json (default: ${DEFAULT-VALUE}).")
        String output;

        @Override
        public Integer call() throws Exception {
            if (!output.equals("table") && !output.equals("json")) {
                throw new ParameterException(spec.commandLine(), "--output must be table or json, got " + output);
            }
            List<Map<String, Object>> rows = new ArrayList<>();
            for (StoredImage i : data.open().list()) {
                for (String ref : i.references().isEmpty() ? List.of("<none>") : i.references()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("reference", ref);
                    row.put("digest", i.manifestDigest());
                    row.put("size", i.size());
                    row.put("layers", i.layers().size());
                    row.put("created", i.created());
                    rows.add(row);
                }
            }
            PrintWriter out = spec.commandLine().getOut();
            if (output.equals("json")) {
                out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(rows));
            } else {
                String format = "%-50s %-19s %10s %6s  %s%n";
                out.printf(Locale.ROOT, format, "REFERENCE", "DIGEST", "SIZE", "LAYERS", "CREATED");
                for (Map<String, Object> r : rows) {
                    out.printf(Locale.ROOT, format, r.get("reference"), ((String) r.get("digest")).substring(0, 19),
                            size((Long) r.get("size")), r.get("layers"), r.get("created"));
                }
            }
            out.flush();
            return 0;
        }

        private static String size(long bytes) {
            return bytes >= 1_000_000 ? String.format(Locale.ROOT, "%.1f MB", bytes / 1e6)
                    : String.format(Locale.ROOT, "%.1f kB", bytes / 1e3);
        }
    }
}
