-- Template images and process limits; the network modes of issue 13. Portable SQL: runs unchanged
-- on H2 2.x and PostgreSQL 14+ (the store contract tests run both).

-- OCI image reference, stored normalised (docker.io/library/python:3.12); '' = the runtime's built-in root.
ALTER TABLE templates ADD COLUMN image VARCHAR(512) DEFAULT '' NOT NULL;
-- Most processes and threads one sandbox may hold (1..65535).
ALTER TABLE templates ADD COLUMN pids_limit INT DEFAULT 1024 NOT NULL;

-- 'isolated' used to mean loopback only; that mode is now 'none' ('isolated' gains outbound
-- internet through NAT), so stored templates keep exactly the network they had.
UPDATE templates SET network = 'none' WHERE network = 'isolated';
-- The built-in template's default moves from the host's network to 'isolated'. It was seeded as
-- 'host'; a deployment that wants the host's network keeps passing --sandbox-network host, which is
-- applied at every start.
UPDATE templates SET network = 'isolated' WHERE name = 'base' AND network = 'host';
