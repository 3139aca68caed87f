-- Version 6: runs searchable like an experiment tracker (docs/web.md,
-- "The run list").
--
-- * runs.note: a note written after the run (any text, at most
--   storage.MaxNoteRunes characters); run_tags: its tags, one row each.
-- * run_summaries and run_values: a run's values, for the run list's
--   parameter and metric columns, its query and its sort, computed once
--   when the run ends with results (storage.Summarize: the
--   representative point's results.csv row) instead of reading every
--   run's results on every list. Runs stored before this version get
--   theirs the first time a list is read (Store.ListBy fills every run
--   with results whose summary is missing or of an older
--   storage.SummaryVersion), so this migration rewrites nothing stored.
--
-- Everything hangs off runs by ON DELETE CASCADE: deleting a run deletes
-- its tags, summary and values in the same transaction.

ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';

CREATE TABLE run_tags (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tag    TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;

CREATE INDEX run_tags_tag ON run_tags (tag);

CREATE TABLE run_summaries (
    run_id  TEXT    PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    version INTEGER NOT NULL,                        -- storage.SummaryVersion that computed it
    point   INTEGER,                                 -- the representative point; NULL: none
    basis   TEXT    NOT NULL DEFAULT '',             -- 'answer', 'best-point', or '' (none)
    error   TEXT    NOT NULL DEFAULT ''              -- why there are no values (a result that no longer reads)
) WITHOUT ROWID;

CREATE TABLE run_values (
    run_id TEXT NOT NULL REFERENCES run_summaries (run_id) ON DELETE CASCADE,
    key    TEXT NOT NULL,                            -- a results.csv column
    kind   TEXT NOT NULL CHECK (kind IN ('param', 'metric')),
    num    REAL,                                     -- unrounded; NULL for text that is no number
    text   TEXT NOT NULL,                            -- as results.csv prints it
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE INDEX run_values_key ON run_values (key, num);
