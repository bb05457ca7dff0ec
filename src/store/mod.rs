//! SQLite store. Every trial is committed in its own transaction the moment
//! it ends, so a killed run keeps everything measured before it. The schema
//! is in `schema.sql` and documented in `docs/store-schema.md`.

pub mod model;
mod read;
pub mod write;

pub use model::*;
pub use write::{NewRun, NewTrial};

use rusqlite::Connection;
use std::path::{Path, PathBuf};

mod migrate;

/// The schema version this scalelab writes. Older stores are upgraded in
/// place when opened (see `migrate`); changes are additive only.
pub const SCHEMA_VERSION: i64 = migrate::LATEST;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("the store {path} has schema version {found}, newer than this scalelab reads ({SCHEMA_VERSION}); use a newer scalelab or a new --store path")]
    Version { path: PathBuf, found: i64 },
    #[error("no run `{0}` in the store; `scalelab list` shows the runs")]
    NoSuchRun(String),
    #[error(
        "the store is empty; run an experiment first (`scalelab run recipes/quickstart.toml`)"
    )]
    Empty,
    #[error("store error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("corrupt JSON in the store: {0}")]
    Json(#[from] serde_json::Error),
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
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
        let version = migrate::upgrade(&conn).map_err(open_err)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Version {
                path: path.to_path_buf(),
                found: version,
            });
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(store: &mut Store) -> i64 {
        store
            .create_run(&NewRun {
                name: "t",
                description: "",
                experiment: "name = \"t\"",
                experiment_path: "t.toml",
                quick: false,
                environment: &serde_json::json!({"kernel": "6.1"}),
                baseline: "a",
                headline: "median",
                load_kind: "http",
                noise: 0.02,
            })
            .unwrap()
    }

    #[test]
    fn trials_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let id = run(&mut store);
        let point = Point {
            index: 3,
            coords: vec![Coord {
                axis: "connections".into(),
                value: 10.into(),
            }],
        };
        let m = Measurement {
            requests: 500,
            rps: 250.0,
            duration_s: 2.0,
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
                started_at: 7,
                context: &serde_json::json!({"client_bound": false}),
                measurement: Some(&m),
                timeline: &[100, 150],
                histogram: Some(&[1, 2, 3]),
                probe_summary: Some(&serde_json::json!({"server_cpu_s": 1.5})),
                probe_timeline: None,
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
                started_at: 8,
                context: &serde_json::json!({}),
                measurement: None,
                timeline: &[],
                histogram: None,
                probe_summary: None,
                probe_timeline: None,
            })
            .unwrap();
        let data = store.load_run("latest").unwrap();
        assert_eq!(data.trials.len(), 2);
        assert_eq!(data.trials[0].measurement.as_ref().unwrap(), &m);
        assert_eq!(data.trials[0].point, point);
        assert_eq!(data.trials[0].timeline, vec![100, 150]);
        assert_eq!(data.trials[0].probe.as_ref().unwrap()["server_cpu_s"], 1.5);
        assert_eq!(data.trials[1].error.as_deref(), Some("server died"));
        assert_eq!(data.trials[1].throughput(), None);
        assert_eq!(store.histogram(trial).unwrap(), Some(vec![1, 2, 3]));
        assert_eq!(data.systems(), vec!["a", "b"]);
        let listing = store.list_runs().unwrap();
        assert_eq!((listing[0].trials_ok, listing[0].trials_failed), (1, 1));
    }

    #[test]
    fn concurrent_openers_upgrade_a_new_store_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let openers: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(|_| ()))
            })
            .collect();
        for o in openers {
            o.join().unwrap().unwrap();
        }
        let mut store = Store::open(&path).unwrap();
        assert_eq!(run(&mut store), 1);
    }

    #[test]
    fn unknown_runs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        assert!(matches!(store.load_run("latest"), Err(StoreError::Empty)));
        run(&mut store);
        let err = store.load_run("42").unwrap_err().to_string();
        assert!(err.contains("no run `42`"), "{err}");
    }
}
