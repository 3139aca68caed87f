-- Version 5: a run's kind.
--
-- runs.kind is what the run is: '' a sweep (its config is a config
-- document, every run stored before this version), 'shadow' an access
-- log replayed through a limiter's config (its config is the replay's
-- document, experiments/shadow Spec, {"shadow": {...}}; its results are
-- its files alone: no points, no result head). Pages and the runner read
-- it to tell the two apart without decoding the config.

ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT '';
