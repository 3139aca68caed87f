-- Version 3: runs that end partial, compressed storage, a run's size.
--
-- * A run may end 'partial': cancelled or interrupted after some points
--   finished; it keeps those points and their files (points_done of
--   points_total). The runs table's CHECK on status gains 'partial' in
--   this migration's Go step (storage/migrate.go, allowPartial): SQLite
--   cannot alter a CHECK, and rebuilding runs would cascade-delete every
--   point and file through the foreign keys; the step edits the CHECK's
--   text in sqlite_schema, which SQLite documents as safe for loosening a
--   CHECK (no stored row changes).
-- * files.codec says how a file's chunks are stored: '' as they are (every
--   file stored before this version), 'deflate' each chunk compressed on
--   its own (raw DEFLATE, RFC 1951), so a reader still fetches one chunk
--   at a time. Series blobs say their own format in their first byte (3:
--   deflated; 1 and 2, stored before, stay readable).
-- * runs.stored_bytes is the run's bytes in the database: its config,
--   result, points (JSON and series) and file chunks as stored (pages and
--   indexes not counted). Filled here for the runs already stored.
--
-- Nothing stored before is rewritten: a crash during this migration rolls
-- it back whole (one transaction) and every run stays readable.

ALTER TABLE files ADD COLUMN codec TEXT NOT NULL DEFAULT '';

ALTER TABLE runs ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;

UPDATE runs SET stored_bytes =
      length(config) + coalesce(length(result), 0)
    + coalesce((SELECT sum(length(point) + length(series)) FROM points WHERE points.run_id = runs.id), 0)
    + coalesce((SELECT sum(length(data)) FROM file_chunks WHERE file_chunks.run_id = runs.id), 0);
