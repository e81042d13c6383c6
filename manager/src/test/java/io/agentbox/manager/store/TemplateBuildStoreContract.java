package io.agentbox.manager.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.agentbox.manager.store.StoreException.Reason;
import io.agentbox.manager.store.TemplateBuildStore.Build;
import io.agentbox.manager.store.TemplateBuildStore.LogEntry;
import io.agentbox.manager.store.TemplateBuildStore.Tag;
import io.agentbox.manager.testing.ManualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Built templates, builds, logs and tags (migration V7) on every store database: a second build
 * of a name reuses its template id, status moves only forward, logs are read by offset (empty past
 * the end), a ready build takes its tags and a failed one leaves them, tags move and are removed
 * all or nothing, delete removes everything of a template.
 */
abstract class TemplateBuildStoreContract {
    @TempDir
    Path dataDir;
    final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));
    HubStore hub;
    TemplateBuildStore store;
    final AtomicInteger ids = new AtomicInteger();

    abstract StoreConfig freshDatabase(Path dataDir);

    @BeforeEach
    void open() {
        hub = HubStore.open(freshDatabase(dataDir), dataDir, clock);
        store = hub.templateBuildStore();
    }

    @AfterEach
    void close() {
        hub.close();
    }

    String newId() {
        return "tpl" + ids.incrementAndGet();
    }

    static void assertFails(Reason reason, String message, org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(StoreException.class).hasMessageContaining(message)
                .satisfies(e -> assertThat(((StoreException) e).reason()).isEqualTo(reason));
    }

    @Test
    void aBuildOfANameReusesItsTemplateAndMovesItsTagsOnlyWhenReady() {
        Build first = store.request("acme", "web", List.of("v1", "stable", "v1"), 2, 1024, this::newId);
        assertThat(first.templateId()).isEqualTo("tpl1");
        assertThat(first.status()).isEqualTo(TemplateBuildStore.WAITING);
        assertThat(first.tags()).containsExactly("v1", "stable");
        assertThat(first.buildId()).matches("[0-9a-f-]{36}");
        assertFails(Reason.NOT_FOUND, "not found", () -> store.start("other", first.buildId(), "c1"));
        assertThat(store.start("tpl1", first.buildId(), "c1").status()).isEqualTo(TemplateBuildStore.BUILDING);
        assertFails(Reason.INVALID_ARGUMENT, "build is not in waiting state", () -> store.start("tpl1", first.buildId(), "c1"));
        clock.advance(Duration.ofSeconds(3));
        Build ready = store.finish(first.buildId(), "builds.agentbox.internal/tpl1:" + first.buildId());
        assertThat(ready.status()).isEqualTo(TemplateBuildStore.READY);
        assertThat(ready.finishedAtMs()).isEqualTo(clock.millis());
        assertThat(store.tags("tpl1")).extracting(Tag::tag, Tag::buildId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("stable", first.buildId()),
                        org.assertj.core.groups.Tuple.tuple("v1", first.buildId()));

        Build second = store.request("acme", "web", List.of("v1"), 2, 1024, this::newId);
        assertThat(second.templateId()).as("same team and name: same template").isEqualTo("tpl1");
        assertThat(store.request("other-team", "web", List.of("default"), 2, 1024, this::newId).templateId())
                .as("names are per team").isEqualTo("tpl2");
        store.start("tpl1", second.buildId(), "c1");
        Build failed = store.fail(second.buildId(), "failed to run command 'exit 7': exit status 7", "2");
        assertThat(failed.reasonStep()).isEqualTo("2");
        assertThat(store.tags("tpl1")).as("a failed build leaves the tags").extracting(Tag::buildId).containsOnly(first.buildId());
        assertFails(Reason.INVALID_ARGUMENT, "ended already", () -> store.fail(second.buildId(), "again", "2"));
        assertFails(Reason.INVALID_ARGUMENT, "not building", () -> store.finish(second.buildId(), "x"));

        Build third = store.request("acme", "web", List.of("v1"), 2, 1024, this::newId);
        store.start("tpl1", third.buildId(), "c1");
        store.finish(third.buildId(), "img3");
        assertThat(store.tags("tpl1")).extracting(Tag::tag, Tag::buildId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("stable", first.buildId()),
                        org.assertj.core.groups.Tuple.tuple("v1", third.buildId()));
        assertThat(store.builds("tpl1")).hasSize(3);
        assertThat(store.byAlias("acme", "web").orElseThrow().templateId()).isEqualTo("tpl1");
        assertThat(store.templates("acme")).extracting(TemplateBuildStore.BuiltTemplate::alias).containsExactly("web");
        assertFails(Reason.INVALID_ARGUMENT, "at least one tag", () -> store.request("acme", "x", List.of(), 1, 1, this::newId));
    }

    @Test
    void logsAreReadByOffsetAndEmptyPastTheEnd() {
        Build b = store.request("acme", "logs", List.of("default"), 2, 1024, this::newId);
        List<LogEntry> batch = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            batch.add(new LogEntry(1000 + i, "info", i < 100 ? "1" : "", "line " + i));
        }
        store.appendLogs(b.buildId(), batch.subList(0, 60));
        store.appendLogs(b.buildId(), batch.subList(60, 150));
        store.appendLogs(b.buildId(), List.of(new LogEntry(5, "info", "2", "x".repeat(5000))));
        assertThat(store.logs(b.buildId(), 0, 100)).hasSize(100).first().isEqualTo(new LogEntry(1000, "info", "1", "line 0"));
        assertThat(store.logs(b.buildId(), 100, 100)).hasSize(51).first().extracting(LogEntry::message).isEqualTo("line 100");
        assertThat(store.logs(b.buildId(), 150, 100).get(0).message()).hasSize(4096);
        assertThat(store.logs(b.buildId(), 151, 100)).isEmpty();
        assertThat(store.logs(b.buildId(), 5000, 100)).isEmpty();
        assertThat(store.build(b.buildId()).orElseThrow().logCount()).isEqualTo(151);
        assertFails(Reason.NOT_FOUND, "not found", () -> store.appendLogs("nope", batch.subList(0, 1)));
    }

    @Test
    void tagsMoveAreRemovedAllOrNothingAndDeleteRemovesEverything() {
        Build b = store.request("acme", "tags", List.of("v1"), 2, 1024, this::newId);
        store.start(b.templateId(), b.buildId(), "c1");
        store.finish(b.buildId(), "img");
        assertThat(store.assignTags(b.templateId(), "v1", List.of("prod", "latest"))).isEqualTo(b.buildId());
        assertThat(store.tags(b.templateId())).extracting(Tag::tag).containsExactly("latest", "prod", "v1");
        assertFails(Reason.NOT_FOUND, "tag 'nope'", () -> store.assignTags(b.templateId(), "nope", List.of("x")));
        assertFails(Reason.NOT_FOUND, "tag 'missing'", () -> store.removeTags(b.templateId(), List.of("prod", "missing")));
        assertThat(store.tags(b.templateId())).as("nothing removed").hasSize(3);
        store.removeTags(b.templateId(), List.of("prod"));
        assertThat(store.tags(b.templateId())).extracting(Tag::tag).containsExactly("latest", "v1");
        store.appendLogs(b.buildId(), List.of(new LogEntry(1, "info", "", "x")));

        assertThat(store.delete(b.templateId())).isTrue();
        assertThat(store.delete(b.templateId())).isFalse();
        assertThat(store.template(b.templateId())).isEmpty();
        assertThat(store.build(b.buildId())).isEmpty();
        assertThat(store.tags(b.templateId())).isEmpty();
        assertThat(store.logs(b.buildId(), 0, 10)).isEmpty();
    }
}
