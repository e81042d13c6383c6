-- Snapshots of sandboxes (E2B createSnapshot, fork; docs/snapshots-and-reset.md). Portable SQL: runs
-- unchanged on H2 2.x and PostgreSQL 14+ (the store contract tests run both). Times are Unix epoch ms.

-- A template whose sandboxes start from a snapshot image in the image store of the one worker
-- cluster that made it (sync.proto Template.snapshot): the worker-level snapshot id; '' otherwise.
ALTER TABLE templates ADD COLUMN snapshot VARCHAR(300) DEFAULT '' NOT NULL;

-- One row per snapshot (one tag of a snapshot template). A snapshot template has an E2B template
-- id and, when named, an alias unique per team; each tag names one snapshot taken at one time.
-- template_name is the hub template (and worker snapshot id) that serves it.
CREATE TABLE snapshots (
    template_id     VARCHAR(64)  NOT NULL,
    tag             VARCHAR(128) NOT NULL,
    team            VARCHAR(128) NOT NULL,
    alias           VARCHAR(128) DEFAULT '' NOT NULL,  -- '' for an unnamed snapshot
    source_sandbox  VARCHAR(128) NOT NULL,
    cluster_id      VARCHAR(64)  NOT NULL,
    template_name   VARCHAR(64)  NOT NULL,
    created_at      BIGINT       NOT NULL,
    PRIMARY KEY (template_id, tag)
);
CREATE UNIQUE INDEX snapshots_template_name ON snapshots (template_name);
CREATE INDEX snapshots_team_created ON snapshots (team, created_at);
CREATE INDEX snapshots_team_alias ON snapshots (team, alias);
