-- scalelab store, schema version 3 (additive over version 2): run events and run leases. See docs/store-schema.md.
CREATE TABLE IF NOT EXISTS run_events (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    at           INTEGER NOT NULL,              -- unix seconds
    kind         TEXT NOT NULL,                 -- trial_interrupted | resumed
    system       TEXT,
    point_index  INTEGER,
    trial        INTEGER,
    detail       TEXT NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS run_leases (
    run_id       INTEGER PRIMARY KEY REFERENCES runs(id),
    pid          INTEGER NOT NULL,              -- the scalelab process running the run
    pid_start    INTEGER NOT NULL,              -- its start time (clock ticks since boot, /proc/PID/stat)
    acquired_at  INTEGER NOT NULL
);
