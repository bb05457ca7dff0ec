//! Writing runs and trials.

use super::{Measurement, RunStatus, Store, StoreError, TrialStatus};
use crate::model::Point;
use rusqlite::params;

/// A run as it starts.
pub struct NewRun<'a> {
    /// The experiment's name.
    pub name: &'a str,
    /// The experiment's description.
    pub description: &'a str,
    /// The experiment file's text, exactly as run.
    pub experiment: &'a str,
    /// The path it was read from.
    pub experiment_path: &'a str,
    /// Run with `--quick`.
    pub quick: bool,
    /// The environment fingerprint.
    pub environment: &'a crate::record::environment::Environment,
    /// The baseline system's label.
    pub baseline: &'a str,
    /// The headline statistic: `median` or `best`.
    pub headline: &'a str,
    /// The load kind's registry name (it fixes the throughput unit).
    pub load_kind: &'a str,
    /// The server kind's registry name (it says which settings count
    /// parallel workers).
    pub server_kind: &'a str,
    /// The load kind's throughput unit (`runs.rate_unit`).
    pub rate_unit: Option<crate::units::RateUnit>,
    /// The server kind's parallelism settings (`runs.parallelism`).
    pub parallelism: Option<&'a [&'a str]>,
    /// Relative differences below this are never called a difference.
    pub noise: f64,
    /// The run's label (`run --label`).
    pub label: Option<&'a str>,
    /// The revision of the software under test (`run --commit`).
    pub revision: Option<&'a str>,
}

/// A trial as it ends: everything is written in one transaction.
pub struct NewTrial<'a> {
    /// The run it belongs to.
    pub run_id: i64,
    /// The system's label.
    pub system: &'a str,
    /// The sweep point it measured.
    pub point: &'a Point,
    /// 1-based trial number within (system, point).
    pub trial: u32,
    /// Whether it measured the server.
    pub status: TrialStatus,
    /// Why it failed.
    pub error: Option<&'a str>,
    /// The failure's environmental cause, if it had one (`--resume`
    /// retries those trials).
    pub failure_cause: Option<super::FailureCause>,
    /// When it started (unix seconds).
    pub started_at: i64,
    /// Dataset, placement and the other per-trial facts.
    pub context: &'a super::TrialContext,
    /// What the load generator measured.
    pub measurement: Option<&'a Measurement>,
    /// Completed requests per bucket of the measured window.
    pub timeline: &'a [u64],
    /// The buckets' width, the window's class and its warm-up.
    pub window: &'a super::WindowFacts,
    /// The latency HDR histogram, serialized (V2, microseconds).
    pub histogram: Option<&'a [u8]>,
    /// The probe's summary of the measured window.
    pub probe_summary: Option<&'a crate::record::probe::ProbeSummary>,
    /// The probe's samples over the measured window.
    pub probe_timeline: Option<&'a [crate::record::probe::ProbeSample]>,
    /// Why the probe's summary was refused (`ProbeData::finite`): stored
    /// in its place, and named when the trial is read.
    pub probe_refused: Option<&'a str>,
}

