-- Schema version 4: flame-graph profiles (`scalelab run --profile`).
-- Older stores are upgraded by adding this table; their runs have none.
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
