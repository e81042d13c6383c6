-- Per-team quotas. Portable SQL: runs unchanged on H2 2.x and PostgreSQL 14+.
-- One row per team that has limits of its own, plus the row '*' (not a valid team name) holding
-- the hub-wide defaults. A null limit means "not set here": a team falls back to the default,
-- and a null default means no limit. Times are Unix epoch milliseconds.
CREATE TABLE team_limits (
    team                VARCHAR(128)     NOT NULL PRIMARY KEY,
    max_sandboxes       INT,              -- most sandboxes running at once
    creates_per_second  DOUBLE PRECISION, -- sustained sandbox creates per second (bursts up to one second's worth)
    updated_at          BIGINT           NOT NULL,
    resource_version    BIGINT           NOT NULL
);
