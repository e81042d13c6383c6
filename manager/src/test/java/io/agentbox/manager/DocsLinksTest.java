package io.agentbox.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Keeps the repository's pointers into {@code docs/} true: every {@code docs/<file>.md[#anchor]}
 * named in any source, test, proto, script or doc, and every relative markdown link between docs,
 * must name a file that exists and, with an anchor, a heading of that file (GitHub's anchor rules:
 * lower-cased, punctuation dropped, spaces to hyphens, {@code -1}, {@code -2} for repeats). Also
 * refuses citations of research notes that are not in the repository: the facts belong in
 * {@code docs/} (docs/e2b-wire.md, docs/tunnel-protocol.md, docs/local-runtime.md).
 */
class DocsLinksTest {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** Directories never scanned: VCS data, build output, installed npm packages. */
    static final Set<String> SKIP_DIRS = Set.of(".git", "target", "node_modules");
    /** Larger files are data, not sources. */
    static final long MAX_BYTES = 2 << 20;
    /** {@code docs/<file>.md#<anchor>} not preceded by a path character (so {@code other-repo/docs/x.md} is not ours). */
    static final Pattern DOC_REF = Pattern.compile("(?<![\\w./-])docs/([\\w.-]+\\.(?:md|yaml))(?:#([\\w-]+))?");
    /** A relative markdown link in a doc: {@code ](file.md#anchor)}, {@code ](#anchor)}. */
    static final Pattern MD_LINK = Pattern.compile("\\]\\((?![a-z][a-z0-9+.-]*:)([^)#\\s]*)(?:#([^)\\s]*))?\\)");
    /** Research notes kept outside the repository; cite docs/ instead. Split so this file does not match itself. */
    static final Pattern OUTSIDE_NOTES = Pattern.compile(
            "(?:e2b-" + "protocol|e2b-" + "templates-snapshots|java-" + "stack|oci-" + "local-runtime|agentbox-" + "upstream|anchors)\\.md"
                    + "|shared/" + "reference|docs/" + "reference");
    /**
     * {@code docs/} paths of other projects that the regex cannot tell from ours (a table cell naming
     * a file of kubernetes-sigs/agent-sandbox in docs/benchmarks.md).
     */
    static final Set<String> OTHER_PROJECTS = Set.of("apf-insulation.md");

    static List<Path> files;
    static final Map<Path, Set<String>> anchors = new HashMap<>();

    @BeforeAll
    static void scan() throws IOException {
        assertThat(ROOT.resolve("docs")).as("repository root " + ROOT).isDirectory();
        List<Path> found = new ArrayList<>();
        Files.walkFileTree(ROOT, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                return SKIP_DIRS.contains(dir.getFileName().toString()) ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile() && attrs.size() <= MAX_BYTES) {
                    found.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        found.sort(null);
        files = found;
    }

    @Test
    void everyDocsReferenceNamesAnExistingFileAndAnchor() {
        List<String> problems = new ArrayList<>();
        int refs = 0;
        for (Path f : files) {
            String text = text(f);
            if (text == null) {
                continue;
            }
            Matcher m = DOC_REF.matcher(text);
            while (m.find()) {
                if (OTHER_PROJECTS.contains(m.group(1))) {
                    continue;
                }
                refs++;
                check(f, text, m.start(), ROOT.resolve("docs").resolve(m.group(1)), m.group(2), m.group(), problems);
            }
        }
        assertThat(problems).as("broken docs/ references").isEmpty();
        assertThat(refs).as("docs/ references found (a scan that finds none proves nothing)").isGreaterThan(150);
    }

    @Test
    void everyRelativeLinkBetweenDocsResolves() {
        List<String> problems = new ArrayList<>();
        int links = 0;
        for (Path f : files) {
            if (!f.toString().endsWith(".md")) {
                continue;
            }
            String text = text(f);
            Matcher m = MD_LINK.matcher(text);
            while (m.find()) {
                links++;
                Path target = m.group(1).isEmpty() ? f : f.getParent().resolve(m.group(1)).normalize();
                check(f, text, m.start(), target, m.group(2), m.group(), problems);
            }
        }
        assertThat(problems).as("broken markdown links").isEmpty();
        assertThat(links).as("markdown links found").isGreaterThan(20);
    }

    @Test
    void nothingCitesNotesOutsideTheRepository() {
        List<String> problems = new ArrayList<>();
        for (Path f : files) {
            String text = text(f);
            if (text == null || f.getFileName().toString().equals("DocsLinksTest.java")) {
                continue;
            }
            Matcher m = OUTSIDE_NOTES.matcher(text);
            while (m.find()) {
                problems.add(where(f, text, m.start()) + ": cites " + m.group() + ", which is not in the repository; state the fact in docs/ and cite that");
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void anchorsFollowGitHubRules() {
        assertThat(anchorsOf(List.of(
                "# Title", "## Sandbox routes", "### `Template.build` (E2B's, §3.1)", "## Sandbox routes",
                "```", "## not a heading", "```", "<a id=\"custom\"></a>")))
                .containsExactly("title", "sandbox-routes", "templatebuild-e2bs-31", "sandbox-routes-1", "custom");
    }

    // ---- helpers ------------------------------------------------------------------------------

    static void check(Path from, String text, int at, Path target, String anchor, String ref, List<String> problems) {
        if (!Files.isRegularFile(target)) {
            problems.add(where(from, text, at) + ": " + ref + ": no file " + ROOT.relativize(target));
            return;
        }
        if (anchor == null || anchor.isEmpty() || !target.toString().endsWith(".md")) {
            return;
        }
        Set<String> known = anchors.computeIfAbsent(target, t -> anchorsOf(lines(t)));
        if (!known.contains(anchor)) {
            problems.add(where(from, text, at) + ": " + ref + ": no heading with anchor #" + anchor + " in "
                    + ROOT.relativize(target) + " (it has " + known + ")");
        }
    }

    /** GitHub's heading anchors of a markdown file, in order, plus explicit {@code <a id|name>} anchors. */
    static Set<String> anchorsOf(List<String> lines) {
        Set<String> out = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        Pattern explicit = Pattern.compile("<a (?:id|name)=\"([^\"]+)\"");
        for (String line : lines) {
            if (line.startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher e = explicit.matcher(line);
            while (e.find()) {
                out.add(e.group(1));
            }
            Matcher h = Pattern.compile("^#{1,6} +(.*?)#*\\s*$").matcher(line);
            if (h.matches()) {
                String slug = h.group(1).toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "")
                        .replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                out.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return out;
    }

    static String where(Path f, String text, int at) {
        int line = 1;
        for (int i = 0; i < at; i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return ROOT.relativize(f) + ":" + line;
    }

    /** The file as UTF-8 text, or null for a binary file (one with a NUL byte). */
    static String text(Path f) {
        try {
            byte[] b = Files.readAllBytes(f);
            for (byte x : b) {
                if (x == 0) {
                    return null;
                }
            }
            return new String(b, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> lines(Path f) {
        return List.of(text(f).split("\n", -1));
    }
}
