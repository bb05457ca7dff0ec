//! SQLite store. Every trial is committed in its own transaction the moment
//! it ends, so a killed run keeps everything measured before it. The schema
//! is in `schema.sql` and documented in `docs/store-schema.md`.

pub mod context;
pub mod events;
pub mod lease;
pub mod model;
mod order;
mod profiles;
mod read;
pub mod repeats;
pub mod retry;
pub mod run_kinds;
mod run_status;
pub mod write;

pub use context::TrialContext;
pub use events::{RunEvent, RunEventKind};
pub use lease::Owner;
pub use model::*;
pub use profiles::ProfileRecord;
pub use read::RunListing;
pub use repeats::RepeatGroup;
pub use retry::{EnvironmentalFailure, FailureCause};
pub use run_status::RunStatus;
pub use write::{NewRun, NewTrial};

pub use crate::record::catalog::Catalog;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

mod location;
mod migrate;

/// The schema version this scalelab writes. Older stores are upgraded in
/// place when opened (see `migrate`); changes are additive only.
pub const SCHEMA_VERSION: i64 = migrate::LATEST;

/// Why the store could not be opened, read or written. Every message says
/// what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened as SQLite.
    #[error("cannot open the store {path}: {source}")]
    Open {
        /// The store file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The store was written by a newer scalelab.
    #[error("the store {path} has schema version {found}, newer than this scalelab reads ({SCHEMA_VERSION}); use a newer scalelab or a new --store path")]
    Version {
        /// The store file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
    },
    /// There is no store at the path.
    #[error("no store at {0}; run an experiment first, or pass the right --store PATH")]
    Missing(PathBuf),
    /// Another live scalelab process holds the run's lease.
    #[error("run {run} is being run right now by scalelab PID {pid}; wait for it to finish or stop it (kill {pid}) before resuming")]
    RunBusy {
        /// The run's id in the store.
        run: i64,
        /// The process that holds its lease.
        pid: u32,
    },
    /// No run matches the selector.
    #[error("no run `{0}` in the store; `scalelab list` shows the runs")]
    NoSuchRun(String),
    /// The store has no run at all.
    #[error(
        "the store is empty; run an experiment first (`scalelab run recipes/quickstart.toml`)"
    )]
    Empty,
    /// The directory of the store does not exist (`--store` creates none).
    #[error("the directory {dir} of the store {path} does not exist; create it (mkdir -p {dir}) or pass another --store PATH")]
    NoDirectory {
        /// The store file.
        path: PathBuf,
        /// Its missing directory.
        dir: PathBuf,
    },
    /// The store's file or directory cannot be written.
    #[error("the store {0} is in a read-only location (its file or its directory cannot be written); `list`, `export`, `report` and `compare` read it as it is, but a run needs a writable --store PATH")]
    ReadOnly(PathBuf),
    /// A read-only store whose schema this scalelab would have to upgrade.
    #[error("the store {path} is read-only and has schema version {found}, not {}; copy it to a writable place once so that it can be upgraded", migrate::LATEST)]
    ReadOnlyVersion {
        /// The store file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
    },
    /// SQLite failed.
    #[error("store error: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A JSON column could not be written or read.
    #[error("corrupt JSON in the store: {0}")]
    Json(#[from] serde_json::Error),
}

/// An open store file.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The kinds as the store is told of them, handed in by its opener:
    /// how a trial's stored context gives back its kinds' facts
    /// ([`TrialContext::from_stored`]), and what an upgrade fills in for
    /// the runs already stored.
    catalog: &'static Catalog,
}

