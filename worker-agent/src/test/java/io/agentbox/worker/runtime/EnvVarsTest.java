package io.agentbox.worker.runtime;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A set of variables too big for any command to start with is refused where it is given (a create), not later. */
class EnvVarsTest {
    @Test
    void variablesPastTheTotalLimitAreRefusedNamingTheSize() {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < 5000; i++) {
            env.put("V" + i, "x".repeat(100));
        }
        assertThatThrownBy(() -> EnvVars.requireValid(env)).hasMessageContaining("INVALID_ARGUMENT")
                .hasMessageContaining("more than the " + EnvVars.MAX_TOTAL_BYTES);
        Map<String, String> fine = new HashMap<>();
        for (int i = 0; i < 1000; i++) {
            fine.put("V" + i, "x".repeat(100));
        }
        assertThatCode(() -> EnvVars.requireValid(fine)).doesNotThrowAnyException();
    }
}
