package io.agentbox.worker.process;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentbox.protocol.v1.ProcessExited;
import org.junit.jupiter.api.Test;

class ExitStatusTest {
    @Test
    void mapsExitCodesAndSignalsLikeEnvd() {
        assertThat(ExitStatus.of(0, 0)).isEqualTo(ProcessExited.newBuilder().setExited(true).setStatus("exit status 0").build());
        assertThat(ExitStatus.of(3, 0).getError()).isEqualTo("exit status 3");
        ProcessExited killed = ExitStatus.of(137, 0);
        assertThat(killed.getExitCode()).isEqualTo(-1);
        assertThat(killed.getExited()).isFalse();
        assertThat(killed.getStatus()).isEqualTo("signal: killed");
        assertThat(ExitStatus.of(143, 15).getStatus()).isEqualTo("signal: terminated");
        // 143 without a SIGTERM from us is read as a plain exit code
        assertThat(ExitStatus.of(143, 0).getExitCode()).isEqualTo(143);
    }
}
