package io.agentbox.manager.e2b;

import io.agentbox.manager.auth.Principal;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What {@code GET /agentbox/metrics} shows a caller (Prometheus text format 0.0.4): an admin key
 * sees every meter of the registry (the hub's, as on the management {@code /metrics}); any other
 * key sees only the samples labelled with its own
 * team ({@code team="<its team>"}), so one tenant never learns another's figures or the hub's
 * totals.
 */
final class TeamMetrics {
    static final String TEAM_LABEL = "team";

    private TeamMetrics() {}

    static byte[] scrape(PrometheusMeterRegistry meters, Principal who) {
        if (who.isAdmin()) {
            return meters.scrape().getBytes(StandardCharsets.UTF_8);
        }
        MetricSnapshots.Builder mine = MetricSnapshots.builder();
        for (MetricSnapshot s : meters.getPrometheusRegistry().scrape()) {
            if (s instanceof CounterSnapshot c) {
                List<CounterSnapshot.CounterDataPointSnapshot> points = c.getDataPoints().stream()
                        .filter(p -> who.team().equals(p.getLabels().get(TEAM_LABEL))).toList();
                if (!points.isEmpty()) {
                    mine.metricSnapshot(new CounterSnapshot(c.getMetadata(), points));
                }
            } else if (s instanceof GaugeSnapshot g) {
                List<GaugeSnapshot.GaugeDataPointSnapshot> points = g.getDataPoints().stream()
                        .filter(p -> who.team().equals(p.getLabels().get(TEAM_LABEL))).toList();
                if (!points.isEmpty()) {
                    mine.metricSnapshot(new GaugeSnapshot(g.getMetadata(), points));
                }
            }
            // other kinds carry no team label today; they are hub-wide and left out
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, mine.build());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
