//! Flame-graph profiles of a run: folded stacks per system and point, with
//! the paired throughputs that give the profiling overhead. Profiled trials
//! are extra trials: they live here, never in `trials`.

use super::{Store, StoreError};
use crate::model::Point;
use rusqlite::params;
use serde::{Deserialize, Serialize};

/// One profiled (system, point), or why it could not be profiled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// The system's label.
    pub system: String,
    /// The sweep point profiled.
    pub point: Point,
    /// `peak`, `collapse` or `compare` (see `profile::Role`).
    pub role: String,
    /// perf samples taken.
    pub samples: u64,
    /// Folded stacks (`frame;frame count` lines); `None` when it failed.
    pub folded: Option<String>,
    /// Throughput of the paired trial without perf.
    pub plain_rps: Option<f64>,
    /// Throughput of the trial under perf.
    pub profiled_rps: Option<f64>,
    /// Why it could not be profiled.
    pub error: Option<String>,
    /// Off-CPU folded stacks from a third extra trial: nanoseconds the server's threads
    /// spent blocked, by the stack they blocked in (`profile::offcpu`); `None` when not taken.
    #[serde(default)]
    pub offcpu: Option<String>,
    /// Why there is no off-CPU profile (tracepoints not permitted, ...).
    #[serde(default)]
    pub offcpu_error: Option<String>,
}

impl ProfileRecord {
    /// Throughput lost to profiling, from the paired trials.
    pub fn overhead(&self) -> Option<f64> {
        crate::record::profile::overhead(self.plain_rps?, self.profiled_rps?)
    }
}

impl Store {
    /// Stores a profile of `run_id`.
    pub fn insert_profile(&mut self, run_id: i64, p: &ProfileRecord) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO profiles (run_id, system, point_index, point, role, samples, folded,
                plain_rps, profiled_rps, error, offcpu, offcpu_error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                run_id,
                p.system,
                p.point.index,
                serde_json::to_string(&p.point.coords)?,
                p.role,
                p.samples as i64,
                p.folded,
                p.plain_rps,
                p.profiled_rps,
                p.error,
                p.offcpu,
                p.offcpu_error
            ],
        )?;
        Ok(())
    }

    /// The run's profiles in the order they were taken.
    pub fn profiles(&self, run_id: i64) -> Result<Vec<ProfileRecord>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT system, point_index, point, role, samples, folded, plain_rps, profiled_rps,
                    error, offcpu, offcpu_error
             FROM profiles WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok((
                ProfileRecord {
                    system: r.get(0)?,
                    point: Point {
                        index: r.get(1)?,
                        coords: Vec::new(),
                    },
                    role: r.get(3)?,
                    samples: r.get::<_, i64>(4)? as u64,
                    folded: r.get(5)?,
                    plain_rps: r.get(6)?,
                    profiled_rps: r.get(7)?,
                    error: r.get(8)?,
                    offcpu: r.get(9)?,
                    offcpu_error: r.get(10)?,
                },
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (mut p, coords) = row?;
            p.point.coords = serde_json::from_str(&coords)?;
            out.push(p);
        }
        Ok(out)
    }
}
