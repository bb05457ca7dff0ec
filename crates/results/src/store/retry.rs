//! Failed trials whose cause was the environment (a lost host, a server
//! that could not start, a full disk), stored typed in `trials.failure_cause`
//! so that `--resume` can run them again without reading error text.
//!
//! A retried trial is replaced: its row (and its measurement, timeline,
//! probe and histogram rows) is deleted and a `trial_retried` run event
//! keeps its error, in the same transaction; the trial then runs again and
//! is stored once, under the same (system, point, trial) key.

use super::events::{RunEvent, RunEventKind};
use super::{Store, StoreError};
use rusqlite::params;

/// Why a trial failed, when the cause was its environment rather than the
/// server under test. A closed set; `trials.failure_cause` holds
/// [`FailureCause::as_str`], NULL for any other failure.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FailureCause {
    /// A remote host's agent or its ssh connection was lost during it.
    LostHost,
    /// The server (or its dataset load) failed to start.
    ServerStart,
    /// The server's file system filled up.
    DiskFull,
}

impl FailureCause {
    /// Every cause, in the order messages list them.
    pub const ALL: [FailureCause; 3] = [
        FailureCause::LostHost,
        FailureCause::ServerStart,
        FailureCause::DiskFull,
    ];

    /// Its name in the store (`lost_host`, `server_start`, `disk_full`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCause::LostHost => "lost_host",
            FailureCause::ServerStart => "server_start",
            FailureCause::DiskFull => "disk_full",
        }
    }

    /// For people: `lost host`, `server start`, `disk full`.
    pub fn words(self) -> &'static str {
        match self {
            FailureCause::LostHost => "lost host",
            FailureCause::ServerStart => "server start",
            FailureCause::DiskFull => "disk full",
        }
    }

    /// The cause stored as `s`, if it is one.
    pub fn parse(s: &str) -> Option<FailureCause> {
        FailureCause::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// A stored trial that failed for an environmental reason.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvironmentalFailure {
    /// Its row id.
    pub id: i64,
    /// The system's label.
    pub system: String,
    /// The sweep point's index.
    pub point_index: u32,
    /// The trial number.
    pub trial: u32,
    /// Why it failed.
    pub cause: FailureCause,
    /// Its error text.
    pub error: String,
}

impl Store {
    /// The run's failed trials whose cause was environmental, in order.
    pub fn environmental_failures(
        &self,
        run_id: i64,
    ) -> Result<Vec<EnvironmentalFailure>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT id, system, point_index, trial, failure_cause, coalesce(error, '')
             FROM trials WHERE run_id = ?1 AND status = 'failed' AND failure_cause IS NOT NULL
             ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            let cause: String = r.get(4)?;
            Ok(
                FailureCause::parse(&cause).map(|cause| EnvironmentalFailure {
                    id: r.get(0).unwrap_or_default(),
                    system: r.get(1).unwrap_or_default(),
                    point_index: r.get(2).unwrap_or_default(),
                    trial: r.get(3).unwrap_or_default(),
                    cause,
                    error: r.get(5).unwrap_or_default(),
                }),
            )
        })?;
        let found = rows.collect::<Result<Vec<_>, _>>()?;
        Ok(found.into_iter().flatten().collect())
    }

    /// Deletes `failed` (trials of `run_id`) so that they run again, and
    /// records a `trial_retried` event for each with its old error, all in
    /// one transaction.
    pub fn retry_trials(
        &mut self,
        run_id: i64,
        failed: &[EnvironmentalFailure],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for f in failed {
            for table in ["measurements", "timelines", "probes", "histograms"] {
                tx.execute(&format!("DELETE FROM {table} WHERE trial_id = ?1"), [f.id])?;
            }
            tx.execute(
                "DELETE FROM trials WHERE id = ?1 AND run_id = ?2",
                params![f.id, run_id],
            )?;
            let event = RunEvent {
                at: super::write::now(),
                kind: RunEventKind::TrialRetried,
                system: Some(f.system.clone()),
                point_index: Some(f.point_index),
                trial: Some(f.trial),
                detail: format!(
                    "failed ({}): {}; run again by --resume",
                    f.cause.words(),
                    f.error
                ),
            };
            super::events::insert_event(&tx, run_id, &event)?;
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewTrial, TrialContext, TrialStatus};

    fn failed(store: &mut Store, run: i64, system: &str, cause: Option<FailureCause>) {
        let point = crate::model::Point::new(0, &[("connections", 1.into())]);
        store
            .insert_trial(&NewTrial {
                run_id: run,
                system,
                point: &point,
                trial: 1,
                status: TrialStatus::Failed,
                error: Some("load failed: lost host: host h: the connection to the agent was lost"),
                failure_cause: cause,
                started_at: 1,
                context: &TrialContext::default(),
                measurement: None,
                timeline: &[],
                window: &Default::default(),
                histogram: None,
                probe_summary: None,
                probe_timeline: None,
                probe_refused: None,
            })
            .unwrap();
    }

    #[test]
    fn a_retried_trial_is_replaced_and_its_error_kept_as_an_event() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite"), scalelab_lab::catalog()).unwrap();
        let run = crate::store::tests::run(&mut store);
        failed(&mut store, run, "a", Some(FailureCause::LostHost));
        failed(&mut store, run, "b", None);
        // Read back with each trial (the JSON export carries it:
        // scalelab-report's json::tests::a_trials_failure_cause_is_exported).
        let data = store.load_run(&run.to_string()).unwrap();
        let causes: Vec<_> = data.trials.iter().map(|t| t.failure_cause).collect();
        assert_eq!(causes, [Some(FailureCause::LostHost), None]);
        let found = store.environmental_failures(run).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].system.as_str(), found[0].cause),
            ("a", FailureCause::LostHost)
        );
        store.retry_trials(run, &found).unwrap();
        assert!(store.environmental_failures(run).unwrap().is_empty());
        let data = store.load_run(&run.to_string()).unwrap();
        assert_eq!(data.trials.len(), 1, "only the plain failure is left");
        let events = store.run_events(run).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, RunEventKind::TrialRetried);
        assert!(
            events[0].detail.contains("lost host"),
            "{}",
            events[0].detail
        );
        // The retried trial is stored again under its own key, once.
        failed(&mut store, run, "a", None);
        assert_eq!(store.load_run(&run.to_string()).unwrap().trials.len(), 2);
    }

    #[test]
    fn causes_round_trip_through_their_stored_names() {
        for c in FailureCause::ALL {
            assert_eq!(FailureCause::parse(c.as_str()), Some(c));
        }
        assert_eq!(FailureCause::parse("other"), None);
    }
}
