-- Runs, their points and their output files.
--
-- Times are Unix nanoseconds, UTC. A run's results (points, files, the
-- run-level result, status 'done') are written in one transaction, so a run
-- is either complete or has no results at all.

CREATE TABLE runs (
    id             TEXT    PRIMARY KEY,
    name           TEXT    NOT NULL DEFAULT '',
    created_at     INTEGER NOT NULL,                 -- Unix ns, UTC
    status         TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')),
    points_done    INTEGER NOT NULL DEFAULT 0,
    points_total   INTEGER NOT NULL DEFAULT 0,
    config         BLOB    NOT NULL,                 -- normalized config JSON
    seed           TEXT    NOT NULL,                 -- uint64 in decimal (does not fit SQLite's int64)
    engine_version TEXT    NOT NULL DEFAULT '',
    error          TEXT    NOT NULL DEFAULT '',
    limiters       TEXT    NOT NULL DEFAULT '[]',    -- JSON list of limiter labels
    rerun_of       TEXT    REFERENCES runs (id) ON DELETE SET NULL,
    finished_at    INTEGER,                          -- Unix ns, UTC
    result         TEXT                              -- JSON experiments.Result without config and points, set with the results
);

CREATE INDEX runs_created ON runs (created_at DESC);
CREATE INDEX runs_status ON runs (status);

-- One row per point of a sweep: the point as JSON (experiments.Point, so
-- fields the engine adds are kept without a migration) with its series
-- left out, and the series as one compact blob (see storage/series.go), not
-- a row per window: a run can have 2 M windows.
CREATE TABLE points (
    run_id  TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    limiter TEXT    NOT NULL,                        -- label, for queries by hand
    point   TEXT    NOT NULL,                        -- JSON experiments.Point, series empty
    series  BLOB    NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

-- Every output file, byte for byte, in manifest order (manifest.json last).
CREATE TABLE files (
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ord    INTEGER NOT NULL,
    name   TEXT    NOT NULL,
    sha256 TEXT    NOT NULL,
    bytes  INTEGER NOT NULL,
    data   BLOB    NOT NULL,
    PRIMARY KEY (run_id, name),
    UNIQUE (run_id, ord)
);
