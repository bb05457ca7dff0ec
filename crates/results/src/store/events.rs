//! Run events: what happened to a run that is not a measurement, such as a
//! trial interrupted by Ctrl-C (not stored as a trial, so `--resume` runs it
//! again) or a resume.

use super::{Store, StoreError};
use rusqlite::params;

/// What kind of thing happened to a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEventKind {
    /// SIGINT or SIGTERM arrived while a trial ran, or scalelab (or a client
    /// host's agent) was stopped during its window; the trial was discarded.
    TrialInterrupted,
    /// The run was continued with `--resume`.
    Resumed,
    /// `--resume` deleted a trial that had failed for an environmental
    /// reason (see [`super::retry`]) to run it again; the detail keeps its
    /// error.
    TrialRetried,
}

impl RunEventKind {
    /// Its name in the store and in exports (`trial_interrupted`, `resumed`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunEventKind::TrialInterrupted => "trial_interrupted",
            RunEventKind::Resumed => "resumed",
            RunEventKind::TrialRetried => "trial_retried",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [
            RunEventKind::TrialInterrupted,
            RunEventKind::Resumed,
            RunEventKind::TrialRetried,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One event of a run; the trial fields name the trial it concerns, if any.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunEvent {
    /// When it happened (unix seconds).
    pub at: i64,
    /// What happened.
    pub kind: RunEventKind,
    /// The system label of the trial concerned.
    pub system: Option<String>,
    /// The sweep point index of the trial concerned.
    pub point_index: Option<u32>,
    /// The trial number concerned.
    pub trial: Option<u32>,
    /// What happened, for people.
    pub detail: String,
}

impl Store {
    /// Records an event of `run_id`.
    pub fn record_event(&mut self, run_id: i64, e: &RunEvent) -> Result<(), StoreError> {
        insert_event(&self.conn, run_id, e)
    }

    /// The run's events in the order they happened (unknown kinds skipped).
    pub fn run_events(&self, run_id: i64) -> Result<Vec<RunEvent>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT at, kind, system, point_index, trial, detail FROM run_events
             WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            let kind: String = r.get(1)?;
            let Some(kind) = RunEventKind::parse(&kind) else {
                return Ok(None);
            };
            Ok(Some(RunEvent {
                at: r.get(0)?,
                kind,
                system: r.get(2)?,
                point_index: r.get(3)?,
                trial: r.get(4)?,
                detail: r.get(5)?,
            }))
        })?;
        let events = rows.collect::<Result<Vec<_>, _>>()?;
        Ok(events.into_iter().flatten().collect())
    }
}

/// Inserts `e` for `run_id` through `conn` (a connection or a transaction).
pub(super) fn insert_event(
    conn: &rusqlite::Connection,
    run_id: i64,
    e: &RunEvent,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO run_events (run_id, at, kind, system, point_index, trial, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            run_id,
            e.at,
            e.kind.as_str(),
            e.system,
            e.point_index,
            e.trial,
            e.detail
        ],
    )?;
    Ok(())
}
