package io.agentbox.worker.runtime.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Liveness of a sandbox whose init a reset replaces. The interleaving that let a live sandbox be
 * killed (the pool's {@code get}, for a pause or connect, asked "alive?" while a concurrent reset
 * ended the old init: a CI run of StandalonePauseSdkTest had a reset succeed on the worker and
 * then answer 404, the sandbox removed meanwhile) is replayed exactly: the reset runs inside the
 * check, between reading the init and finding it ended.
 */
class ContainerInitTest {
    private static final ProcessHandle OLD = ProcessHandle.current();
    private static final ProcessHandle NEW = ProcessHandle.current().parent().orElseThrow();

    private final Set<Long> ended = new HashSet<>();

    @Test
    void aResetThatReplacesTheInitWhileItIsCheckedLeavesTheSandboxRunning() {
        ContainerInit init = new ContainerInit(OLD);
        boolean running = init.running(pid -> {
            if (pid == OLD.pid()) { // the whole reset happens here: replaced, settled, old init gone
                init.replacing();
                ended.add(OLD.pid());
                init.replace(NEW);
                init.settled();
            }
            return ended.contains(pid);
        });
        assertThat(running).isTrue();
        assertThat(init.pid()).isEqualTo(NEW.pid());
        assertThat(init.running(ended::contains)).isTrue();
    }

    @Test
    void aResetUnderWayWhenTheOldInitIsSeenEndedLeavesTheSandboxRunning() {
        ContainerInit init = new ContainerInit(OLD);
        boolean running = init.running(pid -> {
            init.replacing(); // the reset has ended the old init, its new one is not there yet
            ended.add(OLD.pid());
            return ended.contains(pid);
        });
        assertThat(running).isTrue();
        assertThat(init.running(ended::contains)).as("still resetting").isTrue();
        init.settled(); // the reset failed without a new init
        assertThat(init.running(ended::contains)).isFalse();
    }

    @Test
    void anInitThatEndsWithoutAResetIsASandboxThatDied() {
        ContainerInit init = new ContainerInit(OLD);
        assertThat(init.running(ended::contains)).isTrue();
        ended.add(OLD.pid());
        assertThat(init.running(ended::contains)).isFalse();
    }

    @Test
    void aFinishedResetsNewInitDecidesAlone() {
        ContainerInit init = new ContainerInit(OLD);
        init.replacing();
        ended.add(OLD.pid());
        init.replace(NEW);
        init.settled();
        assertThat(init.running(ended::contains)).isTrue();
        ended.add(NEW.pid());
        assertThat(init.running(ended::contains)).as("the new init ended on its own").isFalse();
    }
}
