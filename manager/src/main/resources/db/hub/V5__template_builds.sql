-- Templates built with the E2B SDK (Template.build), their builds, build logs and tags
-- (docs/template-builds.md). Portable SQL: runs unchanged on H2 2.x and PostgreSQL 14+.
-- Times are Unix epoch milliseconds.

-- One row per built template: the team that owns it and its E2B name (alias: unique per team).
CREATE TABLE built_templates (
    template_id  VARCHAR(64)  NOT NULL PRIMARY KEY,
    team         VARCHAR(128) NOT NULL,
    alias        VARCHAR(128) NOT NULL,
    created_at   BIGINT       NOT NULL,
    updated_at   BIGINT       NOT NULL
);
CREATE UNIQUE INDEX built_templates_team_alias ON built_templates (team, alias);

-- Every build of a built template; a failed build leaves the template's tags where they were.
CREATE TABLE template_builds (
    build_id        VARCHAR(36)   NOT NULL PRIMARY KEY, -- UUID
    template_id     VARCHAR(64)   NOT NULL,
    status          VARCHAR(16)   NOT NULL,              -- waiting, building, ready, error
    tags            VARCHAR(8192) NOT NULL,              -- JSON array: the tags this build takes once ready
    cpu_count       INT           NOT NULL,
    memory_mb       INT           NOT NULL,
    image           VARCHAR(512)  DEFAULT '' NOT NULL,   -- the built image's reference, once ready
    cluster_id      VARCHAR(64)   DEFAULT '' NOT NULL,   -- where it was built
    reason_message  VARCHAR(8192),                       -- with status error: E2B's reason.message
    reason_step     VARCHAR(32),                         -- with status error: E2B's reason.step
    log_count       INT           DEFAULT 0 NOT NULL,
    created_at      BIGINT        NOT NULL,
    updated_at      BIGINT        NOT NULL,
    finished_at     BIGINT
);
CREATE INDEX template_builds_template ON template_builds (template_id, created_at);

-- A build's log, in order; seq is E2B's logsOffset.
CREATE TABLE template_build_logs (
    build_id  VARCHAR(36)   NOT NULL,
    seq       INT           NOT NULL,
    at        BIGINT        NOT NULL,
    level     VARCHAR(8)    NOT NULL,
    step      VARCHAR(32)   DEFAULT '' NOT NULL,
    message   VARCHAR(4096) NOT NULL,
    PRIMARY KEY (build_id, seq)
);

-- Tags point at builds (E2B: Sandbox.create('name:tag') starts the build the tag points to).
CREATE TABLE template_tags (
    template_id  VARCHAR(64)  NOT NULL,
    tag          VARCHAR(128) NOT NULL,
    build_id     VARCHAR(36)  NOT NULL,
    created_at   BIGINT       NOT NULL,
    PRIMARY KEY (template_id, tag)
);
