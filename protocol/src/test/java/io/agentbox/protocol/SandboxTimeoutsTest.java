package io.agentbox.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SandboxTimeoutsTest {

    @Test
    void anEndTimeMustBeAheadAndWithinTheMaximumPlusClockSkew() {
        long now = 1_700_000_000_000L;
        long max = SandboxTimeouts.MAX_SECONDS * 1000L;
        assertThat(SandboxTimeouts.checkEndAt(now + 1, now)).isNull();
        assertThat(SandboxTimeouts.checkEndAt(now + max + SandboxTimeouts.CLOCK_SKEW_MS, now)).isNull();
        assertThat(SandboxTimeouts.checkEndAt(now, now)).isEqualTo("end_at_ms " + now + " is not in the future (now " + now + ")");
        assertThat(SandboxTimeouts.checkEndAt(now + max + SandboxTimeouts.CLOCK_SKEW_MS + 1, now))
                .isEqualTo("end_at_ms " + (now + max + SandboxTimeouts.CLOCK_SKEW_MS + 1) + " is more than 86400 s ahead (now "
                        + now + ")");
    }

    @Test
    void secondsRunFromOneToTheMaximum() {
        assertThat(SandboxTimeouts.checkSeconds(1)).isNull();
        assertThat(SandboxTimeouts.checkSeconds(86_400)).isNull();
        assertThat(SandboxTimeouts.checkSeconds(0)).isEqualTo("timeout must be between 1 and 86400 seconds, got 0");
        assertThat(SandboxTimeouts.checkSeconds(86_401)).isEqualTo("timeout must be between 1 and 86400 seconds, got 86401");
    }
}
