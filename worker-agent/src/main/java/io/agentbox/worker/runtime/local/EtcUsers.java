package io.agentbox.worker.runtime.local;

import java.util.ArrayList;
import java.util.List;

/**
 * The sandbox's /etc/passwd and /etc/group: the image's (or host's) entries with {@code user}
 * (uid and gid {@value #UID}, home /home/user) added; an entry that already uses the name or the
 * id is replaced, so {@code id} inside always says {@code uid=1000(user)}.
 */
final class EtcUsers {
    static final int UID = 1000;
    static final String NAME = "user";
    static final String HOME = "/home/user";

    private EtcUsers() {}

    /** @param shell the login shell to give {@code user} (/bin/bash when the image has it, else /bin/sh) */
    static String passwd(String original, String shell) {
        List<String> out = new ArrayList<>();
        for (String line : lines(original)) {
            String[] f = line.split(":", -1);
            if (f.length >= 3 && (f[0].equals(NAME) || f[2].equals(Integer.toString(UID)))) {
                continue;
            }
            out.add(line);
        }
        if (out.stream().noneMatch(l -> l.startsWith("root:"))) {
            out.add(0, "root:x:0:0:root:/root:" + shell);
        }
        out.add(NAME + ":x:" + UID + ":" + UID + ":" + NAME + ":" + HOME + ":" + shell);
        return String.join("\n", out) + "\n";
    }

    static String group(String original) {
        List<String> out = new ArrayList<>();
        for (String line : lines(original)) {
            String[] f = line.split(":", -1);
            if (f.length >= 3 && (f[0].equals(NAME) || f[2].equals(Integer.toString(UID)))) {
                continue;
            }
            out.add(line);
        }
        if (out.stream().noneMatch(l -> l.startsWith("root:"))) {
            out.add(0, "root:x:0:");
        }
        out.add(NAME + ":x:" + UID + ":");
        return String.join("\n", out) + "\n";
    }

    private static List<String> lines(String s) {
        return s == null ? List.of() : s.lines().filter(l -> !l.isBlank()).toList();
    }
}
