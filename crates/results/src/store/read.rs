//! Reading runs and trials back.

use super::{Measurement, Run, RunData, RunStatus, Store, StoreError, Trial, TrialStatus};
use crate::model::Point;
use crate::record::catalog::Catalog;
use crate::record::measurement::LatencySummary;
use crate::units::{CpuSeconds, Micros, PerSecond, Seconds};
use rusqlite::{params, OptionalExtension, Row};

/// A run with its trial counts, for `scalelab list`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunListing {
    /// The run.
    pub run: Run,
    /// Its trials that measured the server.
    pub trials_ok: u64,
    /// Its failed trials.
    pub trials_failed: u64,
    /// A live scalelab process holds the run's lease.
    pub owner_alive: bool,
}

impl RunListing {
    /// The status a user should see: a `running` run whose owner is gone
    /// was killed, and like an interrupted one it can be resumed.
    pub fn shown_status(&self) -> String {
        match self.run.status {
            RunStatus::Running if self.owner_alive => "running".into(),
            RunStatus::Running | RunStatus::Interrupted => "interrupted (resumable)".into(),
            other => other.to_string(),
        }
    }
}

const RUN_COLUMNS: &str = "id, name, description, started_at, finished_at, status, experiment,
    experiment_path, environment, scalelab_version, server_version, baseline, headline, load_kind,
    noise, quick, server_kind, label, revision, seed, trial_order, rate_unit, parallelism";

fn run_from_row(r: &Row) -> rusqlite::Result<Run> {
    let env: String = r.get(8)?;
    Ok(Run {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        started_at: r.get(3)?,
        finished_at: r.get(4)?,
        status: r.get(5)?,
        experiment: r.get(6)?,
        experiment_path: r.get(7)?,
        environment: crate::record::environment::Environment::from_stored(&env).ok(),
        scalelab_version: r.get(9)?,
        server_version: r.get(10)?,
        baseline: r.get(11)?,
        headline: r.get(12)?,
        load_kind: r.get(13)?,
        noise: r.get(14)?,
        quick: r.get(15)?,
        server_kind: r.get(16)?,
        label: String::new(),
        revision: r.get(18)?,
        order: match (
            r.get::<_, Option<i64>>(19)?,
            r.get::<_, Option<String>>(20)?,
        ) {
            // The seed is a u64 stored in SQLite's i64, bit for bit.
            (Some(seed), Some(order)) => Some(super::RunOrder {
                seed: seed as u64,
                order,
            }),
            _ => None,
        },
        rate_unit: super::run_kinds::rate_unit_from_text(
            r.get::<_, Option<String>>(21)?.as_deref(),
        ),
        parallelism: super::run_kinds::parallelism_from_text(
            r.get::<_, Option<String>>(22)?.as_deref(),
        ),
    }
    .labelled(r.get(17)?))
}

impl Store {
    /// Resolves `latest` or a numeric id to a run id.
    pub fn resolve_run(&self, selector: &str) -> Result<i64, StoreError> {
        if selector == "latest" {
            return self
                .conn
                .query_row("SELECT max(id) FROM runs", [], |r| {
                    r.get::<_, Option<i64>>(0)
                })?
                .ok_or(StoreError::Empty);
        }
        let id: i64 = selector
            .parse()
            .map_err(|_| StoreError::NoSuchRun(selector.to_string()))?;
        let found: Option<i64> = self
            .conn
            .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        found.ok_or(StoreError::NoSuchRun(selector.to_string()))
    }

