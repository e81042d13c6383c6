-- Which worker runtime makes a template's sandboxes: 'local' (bubblewrap) or 'kubernetes' (pods).
ALTER TABLE templates ADD COLUMN runtime VARCHAR(32) DEFAULT 'local' NOT NULL;