/// Now, in unix seconds (0 if the clock is before 1970).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Creates a run in the `running` state and returns its id.
    pub fn create_run(&mut self, r: &NewRun) -> Result<i64, StoreError> {
        self.create_run_in_group(r, None)
    }

    /// Creates a run as [`Store::create_run`] does and, with `group`, makes
    /// it one of the group's runs in the same transaction: a kill between
    /// the two can leave no repeat outside its group. `group` is the
    /// group's first run (`None`: this run is the first) and its size.
    pub fn create_run_in_group(
        &mut self,
        r: &NewRun,
        group: Option<(Option<i64>, u32)>,
    ) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (name, description, started_at, status, experiment, experiment_path,
                quick, environment, scalelab_version, baseline, headline, load_kind, noise,
                server_kind, label, revision, rate_unit, parallelism)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                ?16, ?17)",
            params![
                r.name,
                r.description,
                now(),
                r.experiment,
                r.experiment_path,
                r.quick,
                r.environment.to_stored()?,
                env!("CARGO_PKG_VERSION"),
                r.baseline,
                r.headline,
                r.load_kind,
                r.noise,
                r.server_kind,
                r.label,
                r.revision,
                r.rate_unit.map(|u| u.as_str()),
                r.parallelism.map(super::run_kinds::parallelism_text)
            ],
        )?;
        let id = tx.last_insert_rowid();
        if let Some((first, repeats)) = group {
            tx.execute(
                "UPDATE runs SET repeat_of = ?1, repeats = ?2 WHERE id = ?3",
                params![first.unwrap_or(id), repeats, id],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Sets what the run is called (its label) and the revision of the
    /// software under test; `None` keeps the stored value.
    pub fn set_run_label(
        &mut self,
        run_id: i64,
        label: Option<&str>,
        revision: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET label = coalesce(?1, label), revision = coalesce(?2, revision)
             WHERE id = ?3",
            params![label, revision, run_id],
        )?;
        Ok(())
    }

    /// Sets the run's status; any status but `running` also sets its end time.
    pub fn set_run_status(&mut self, run_id: i64, status: RunStatus) -> Result<(), StoreError> {
        let finished = if status == RunStatus::Running {
            None
        } else {
            Some(now())
        };
        self.conn.execute(
            "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3",
            params![status, finished, run_id],
        )?;
        Ok(())
    }

    /// Records the server's version string with the run.
    pub fn set_server_version(&mut self, run_id: i64, version: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET server_version = ?1 WHERE id = ?2",
            params![version, run_id],
        )?;
        Ok(())
    }

    /// Commits one trial and everything measured in it.
    pub fn insert_trial(&mut self, t: &NewTrial) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO trials (run_id, system, point_index, point, trial, status, error, started_at, context,
                failure_cause)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                t.run_id,
                t.system,
                t.point.index,
                serde_json::to_string(&t.point.coords)?,
                t.trial,
                status_text(t.status),
                t.error,
                t.started_at,
                serde_json::to_string(t.context)?,
                t.failure_cause.map(super::FailureCause::as_str)
            ],
        )?;
        let id = tx.last_insert_rowid();
        if let Some(m) = t.measurement {
            insert_measurement(&tx, id, m)?;
        }
        tx.execute(
            "INSERT INTO timelines (trial_id, per_second, probe, bucket_ms, last_partial,
                                    steadiness, steadiness_detail, warmup_s,
                                    unsteady_left_out)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id,
                serde_json::to_string(t.timeline)?,
                t.probe_timeline.map(serde_json::to_string).transpose()?,
                t.window.bucket_ms,
                t.window.last_partial,
                t.window.steadiness.map(|s| s.as_str()),
                t.window.steadiness_detail,
                t.window.warmup_s,
                t.window.left_out,
            ],
        )?;
        let probe = match (t.probe_summary, t.probe_refused) {
            (Some(p), _) => Some(serde_json::to_string(p)?),
            (None, Some(why)) => Some(serde_json::to_string(&super::read::RefusedProbe {
                refused: why.to_string(),
            })?),
            (None, None) => None,
        };
        if let Some(p) = probe {
            tx.execute(
                "INSERT INTO probes (trial_id, summary) VALUES (?1, ?2)",
                params![id, p],
            )?;
        }
        if let Some(h) = t.histogram {
            tx.execute(
                "INSERT INTO histograms (trial_id, encoding, data) VALUES (?1, 'hdr-v2', ?2)",
                params![id, h],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Records why a point stopped taking trials.
    pub fn record_point_stop(
        &mut self,
        run_id: i64,
        point: u32,
        reason: &str,
        trials: u32,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO point_stops (run_id, point_index, reason, trials) VALUES (?1, ?2, ?3, ?4)",
            params![run_id, point, reason, trials],
        )?;
        Ok(())
    }
}

pub(super) fn status_text(s: TrialStatus) -> &'static str {
    match s {
        TrialStatus::Ok => "ok",
        TrialStatus::Failed => "failed",
    }
}

fn insert_measurement(
    tx: &rusqlite::Transaction,
    id: i64,
    m: &Measurement,
) -> Result<(), StoreError> {
    let l = &m.latency_us;
    tx.execute(
        "INSERT INTO measurements (trial_id, requests, duration_s, rps, bytes, gbit_s, errors, retries,
            latency_p50_us, latency_p90_us, latency_p99_us, latency_p999_us, latency_max_us,
            latency_mean_us, latency_stdev_us, client_cpu_s, target_rate, connections_opened, notes,
            latency_p75_us)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
            ?20)",
        params![
            id,
            m.requests as i64,
            m.duration_s.0,
            m.rps.0,
            m.bytes as i64,
            m.gbit_s,
            serde_json::to_string(&m.errors)?,
            m.retries as i64,
            l.p50.0 as i64,
            l.p90.0 as i64,
            l.p99.0 as i64,
            l.p999.0 as i64,
            l.max.0 as i64,
            l.mean,
            l.stdev,
            m.client_cpu_s.0,
            m.target_rate.map(|r| r.0),
            m.connections_opened as i64,
            serde_json::to_string(&m.notes)?,
            l.p75.map(|v| v.0 as i64)
        ],
    )?;
    Ok(())
}
