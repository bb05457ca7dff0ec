-- scalelab store, schema version 1; later versions are the migrations in
-- migrate.rs, applied in order. Documented in docs/store-schema.md.
CREATE TABLE IF NOT EXISTS runs (
    id               INTEGER PRIMARY KEY,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    started_at       INTEGER NOT NULL,          -- unix seconds
    finished_at      INTEGER,
    status           TEXT NOT NULL,             -- running | finished | interrupted | failed
    experiment       TEXT NOT NULL,             -- the experiment file's text as run
    experiment_path  TEXT NOT NULL,
    quick            INTEGER NOT NULL DEFAULT 0,
    environment      TEXT NOT NULL,             -- JSON fingerprint
    scalelab_version TEXT NOT NULL,
    server_version   TEXT,
    baseline         TEXT,
    headline         TEXT NOT NULL DEFAULT 'median'
);

CREATE TABLE IF NOT EXISTS trials (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    system       TEXT NOT NULL,
    point_index  INTEGER NOT NULL,
    point        TEXT NOT NULL,                 -- JSON [{axis, value}]
    trial        INTEGER NOT NULL,              -- 1-based per (system, point)
    status       TEXT NOT NULL,                 -- ok | failed
    error        TEXT,
    started_at   INTEGER NOT NULL,
    context      TEXT NOT NULL DEFAULT '{}',    -- JSON: placement, dataset, client_bound, ...
    UNIQUE (run_id, system, point_index, trial)
);

CREATE TABLE IF NOT EXISTS measurements (
    trial_id            INTEGER PRIMARY KEY REFERENCES trials(id),
    requests            INTEGER NOT NULL,
    duration_s          REAL NOT NULL,
    rps                 REAL NOT NULL,
    bytes               INTEGER NOT NULL,
    gbit_s              REAL NOT NULL,
    errors              TEXT NOT NULL,          -- JSON {connect, read, write, timeout, status, ...}
    retries             INTEGER NOT NULL,
    latency_p50_us      INTEGER NOT NULL,
    latency_p90_us      INTEGER NOT NULL,
    latency_p99_us      INTEGER NOT NULL,
    latency_p999_us     INTEGER NOT NULL,
    latency_max_us      INTEGER NOT NULL,
    latency_mean_us     REAL NOT NULL,
    latency_stdev_us    REAL NOT NULL,
    client_cpu_s        REAL NOT NULL,
    target_rate         REAL,
    connections_opened  INTEGER NOT NULL,
    notes               TEXT NOT NULL DEFAULT '[]'
);

CREATE TABLE IF NOT EXISTS timelines (
    trial_id    INTEGER PRIMARY KEY REFERENCES trials(id),
    per_second  TEXT NOT NULL,                  -- JSON [completed requests per second]
    probe       TEXT                            -- JSON probe samples, one per interval
);

CREATE TABLE IF NOT EXISTS probes (
    trial_id  INTEGER PRIMARY KEY REFERENCES trials(id),
    summary   TEXT NOT NULL                     -- JSON probe summary over the measured window
);

CREATE TABLE IF NOT EXISTS histograms (
    trial_id  INTEGER PRIMARY KEY REFERENCES trials(id),
    encoding  TEXT NOT NULL,                    -- 'hdr-v2': HdrHistogram V2, microseconds
    data      BLOB NOT NULL
);

CREATE TABLE IF NOT EXISTS point_stops (
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    point_index  INTEGER NOT NULL,
    reason       TEXT NOT NULL,                 -- ci_target_met | max_trials | budget_exhausted | ...
    trials       INTEGER NOT NULL,
    PRIMARY KEY (run_id, point_index)
);
