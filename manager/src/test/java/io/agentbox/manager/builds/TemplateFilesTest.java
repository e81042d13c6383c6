package io.agentbox.manager.builds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hub's COPY archive store and the upload links' tokens (docs/e2b-wire.md#archive-upload). */
class TemplateFilesTest {
    static final String HASH = "ab".repeat(32);

    @TempDir
    Path dir;

    @Test
    void parallelUploadsOfOneHashLeaveOneWholeArchiveAndNoTemporaryFiles() throws Exception {
        TemplateFiles files = new TemplateFiles(dir, 1 << 20);
        byte[] body = new byte[300_000];
        new java.util.Random(7).nextBytes(body);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Long>> puts = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            puts.add(pool.submit(() -> files.put("tpl1", HASH, body.length, new ByteArrayInputStream(body))));
        }
        for (Future<Long> f : puts) {
            assertThat(f.get()).isEqualTo(body.length);
        }
        pool.shutdown();
        assertThat(Files.readAllBytes(files.file("tpl1", HASH).orElseThrow())).isEqualTo(body);
        try (var s = Files.list(dir.resolve("tpl1"))) {
            assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly(HASH);
        }
        assertThat(files.file("tpl2", HASH)).as("scoped per template").isEmpty();
    }

    @Test
    void shortLongAndOversizedBodiesAreRefusedAndLeaveNothing() throws Exception {
        TemplateFiles files = new TemplateFiles(dir, 1000);
        assertThatThrownBy(() -> files.put("t", HASH, 10, new ByteArrayInputStream(new byte[5])))
                .isInstanceOf(TemplateFiles.BadUpload.class).hasMessageContaining("ended after 5 of 10");
        assertThatThrownBy(() -> files.put("t", HASH, 10, new ByteArrayInputStream(new byte[11])))
                .isInstanceOf(TemplateFiles.BadUpload.class).hasMessageContaining("longer than its Content-Length");
        assertThatThrownBy(() -> files.put("t", HASH, 5000, new ByteArrayInputStream(new byte[5000])))
                .isInstanceOfSatisfying(TemplateFiles.BadUpload.class, e -> assertThat(e.tooLarge()).isTrue());
        assertThatThrownBy(() -> files.put("t", HASH, -1, new ByteArrayInputStream(new byte[1001])))
                .as("chunked, past the limit").isInstanceOfSatisfying(TemplateFiles.BadUpload.class, e -> assertThat(e.tooLarge()).isTrue());
        assertThat(files.file("t", HASH)).isEmpty();
        try (var s = Files.list(dir.resolve("t"))) {
            assertThat(s.toList()).as("no temporary file left").isEmpty();
        }
        assertThat(files.put("t", HASH, -1, new ByteArrayInputStream(new byte[1000]))).isEqualTo(1000);
        assertThatThrownBy(() -> files.put("t", "../x", 1, new ByteArrayInputStream(new byte[1])))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void tokensAreBoundToTemplateHashAndExpiry() {
        UploadTokens tokens = new UploadTokens(new byte[32]);
        long exp = 2_000_000_000L;
        String t = tokens.sign("tpl1", HASH, exp);
        assertThat(tokens.verify("tpl1", HASH, String.valueOf(exp), t, exp - 1)).isTrue();
        assertThat(tokens.verify("tpl2", HASH, String.valueOf(exp), t, exp - 1)).isFalse();
        assertThat(tokens.verify("tpl1", "cd".repeat(32), String.valueOf(exp), t, exp - 1)).isFalse();
        assertThat(tokens.verify("tpl1", HASH, String.valueOf(exp + 1), t, exp - 1)).as("a longer expiry").isFalse();
        assertThat(tokens.verify("tpl1", HASH, String.valueOf(exp), t, exp + 1)).as("expired").isFalse();
        assertThat(tokens.verify("tpl1", HASH, null, t, 0)).isFalse();
        assertThat(new UploadTokens(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23, 24, 25, 26, 27, 28, 29, 30, 31, 32}).verify("tpl1", HASH, String.valueOf(exp), t, 0))
                .as("another hub's secret").isFalse();
    }
}
