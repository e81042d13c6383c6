-- Pause and resume (issue 14): the create-time lifecycle of a sandbox and whether it is paused.
-- Portable SQL: runs unchanged on H2 2.x and PostgreSQL 14+ (the store contract tests run both).

-- At its end time the sandbox is paused instead of killed (E2B autoPause).
ALTER TABLE sandboxes ADD COLUMN auto_pause BOOLEAN DEFAULT FALSE NOT NULL;
-- That pause keeps the processes in memory (E2B autoPauseMemory, default true).
ALTER TABLE sandboxes ADD COLUMN auto_pause_memory BOOLEAN DEFAULT TRUE NOT NULL;
-- Traffic to the paused sandbox resumes it (E2B autoResume.enabled).
ALTER TABLE sandboxes ADD COLUMN auto_resume BOOLEAN DEFAULT FALSE NOT NULL;
-- When it was paused, Unix epoch ms; null while it runs. A paused sandbox has no deadline.
ALTER TABLE sandboxes ADD COLUMN paused_at BIGINT;
