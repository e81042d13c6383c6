package io.agentbox.worker.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Debian-like image the tests build offline from this host's own programs: the named
 * executables and every shared library {@code ldd} says they need (the dynamic loader included),
 * with merged-/usr symlinks ({@code /bin -> usr/bin}, ...), {@code /root} (0700), {@code /etc/passwd} and
 * {@code /etc/group} holding only root (so the runtime must add {@code user}), {@code /tmp} and
 * {@code /home}. One uncompressed layer; big (node alone is tens of MB), so push it once per run.
 */
public final class HostToolsImage {
    /** What the E2B acceptance file runs inside a sandbox, besides the runtime's own tools. */
    public static final List<String> E2B_ACCEPTANCE_TOOLS = List.of("bash", "sh", "cat", "echo", "ls", "mkdir", "rm", "mv",
            "chmod", "touch", "sleep", "id", "hostname", "pwd", "env", "stat", "head", "tail", "wc", "grep", "sed", "find",
            "setsid", "script", "stty", "tty", "inotifywait", "node", "kill", "true", "false");
    private static final Pattern LDD_PATH = Pattern.compile("(/\\S+) \\(0x");

    private HostToolsImage() {}

    /** The image; @throws IllegalStateException naming a tool this host lacks */
    public static TestImages.Image build(String name, List<String> tools) throws IOException, InterruptedException {
        Map<String, Path> files = new TreeMap<>();
        Map<String, String> links = new TreeMap<>();
        for (String tool : tools) {
            Path exe = which(tool);
            add(exe, files, links);
            for (Path lib : libraries(exe)) {
                add(lib, files, links);
            }
        }
        LayerTar tar = new LayerTar();
        Set<String> dirs = new TreeSet<>(List.of("usr", "usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "etc", "home",
                "var", "var/tmp"));
        for (String f : concat(files.keySet(), links.keySet())) {
            for (int i = f.indexOf('/'); i > 0; i = f.indexOf('/', i + 1)) {
                dirs.add(f.substring(0, i));
            }
        }
        List<String> sorted = new ArrayList<>(dirs);
        sorted.sort((a, b) -> Integer.compare(a.split("/").length, b.split("/").length));
        for (String d : sorted) {
            tar.dir(d);
        }
        tar.dir("tmp", 01777, 0, 0);
        tar.dir("root", 0700, 0, 0); // as Debian has it: the default user cannot look inside
        for (String[] link : new String[][] {{"bin", "usr/bin"}, {"sbin", "usr/sbin"}, {"lib", "usr/lib"}, {"lib64", "usr/lib64"}}) {
            tar.symlink(link[0], link[1]);
        }
        for (Map.Entry<String, Path> f : files.entrySet()) {
            tar.file(f.getKey(), Files.readAllBytes(f.getValue()), 0755, 0, 0, Map.of());
        }
        links.forEach(tar::symlink);
        tar.file("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n", 0644);
        tar.file("etc/group", "root:x:0:\n", 0644);
        tar.file("etc/hostname", "image\n", 0644);
        return TestImages.image(name, TestImages.layer(tar.tar(), TestImages.Compress.NONE));
    }

    /** Records {@code p} (a symlink as a symlink, followed to what it names) under its image path. */
    private static void add(Path p, Map<String, Path> files, Map<String, String> links) throws IOException {
        for (int hops = 0; hops < 16; hops++) {
            String rel = rel(p.toAbsolutePath().normalize());
            if (files.containsKey(rel) || links.containsKey(rel)) {
                return;
            }
            if (!Files.isSymbolicLink(p)) {
                files.put(rel, p);
                return;
            }
            Path target = Files.readSymbolicLink(p);
            links.put(rel, target.toString());
            p = p.getParent().resolve(target);
        }
        throw new IllegalStateException("too many symlinks at " + p);
    }

    private static List<String> concat(Set<String> a, Set<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static Path which(String tool) {
        for (String dir : List.of("/usr/bin", "/usr/sbin", "/usr/local/bin")) {
            Path p = Path.of(dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new IllegalStateException(tool + " is not installed on this host (needed in the test image)");
    }

    private static List<Path> libraries(Path exe) throws IOException, InterruptedException {
        Process ldd = new ProcessBuilder("ldd", exe.toString()).redirectErrorStream(true).start();
        String out = new String(ldd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        ldd.waitFor(30, TimeUnit.SECONDS);
        List<Path> libs = new ArrayList<>();
        Matcher m = LDD_PATH.matcher(out);
        while (m.find()) {
            libs.add(Path.of(m.group(1)));
        }
        return libs;
    }

    private static String rel(Path p) {
        String s = p.toString();
        // through the merged-/usr links the image provides
        for (String[] m : new String[][] {{"/bin/", "usr/bin/"}, {"/sbin/", "usr/sbin/"}, {"/lib/", "usr/lib/"}, {"/lib64/", "usr/lib64/"}}) {
            if (s.startsWith(m[0])) {
                return m[1] + s.substring(m[0].length());
            }
        }
        return s.substring(1);
    }
}
