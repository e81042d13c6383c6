package io.agentbox.worker.process;

import io.agentbox.protocol.v1.ProcessExited;

/**
 * Maps a host exit value to E2B's end event: exit code, or -1 with "signal: killed" when the
 * process died of a signal (envd semantics, Go's {@code ProcessState.String()} wording).
 */
final class ExitStatus {
    private ExitStatus() {}

    /**
     * @param value host exit value (nsenter re-raises a fatal signal, so Java sees 128 + signal)
     * @param sentSignal signal the worker sent to the process (0 = none); 128 + n is only read as
     *     a signal when n was sent by us or n is SIGKILL (OOM killer), since a plain
     *     {@code exit 143} is indistinguishable on the host
     */
    static ProcessExited of(int value, int sentSignal) {
        int sig = value - 128;
        if (value > 128 && value <= 128 + 64 && (sig == sentSignal || sig == 9)) {
            String status = "signal: " + signalName(sig);
            return ProcessExited.newBuilder().setExitCode(-1).setExited(false).setStatus(status).setError(status).build();
        }
        String status = "exit status " + value;
        ProcessExited.Builder b = ProcessExited.newBuilder().setExitCode(value).setExited(true).setStatus(status);
        if (value != 0) {
            b.setError(status);
        }
        return b.build();
    }

    static String signalName(int sig) {
        return switch (sig) {
            case 1 -> "hangup";
            case 2 -> "interrupt";
            case 3 -> "quit";
            case 6 -> "aborted";
            case 9 -> "killed";
            case 11 -> "segmentation fault";
            case 13 -> "broken pipe";
            case 15 -> "terminated";
            default -> "signal " + sig;
        };
    }
}