    /// The run with id `id`, without its trials.
    pub fn run(&self, id: i64) -> Result<Run, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                [id],
                run_from_row,
            )
            .optional()?
            .ok_or(StoreError::NoSuchRun(id.to_string()))
    }

    /// Whether the run was made with `--quick`.
    pub fn run_quick(&self, id: i64) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT quick FROM runs WHERE id = ?1", [id], |r| r.get(0))?)
    }

    /// A run and all its trials, in the order they ran.
    pub fn load_run(&self, selector: &str) -> Result<RunData, StoreError> {
        let id = self.resolve_run(selector)?;
        let run = self.run(id)?;
        let mut stmt = self.conn.prepare(
            "SELECT t.id, t.system, t.point_index, t.point, t.trial, t.status, t.error, t.started_at,
                    t.context, tl.per_second, p.summary,
                    m.requests, m.duration_s, m.rps, m.bytes, m.gbit_s, m.errors, m.retries,
                    m.latency_p50_us, m.latency_p90_us, m.latency_p99_us, m.latency_p999_us,
                    m.latency_max_us, m.latency_mean_us, m.latency_stdev_us, m.client_cpu_s,
                    m.target_rate, m.connections_opened, m.notes, t.failure_cause,
                    m.latency_p75_us, tl.bucket_ms, tl.last_partial, tl.steadiness,
                    tl.steadiness_detail, tl.warmup_s, tl.unsteady_left_out,
                    t.round_position, t.start_seq
             FROM trials t
             LEFT JOIN timelines tl ON tl.trial_id = t.id
             LEFT JOIN probes p ON p.trial_id = t.id
             LEFT JOIN measurements m ON m.trial_id = t.id
             WHERE t.run_id = ?1 ORDER BY t.id",
        )?;
        let rows = stmt.query_map([id], |r| trial_from_row(id, r, self.catalog))?;
        let trials = rows.collect::<Result<Vec<_>, _>>()?;
        let profiles = self.profiles(id)?;
        Ok(RunData {
            run,
            trials,
            profiles,
        })
    }

    /// Every run with its trial counts, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunListing>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id"))?;
        let runs = stmt
            .query_map([], run_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        runs.into_iter()
            .map(|run| {
                let (ok, failed): (i64, i64) = self.conn.query_row(
                    "SELECT count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'failed')
                     FROM trials WHERE run_id = ?1",
                    [run.id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                let owner_alive = self.live_owner(run.id)?.is_some();
                Ok(RunListing { run, trials_ok: ok as u64, trials_failed: failed as u64, owner_alive })
            })
            .collect()
    }

    /// The trial's serialized HDR histogram (V2, microseconds).
    pub fn histogram(&self, trial_id: i64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT data FROM histograms WHERE trial_id = ?1",
                [trial_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Why each point stopped, by point index.
    pub fn point_stops(&self, run_id: i64) -> Result<Vec<(u32, String, u32)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT point_index, reason, trials FROM point_stops WHERE run_id = ?1 ORDER BY point_index")?;
        let rows = stmt.query_map(params![run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

fn json_col<T: serde::de::DeserializeOwned + Default>(r: &Row, i: usize) -> rusqlite::Result<T> {
    let s: Option<String> = r.get(i)?;
    Ok(s.and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default())
}

fn trial_from_row(run_id: i64, r: &Row, catalog: &Catalog) -> rusqlite::Result<Trial> {
    let status: String = r.get(5)?;
    let requests: Option<i64> = r.get(11)?;
    let measurement = match requests {
        None => None,
        Some(requests) => Some(Measurement {
            requests: requests as u64,
            duration_s: Seconds(r.get(12)?),
            rps: PerSecond(r.get(13)?),
            bytes: r.get::<_, i64>(14)? as u64,
            gbit_s: r.get(15)?,
            errors: json_col(r, 16)?,
            retries: r.get::<_, i64>(17)? as u64,
            latency_us: LatencySummary {
                p50: Micros(r.get::<_, i64>(18)? as u64),
                p75: r.get::<_, Option<i64>>(30)?.map(|v| Micros(v as u64)),
                p90: Micros(r.get::<_, i64>(19)? as u64),
                p99: Micros(r.get::<_, i64>(20)? as u64),
                p999: Micros(r.get::<_, i64>(21)? as u64),
                max: Micros(r.get::<_, i64>(22)? as u64),
                mean: r.get(23)?,
                stdev: r.get(24)?,
            },
            client_cpu_s: CpuSeconds(r.get(25)?),
            target_rate: r.get::<_, Option<f64>>(26)?.map(PerSecond),
            connections_opened: r.get::<_, i64>(27)? as u64,
            notes: json_col(r, 28)?,
        }),
    };
    let stored_probe: Option<String> = r.get(10)?;
    let context: Option<String> = r.get(8)?;
    let trial_id: i64 = r.get(0)?;
    let (probe, probe_unreadable) = read_probe(trial_id, stored_probe.as_deref());
    Ok(Trial {
        id: trial_id,
        run_id,
        system: r.get(1)?,
        point: Point {
            index: r.get(2)?,
            coords: json_col(r, 3)?,
        },
        trial: r.get(4)?,
        status: if status == "ok" {
            TrialStatus::Ok
        } else {
            TrialStatus::Failed
        },
        error: r.get(6)?,
        failure_cause: r
            .get::<_, Option<String>>(29)?
            .as_deref()
            .and_then(super::FailureCause::parse),
        started_at: r.get(7)?,
        context: (context.as_deref()).map_or_else(Default::default, |s| {
            super::TrialContext::from_stored(s, catalog)
        }),
        timeline: json_col(r, 9)?,
        window: window_facts(r)?,
        probe,
        probe_unreadable,
        measurement,
        place: match (r.get::<_, Option<u32>>(37)?, r.get::<_, Option<u32>>(38)?) {
            (Some(round_position), Some(start_seq)) => Some(super::TrialPlace {
                round_position,
                start_seq,
            }),
            _ => None,
        },
    })
}

/// Columns 31.. of a trial row: its timeline's facts (schema version 11;
/// a trial without a timeline row reads as 1 s buckets, nothing known).
fn window_facts(r: &rusqlite::Row) -> rusqlite::Result<super::WindowFacts> {
    Ok(super::WindowFacts {
        bucket_ms: r.get::<_, Option<u32>>(31)?.unwrap_or(1000),
        last_partial: r.get(32)?,
        steadiness: r
            .get::<_, Option<String>>(33)?
            .as_deref()
            .and_then(crate::analysis::steady::Steadiness::parse),
        steadiness_detail: r.get(34)?,
        warmup_s: r.get(35)?,
        left_out: r.get::<_, Option<bool>>(36)?.unwrap_or(false),
    })
}

/// What is stored in a probe summary's place when the probe refused it
/// (`ProbeData::finite`).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct RefusedProbe {
    /// Why: the figure that was not finite.
    pub refused: String,
}

/// The stored probe summary, or why there is none to read.
fn read_probe(
    trial_id: i64,
    stored: Option<&str>,
) -> (Option<crate::record::probe::ProbeSummary>, Option<String>) {
    let Some(text) = stored else {
        return (None, None);
    };
    match serde_json::from_str(text) {
        Ok(p) => (Some(p), None),
        Err(e) => {
            let why = match serde_json::from_str::<RefusedProbe>(text) {
                Ok(r) => r.refused,
                Err(_) => format!("the stored probe summary cannot be read ({e})"),
            };
            (
                None,
                Some(format!(
                    "trial {trial_id}: {why}; its server figures are missing"
                )),
            )
        }
    }
}