impl Store {
    /// Opens an existing store; a missing file is [`StoreError::Missing`]
    /// (only `run` and `load` create stores). A store in a read-only
    /// location is opened read-only, for the commands that only read.
    pub fn open_existing(path: &Path, catalog: &'static Catalog) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        if !location::is_writable(path) {
            return location::open_read_only(path, catalog);
        }
        Self::open(path, catalog)
    }

    /// Opens (creating if needed) the store at `path`, to write. Its
    /// directory must exist and be writable. `catalog` is what it is told
    /// of the kinds (`scalelab::catalog()`).
    pub fn open(path: &Path, catalog: &'static Catalog) -> Result<Store, StoreError> {
        location::check_directory(path)?;
        location::check_writable(path)?;
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        // WAL: committed trials survive a killed process; readers never block the runner.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(open_err)?;
        let version = migrate::upgrade(&conn, catalog).map_err(open_err)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Version {
                path: path.to_path_buf(),
                found: version,
            });
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            catalog,
        })
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A run to hang test trials on.
    pub(crate) fn run(store: &mut Store) -> i64 {
        run_in_group(store, None)
    }

    /// A test run, made one of a repeat group's (`Store::create_run_in_group`).
    pub(crate) fn run_in_group(store: &mut Store, group: Option<(Option<i64>, u32)>) -> i64 {
        store
            .create_run_in_group(
                &NewRun {
                    name: "t",
                    description: "",
                    experiment: "name = \"t\"",
                    experiment_path: "t.toml",
                    quick: false,
                    environment: &crate::record::environment::Environment::local(
                        crate::record::environment::Fingerprint::default(),
                    ),
                    baseline: "a",
                    headline: "median",
                    load_kind: "http",
                    server_kind: "nginx",
                    rate_unit: scalelab_lab::catalog().rate_unit_of("http"),
                    parallelism: scalelab_lab::catalog().parallelism_of("nginx"),
                    noise: 0.02,
                    label: None,
                    revision: None,
                },
                group,
            )
            .unwrap()
    }

    #[test]
    fn trials_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite"), scalelab_lab::catalog()).unwrap();
        let id = run(&mut store);
        let point = crate::model::Point::new(3, &[("connections", 10.into())]);
        let m = Measurement {
            requests: 500,
            rps: crate::units::PerSecond(250.0),
            duration_s: crate::units::Seconds(2.0),
            // The one latency field set, p75 included (schema 9), round-trips.
            latency_us: crate::record::measurement::LatencySummary {
                p50: crate::units::Micros(100),
                p75: Some(crate::units::Micros(140)),
                p999: crate::units::Micros(900),
                ..Default::default()
            },
            ..Default::default()
        };
        let trial = store
            .insert_trial(&NewTrial {
                run_id: id,
                system: "a",
                point: &point,
                trial: 1,
                status: TrialStatus::Ok,
                error: None,
                failure_cause: None,
                started_at: 7,
                context: &TrialContext {
                    client_bound: Some(false),
                    ..TrialContext::default()
                },
                measurement: Some(&m),
                timeline: &[100, 150],
                window: &Default::default(),
                histogram: Some(&[1, 2, 3]),
                probe_summary: Some(&crate::record::probe::ProbeSummary {
                    server_cpu_s: Some(1.5),
                    ..Default::default()
                }),
                probe_timeline: None,
                probe_refused: None,
            })
            .unwrap();
        store
            .insert_trial(&NewTrial {
                run_id: id,
                system: "b",
                point: &point,
                trial: 1,
                status: TrialStatus::Failed,
                error: Some("server died"),
                failure_cause: None,
                started_at: 8,
                context: &TrialContext::default(),
                measurement: None,
                timeline: &[],
                window: &Default::default(),
                histogram: None,
                probe_summary: None,
                probe_timeline: None,
                probe_refused: Some(
                    "the probe's summary was refused: `loadavg_1` was not a finite number",
                ),
            })
            .unwrap();
        let data = store.load_run("latest").unwrap();
        // A refused summary is never a summary of zeros: its reason is read.
        assert!(data.trials[1].probe.is_none());
        assert_eq!(
            data.trials[1].probe_unreadable.as_deref(),
            Some(format!("trial {}: the probe's summary was refused: `loadavg_1` was not a finite number; its server figures are missing", trial + 1).as_str())
        );
        assert_eq!(data.trials[0].probe_unreadable, None);
        assert_eq!(data.trials.len(), 2);
        assert_eq!(data.trials[0].measurement.as_ref().unwrap(), &m);
        assert_eq!(data.trials[0].point, point);
        assert_eq!(data.trials[0].timeline, vec![100, 150]);
        assert_eq!(
            data.trials[0].probe.as_ref().unwrap().server_cpu_s,
            Some(1.5)
        );
        assert_eq!(data.trials[1].error.as_deref(), Some("server died"));
        assert_eq!(data.trials[1].throughput(), None);
        assert_eq!(store.histogram(trial).unwrap(), Some(vec![1, 2, 3]));
        assert_eq!(data.systems(), vec!["a", "b"]);
        let listing = store.list_runs().unwrap();
        assert_eq!((listing[0].trials_ok, listing[0].trials_failed), (1, 1));
    }

    #[test]
    fn a_version_1_store_is_migrated_and_keeps_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(include_str!("schema.sql")).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            conn.execute(
                "INSERT INTO runs (name, started_at, status, experiment, experiment_path, environment, scalelab_version)
                 VALUES ('old', 1, 'finished', '', 'old.toml', '{}', '0.1.0')",
                [],
            )
            .unwrap();
        }
        let mut store = Store::open(&path, scalelab_lab::catalog()).unwrap();
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        assert_eq!(store.list_runs().unwrap()[0].run.name, "old");
        store.acquire_lease(1).unwrap();
        assert!(store.live_owner(1).unwrap().is_some());
        assert!(store.run_events(1).unwrap().is_empty());
    }

    #[test]
    fn missing_stores_are_not_created_by_open_existing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("typo.sqlite");
        let err = Store::open_existing(&path, scalelab_lab::catalog())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(!path.exists());
    }

    #[test]
    fn concurrent_openers_upgrade_a_new_store_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let openers: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path, scalelab_lab::catalog()).map(|_| ()))
            })
            .collect();
        for o in openers {
            o.join().unwrap().unwrap();
        }
        let mut store = Store::open(&path, scalelab_lab::catalog()).unwrap();
        assert_eq!(run(&mut store), 1);
    }

    #[test]
    fn unknown_runs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite"), scalelab_lab::catalog()).unwrap();
        assert!(matches!(store.load_run("latest"), Err(StoreError::Empty)));
        run(&mut store);
        let err = store.load_run("42").unwrap_err().to_string();
        assert!(err.contains("no run `42`"), "{err}");
    }
}
