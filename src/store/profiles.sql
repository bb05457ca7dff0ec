-- Flame-graph profiles (`scalelab run --profile`), added after schema
-- version 1 without changing it: created on open when missing, so older
-- stores keep opening and simply have no profiles.
CREATE TABLE IF NOT EXISTS profiles (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id),
    system        TEXT NOT NULL,
    point_index   INTEGER NOT NULL,
    point         TEXT NOT NULL,            -- JSON [{axis, value}], as in trials
    role          TEXT NOT NULL,            -- peak | collapse | compare
    samples       INTEGER NOT NULL,         -- samples of the server's tree
    folded        TEXT,                     -- inferno folded stacks; NULL when profiling failed
    plain_rps     REAL,                     -- the paired trial without perf
    profiled_rps  REAL,                     -- the trial under perf
    error         TEXT                      -- why there is no profile
);
