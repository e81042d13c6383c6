package io.agentbox.manager.nativeapi;

import io.agentbox.protocol.v1.ExecStart;
import io.agentbox.protocol.v1.ProcessConfig;
import io.agentbox.protocol.v1.ProcessInfo;
import java.util.List;
import java.util.Map;

/** How a native command becomes a worker process: {@code bash -l -c <cmd>}, as the E2B SDK runs commands. */
final class Commands {
    static final String SHELL = "/bin/bash";

    private Commands() {}

    /** {@code user}: absent = the sandbox's default user; else {@code user} or {@code root} (400 otherwise). */
    static String user(String user) {
        if (user == null || user.isEmpty()) {
            return "";
        }
        if (!user.equals("user") && !user.equals("root")) {
            throw V1Errors.of(400, "user '" + io.agentbox.manager.http.InputText.quote(user)
                    + "' is not a sandbox user; use 'user' (uid 1000) or 'root'");
        }
        return user;
    }

    static ProcessConfig shell(String cmd, Map<String, String> env, String cwd, String user) {
        return ProcessConfig.newBuilder().setCmd(SHELL).addAllArgs(List.of("-l", "-c", cmd)).putAllEnvs(env)
                .setCwd(cwd == null ? "" : cwd).setUser(user).build();
    }

    static ExecStart.Builder start(String sandboxId, ProcessConfig process, long timeoutMs, boolean stdin, String tag) {
        return ExecStart.newBuilder().setSandboxId(sandboxId).setProcess(process).setTimeoutMs(timeoutMs)
                .setStdin(stdin).setTag(tag == null ? "" : tag);
    }

    /** The command line of a running process: the {@code cmd} of a native or SDK command, else its argv joined. */
    static String commandLine(ProcessInfo p) {
        ProcessConfig c = p.getConfig();
        if (c.getCmd().equals(SHELL) && c.getArgsCount() == 3 && c.getArgs(0).equals("-l") && c.getArgs(1).equals("-c")) {
            return c.getArgs(2);
        }
        StringBuilder b = new StringBuilder(c.getCmd());
        c.getArgsList().forEach(a -> b.append(' ').append(a));
        return b.toString();
    }
}
