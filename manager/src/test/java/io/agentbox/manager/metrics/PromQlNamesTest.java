package io.agentbox.manager.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The metric-name extraction the dashboard test relies on, on the shapes the dashboard uses. */
class PromQlNamesTest {
    @Test
    void functionsLabelsDurationsAndVariablesAreNotMetricNames() {
        assertThat(PromQlNames.of("histogram_quantile(0.99, sum by (le, route) (rate(agentbox_x_seconds_bucket"
                + "{route!~\"port|/process.Process/Start\", cluster=~\"$cluster\"}[$__rate_interval])))"))
                .containsExactly("agentbox_x_seconds_bucket");
        assertThat(PromQlNames.of("sum by (cluster, template) (a{x=\"1\"}) / sum by (cluster, template) (b > 0)"))
                .containsExactly("a", "b");
        assertThat(PromQlNames.of("max(up) or on (job) vector(1e3) unless increase(c_total[1h]) offset 5m"))
                .containsExactly("c_total", "up");
        assertThat(PromQlNames.of("agentbox_tunnel_rtt_seconds{cluster=~\"${cluster}\"}"))
                .containsExactly("agentbox_tunnel_rtt_seconds");
    }

    @Test
    void aBucketNeedsAHistogramFamily() {
        Scrape s = Scrape.parse("""
                # HELP h_seconds help
                # TYPE h_seconds histogram
                h_seconds_bucket{le="0.1"} 1
                h_seconds_count 1
                h_seconds_sum 0.05
                # TYPE g_bucket gauge
                g_bucket 3
                # TYPE c counter
                c_total{a="b"} 2.0
                """);
        assertThat(s.has("h_seconds_bucket")).isTrue();
        assertThat(s.has("h_seconds_count")).isTrue();
        assertThat(s.has("h_seconds_sum")).isTrue();
        assertThat(s.has("h_seconds")).as("a histogram has no sample without suffix").isFalse();
        assertThat(s.has("g_bucket")).as("a gauge named like a bucket").isFalse();
        assertThat(s.has("c_total")).isTrue();
        assertThat(s.has("c")).isFalse();
    }
}
