//! The records the store holds and hands to analysis and reports.

pub use crate::load::result::Measurement;
use crate::model::Point;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    Ok,
    Failed,
}

/// One stored trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub id: i64,
    pub run_id: i64,
    pub system: String,
    pub point: Point,
    /// 1-based trial number within (system, point).
    pub trial: u32,
    pub status: TrialStatus,
    pub error: Option<String>,
    pub started_at: i64,
    pub measurement: Option<Measurement>,
    /// The probe's summary over the measured window (see `probe`).
    pub probe: Option<crate::probe::ProbeSummary>,
    /// Completed requests per second of the measured window.
    pub timeline: Vec<u64>,
    /// Dataset, placement and other per-trial facts.
    pub context: super::TrialContext,
}

impl Trial {
    /// The headline throughput, or `None` for a failed trial.
    pub fn throughput(&self) -> Option<f64> {
        match self.status {
            TrialStatus::Ok => self.measurement.as_ref().map(|m| m.rps),
            TrialStatus::Failed => None,
        }
    }
}

/// One stored run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    /// `running`, `finished`, `interrupted` or `failed`.
    pub status: String,
    /// The experiment file's text, exactly as run.
    pub experiment: String,
    pub experiment_path: String,
    /// Environment fingerprint (kernel, CPU, memory, sysctls, ...).
    pub environment: serde_json::Value,
    pub scalelab_version: String,
    pub server_version: Option<String>,
    /// The label of the baseline system.
    pub baseline: Option<String>,
    /// The headline statistic: `median` or `best`.
    pub headline: String,
    /// The load kind's registry name (`http`, `pg`, ...): it fixes the
    /// throughput unit.
    pub load_kind: String,
    /// The server kind's registry name (`nginx`, `postgres`, ...): it says
    /// which `server.<setting>` axes count parallel workers.
    #[serde(default)]
    pub server_kind: String,
    /// `[trials] noise`: relative differences below this are never called a
    /// difference.
    pub noise: f64,
    /// Run with `--quick`: the experiment's `[quick]` sweep and trials.
    #[serde(default)]
    pub quick: bool,
}

/// A run with all its trials.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunData {
    pub run: Run,
    pub trials: Vec<Trial>,
    /// Flame-graph profiles (`run --profile`); empty when not profiled.
    #[serde(default)]
    pub profiles: Vec<super::ProfileRecord>,
}

impl RunData {
    /// System labels in first-seen order.
    pub fn systems(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in &self.trials {
            if !out.contains(&t.system) {
                out.push(t.system.clone());
            }
        }
        out
    }

    /// Points in sweep order.
    pub fn points(&self) -> Vec<Point> {
        let mut out: Vec<Point> = Vec::new();
        for t in &self.trials {
            if !out.iter().any(|p| p.index == t.point.index) {
                out.push(t.point.clone());
            }
        }
        out.sort_by_key(|p| p.index);
        out
    }

    pub fn trials_at<'a>(
        &'a self,
        system: &'a str,
        point: u32,
    ) -> impl Iterator<Item = &'a Trial> + 'a {
        self.trials
            .iter()
            .filter(move |t| t.system == system && t.point.index == point)
    }
}
