package io.agentbox.manager.bench;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;

/**
 * What {@code agentbox bench} measures and where (see {@code BenchCommand} for each option).
 *
 * @param workerUrl null: no worker-local rounds
 * @param managementUrl null: fixed pauses instead of refill waits, no density
 * @param serverPid -1: no density
 * @param image null: no image-template rounds; else a normalised image reference the workers can get
 * @param snapshots resets and snapshots timed in the snapshot rounds; 0 skips them (and the snapshot-pool claims)
 * @param podmanArchive null: no podman peer rounds; else an archive of {@code image} ({@code docker save} or OCI)
 *     that podman loads, so both sides run the same image
 * @param podmanRuns timed samples of each podman peer measure (and of ours beside it)
 */
public record BenchOptions(URI apiUrl, URI sandboxUrl, String apiKey, URI workerUrl, URI managementUrl,
                           String managerToken, String template, int claims, List<Integer> concurrency, int warmup,
                           int execRuns, int burst, int burstConcurrency, int cycleSeconds, int cycleConcurrency,
                           int density, long serverPid, String image, int snapshots, Path podmanArchive,
                           int podmanRuns) {}
