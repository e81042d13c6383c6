package io.agentbox.manager.cli;

import io.agentbox.manager.bench.BenchOptions;
import io.agentbox.manager.bench.BenchRun;
import io.agentbox.protocol.image.ImageReference;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code agentbox bench}: sandbox benchmarks against any hub (or worker) URL; prints one table. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Benchmarks an AgentBox endpoint through the E2B API: warm claim latency at several "
                + "concurrencies, commands.run('true') latency, burst claims/s, sustained create -> run -> kill "
                + "cycles/s and (for a server on this host) memory per idle sandbox. Progress goes to stderr, "
                + "one markdown table to stdout. Every sandbox it creates it kills.",
                "Claims need idle sandboxes: give the pool at least max(--claims, --burst) warm sandboxes, and "
                        + "--management-url so that rounds wait for the pool to refill."})
final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--url", description = "E2B API URL of the hub (default: $E2B_API_URL).")
    URI url;

    @Option(names = "--sandbox-url", description = "envd base URL, routed by header (default: $E2B_SANDBOX_URL, else --url).")
    URI sandboxUrl;

    @Option(names = "--api-key-file", description = "File holding the API key (default: $E2B_API_KEY).")
    Path apiKeyFile;

    @Option(names = "--worker-url", description = "A worker's local public API (agentbox worker --api-port) to run the "
            + "claim rounds against as well, to show what the hub and tunnel add.")
    URI workerUrl;

    @Option(names = "--management-url", description = "Management API of the hub, e.g. http://127.0.0.1:9004: lets "
            + "rounds wait for the pool to refill, and is needed for --density.")
    URI managementUrl;

    @Option(names = "--manager-token-file", description = "File holding the manager token (default: $AGENTBOX_MANAGER_TOKEN).")
    Path managerTokenFile;

    @Option(names = "--template", defaultValue = "base", description = "Template to claim from (default: ${DEFAULT-VALUE}).")
    String template;

    @Option(names = "--claims", defaultValue = "200", description = "Timed claims per concurrency level (default: ${DEFAULT-VALUE}).")
    int claims;

    @Option(names = "--concurrency", split = ",", defaultValue = "1,16,64",
            description = "Concurrency levels of the claim rounds (default: ${DEFAULT-VALUE}).")
    List<Integer> concurrency;

    @Option(names = "--warmup", defaultValue = "100", description = "Untimed claims (and runs) first, for the JIT (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--exec-runs", defaultValue = "200", description = "Timed commands.run('true') in one sandbox; 0 skips (default: ${DEFAULT-VALUE}).")
    int execRuns;

    @Option(names = "--burst", defaultValue = "1000", description = "Claims of the burst round; 0 skips (default: ${DEFAULT-VALUE}).")
    int burst;

    @Option(names = "--burst-concurrency", defaultValue = "64", description = "Concurrency of the burst round (default: ${DEFAULT-VALUE}).")
    int burstConcurrency;

    @Option(names = "--cycle-seconds", defaultValue = "10", description = "Length of the create -> run -> kill round; 0 skips (default: ${DEFAULT-VALUE}).")
    int cycleSeconds;

    @Option(names = "--cycle-concurrency", defaultValue = "8", description = "Loops of the cycle round (default: ${DEFAULT-VALUE}).")
    int cycleConcurrency;

    @Option(names = "--density", defaultValue = "0", description = "Idle sandboxes for the memory measurement; 0 skips. "
            + "Needs --server-pid and --management-url (default: ${DEFAULT-VALUE}).")
    int density;

    @Option(names = "--server-pid", description = "Pid of the local server JVM (standalone or worker) for --density.")
    Long serverPid;

    @Option(names = "--image", description = "An image the workers can get (pulled, or loaded with `agentbox image import`): "
            + "the claim rounds run again on a temporary template of this image, beside --template in the same run, "
            + "with the ratio of their medians; the --density template is of this image too. Needs --management-url.")
    String image;

    @Option(names = "--snapshots", defaultValue = "0", description = "Resets and snapshots (of 50 MB changed) to time, "
            + "then the claim rounds again from a snapshot's warm pool with the ratio to --template's (needs "
            + "--management-url for the pool); 0 skips (default: ${DEFAULT-VALUE}).")
    int snapshots;

    @Option(names = "--podman-archive", description = "An archive of --image (`docker save` or OCI) for the peer "
            + "rounds: Debian's podman CLI loads it into a throwaway store and runs the same image beside ours (first "
            + "command in a new container, one-shot `run --rm`, create -> command -> remove cycles, exec), with the "
            + "ratios. Needs --image, --management-url and root on this host (podman is run here).")
    Path podmanArchive;

    @Option(names = "--podman-runs", defaultValue = "50", description = "Timed samples of each podman peer measure, "
            + "and of ours beside it (default: ${DEFAULT-VALUE}).")
    int podmanRuns;

    @Override
    public Integer call() throws Exception {
        CommandLine cli = spec.commandLine();
        URI api = url != null ? url : envUri(cli, "E2B_API_URL", "--url");
        URI envd = sandboxUrl != null ? sandboxUrl
                : System.getenv("E2B_SANDBOX_URL") != null ? URI.create(System.getenv("E2B_SANDBOX_URL")) : api;
        String key = secret(cli, apiKeyFile, "E2B_API_KEY", "--api-key-file");
        String managerToken = managementUrl == null ? null
                : secret(cli, managerTokenFile, "AGENTBOX_MANAGER_TOKEN", "--manager-token-file");
        atLeast(cli, "--claims", claims, 1);
        for (int c : concurrency) {
            if (c < 1 || c > MAX_CONCURRENCY) {
                throw new ParameterException(cli, "every --concurrency must be 1.." + MAX_CONCURRENCY + ", got " + c);
            }
        }
        atLeast(cli, "--burst", burst, 0);
        atLeast(cli, "--exec-runs", execRuns, 0);
        atLeast(cli, "--cycle-seconds", cycleSeconds, 0);
        atLeast(cli, "--density", density, 0);
        atLeast(cli, "--warmup", warmup, 0);
        atLeast(cli, "--snapshots", snapshots, 0);
        atLeast(cli, "--burst-concurrency", burstConcurrency, 1);
        atLeast(cli, "--cycle-concurrency", cycleConcurrency, 1);
        if (burstConcurrency > MAX_CONCURRENCY || cycleConcurrency > MAX_CONCURRENCY) {
            throw new ParameterException(cli, "--burst-concurrency and --cycle-concurrency must be at most " + MAX_CONCURRENCY);
        }
        if (density > 0 && (serverPid == null || managementUrl == null)) {
            throw new ParameterException(cli, "--density needs --server-pid and --management-url");
        }
        if (image != null && managementUrl == null) {
            throw new ParameterException(cli, "--image needs --management-url (the bench creates the image template)");
        }
        if (image != null) {
            try {
                image = ImageReference.parse(image).toString();
            } catch (IllegalArgumentException e) {
                throw new ParameterException(cli, "--image: " + e.getMessage());
            }
        }
        if (podmanArchive != null) {
            if (image == null) {
                throw new ParameterException(cli, "--podman-archive needs --image (the same image, for our side)");
            }
            if (!Files.isReadable(podmanArchive)) {
                throw new ParameterException(cli, "--podman-archive " + podmanArchive + ": no such readable file");
            }
            atLeast(cli, "--podman-runs", podmanRuns, 1);
        }
        if (serverPid != null && ProcessHandle.of(serverPid).isEmpty()) {
            throw new ParameterException(cli, "--server-pid " + serverPid + ": no such process on this host");
        }
        BenchOptions o = new BenchOptions(api, envd, key, workerUrl, managementUrl, managerToken, template, claims,
                List.copyOf(concurrency), warmup, execRuns, burst, burstConcurrency, cycleSeconds, cycleConcurrency,
                density, serverPid == null ? -1 : serverPid, image, snapshots, podmanArchive, podmanRuns);
        BenchRun.run(o, System.err).print(System.out);
        return 0;
    }

    static final int MAX_CONCURRENCY = 1024;

    private static void atLeast(CommandLine cli, String option, int value, int min) {
        if (value < min) {
            throw new ParameterException(cli, option + " must be at least " + min + ", got " + value);
        }
    }

    private static URI envUri(CommandLine cli, String env, String option) {
        String v = System.getenv(env);
        if (v == null || v.isBlank()) {
            throw new ParameterException(cli, "give " + option + " or set $" + env);
        }
        return URI.create(v);
    }

    private static String secret(CommandLine cli, Path file, String env, String option) throws IOException {
        if (file != null) {
            String v = Files.readString(file).strip();
            if (v.isEmpty()) {
                throw new ParameterException(cli, option + " " + file + " is empty");
            }
            return v;
        }
        String v = System.getenv(env);
        if (v == null || v.isBlank()) {
            throw new ParameterException(cli, "give " + option + " or set $" + env);
        }
        return v.strip();
    }
}
