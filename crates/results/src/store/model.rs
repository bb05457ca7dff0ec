//! The records the store holds and hands to analysis and reports.

use crate::model::Point;
/// What one trial measured (defined with the load results it is built from).
pub use crate::record::measurement::Measurement;
use serde::{Deserialize, Serialize};

/// Whether a trial measured the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// It did: its measurement is a result.
    Ok,
    /// It did not; `Trial::error` says why, and nothing of it is a result.
    Failed,
}

/// One stored trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Its id in the store.
    pub id: i64,
    /// The run it belongs to.
    pub run_id: i64,
    /// The system's label.
    pub system: String,
    /// The sweep point it measured.
    pub point: Point,
    /// 1-based trial number within (system, point).
    pub trial: u32,
    /// Whether it measured the server.
    pub status: TrialStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// The environmental cause of a failure (a lost host, a server that
    /// did not start, a full disk), which `--resume` retries; `None` for a
    /// good trial and for a failure of the server under test.
    #[serde(default)]
    pub failure_cause: Option<super::FailureCause>,
    /// When it started (unix seconds).
    pub started_at: i64,
    /// What the load generator measured; `None` when it measured nothing.
    pub measurement: Option<Measurement>,
    /// The probe's summary over the measured window (see `probe`).
    pub probe: Option<crate::record::probe::ProbeSummary>,
    /// Why a stored probe summary could not be read (then `probe` is
    /// `None`): named in `export` and the report, never a silent null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_unreadable: Option<String>,
    /// Completed requests per bucket of the measured window
    /// (`window.bucket_ms` wide).
    pub timeline: Vec<u64>,
    /// The timeline's bucket width, the window's steadiness and the
    /// warm-up it had.
    #[serde(default)]
    pub window: WindowFacts,
    /// Dataset, placement and other per-trial facts.
    pub context: super::TrialContext,
    /// Where it ran in its round and in the run (schema 12); `None` for a
    /// trial of an older run.
    #[serde(default)]
    pub place: Option<TrialPlace>,
}

/// Where a trial ran: its place in its round and in the run's start order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrialPlace {
    /// Its place among its round's trials at its point (0: it ran first).
    pub round_position: u32,
    /// Its place in the run's start order (0: the run's first trial).
    pub start_seq: u32,
}

/// The order a run's trials were drawn in (schema 12).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOrder {
    /// The seed of the random order (`run --seed` repeats it).
    pub seed: u64,
    /// `random` or `sweep` (`[trials] order`).
    pub order: String,
}

impl Trial {
    /// The headline throughput, or `None` for a failed trial.
    pub fn throughput(&self) -> Option<f64> {
        match self.status {
            TrialStatus::Ok => self.measurement.as_ref().map(|m| m.rps.0),
            TrialStatus::Failed => None,
        }
    }
}

/// What a trial's timeline says about its window (schema version 11).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowFacts {
    /// The width of a timeline bucket, in milliseconds (1000 for a trial
    /// stored before version 11).
    pub bucket_ms: u32,
    /// The run ended inside the last bucket (`None`: not known).
    pub last_partial: Option<bool>,
    /// The window's class; `None` for a failed trial and before version 11.
    pub steadiness: Option<crate::analysis::steady::Steadiness>,
    /// What decided the class (`stepped: levels 1.00 from bucket 0, ...`).
    pub steadiness_detail: Option<String>,
    /// The warm-up the trial ran, in seconds (an automatic one's chosen
    /// length); `None` before version 11.
    pub warmup_s: Option<f64>,
    /// Unsteady, and left out of verdicts (`[trials] unsteady =
    /// "exclude"`), as client-bound trials are.
    pub left_out: bool,
}

impl Default for WindowFacts {
    fn default() -> Self {
        WindowFacts {
            bucket_ms: crate::record::timeline::BUCKET.as_millis() as u32,
            last_partial: None,
            steadiness: None,
            steadiness_detail: None,
            warmup_s: None,
            left_out: false,
        }
    }
}

/// Whether verdicts leave a trial out, from what it stored: its load
/// generator was the limit (client-bound), or its window was unsteady where
/// its run leaves those out. The one rule: the report's samples
/// (`report::rows::Sample::left_out`) and the runner's stopping
/// rule, which counts only the trials the verdict will keep, both ask it.
pub fn left_out_of_verdicts(context: &super::TrialContext, window: &WindowFacts) -> bool {
    context.client_bound_why().is_some() || window.left_out
}

impl WindowFacts {
    /// Whether the window was warming, drifting or stepped.
    pub fn unsteady(&self) -> bool {
        self.steadiness.is_some_and(|s| s.unsteady())
    }
}

/// One stored run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Its id in the store.
    pub id: i64,
    /// The experiment's name.
    pub name: String,
    /// The experiment's description.
    pub description: String,
    /// When it started (unix seconds).
    pub started_at: i64,
    /// When it ended (unix seconds); `None` while running.
    pub finished_at: Option<i64>,
    /// Running, finished, interrupted or failed.
    pub status: super::RunStatus,
    /// The experiment file's text, exactly as run.
    pub experiment: String,
    /// The path the experiment file was read from.
    pub experiment_path: String,
    /// Environment fingerprint (kernel, CPU, memory, sysctls, ...), typed;
    /// `None` when the run has none or it could not be read.
    pub environment: Option<crate::record::environment::Environment>,
    /// The scalelab version that ran it.
    pub scalelab_version: String,
    /// The server's version string, from the first trial that had one.
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
    /// What legends, tables and verdicts call the run: `run --label`, else
    /// the server host's OS and kernel release (`Linux 6.1.0-18-amd64`).
    #[serde(default)]
    pub label: String,
    /// The revision of the software under test (`run --commit`, or
    /// `SCALELAB_COMMIT`), free-form; `None` when none was given.
    #[serde(default)]
    pub revision: Option<String>,
    /// The seed and order its trials ran in; `None` for a run older than
    /// schema 12 (its trials ran in sweep order).
    #[serde(default)]
    pub order: Option<RunOrder>,
    /// The load kind's throughput unit, as the kind declared it when the run
    /// was made; `None`: a kind this version does not know.
    #[serde(default)]
    pub rate_unit: Option<crate::units::RateUnit>,
    /// The server kind's settings that count parallel workers (the USL is
    /// fitted to them when swept); `None`: a kind this version does not
    /// know.
    #[serde(default)]
    pub parallelism: Option<Vec<String>>,
}

impl Run {
    /// The run with `stored` as its label, or, when none was stored (a
    /// store older than labels), the label of its fingerprint.
    pub fn labelled(self, stored: Option<String>) -> Run {
        let label = stored
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| self.default_label());
        Run { label, ..self }
    }

    /// The server host's OS and kernel release from the stored fingerprint
    /// (the remote `[hosts] server`'s when the experiment names one), or
    /// `run ID` without a fingerprint.
    pub fn default_label(&self) -> String {
        let server = self.experiment.parse::<toml::Table>().ok().and_then(|doc| {
            let host = doc.get("hosts")?.get("server")?.as_str()?.to_string();
            Some(host)
        });
        self.environment
            .as_ref()
            .map(|e| e.os_label(server.as_deref()))
            .unwrap_or_else(|| format!("run {}", self.id))
    }

    /// The labels of the stored experiment's `[[system]]` tables, in the
    /// order written; empty when it has none or does not parse.
    pub fn listed_systems(&self) -> Vec<String> {
        let Ok(doc) = self.experiment.parse::<toml::Table>() else {
            return Vec::new();
        };
        let Some(systems) = doc.get("system").and_then(|s| s.as_array()) else {
            return Vec::new();
        };
        systems
            .iter()
            .filter_map(|s| Some(s.get("label")?.as_str()?.to_string()))
            .collect()
    }

    /// The environment's facts as JSON (without the format version), for
    /// tables, diffs and the export; `null` when there is none.
    pub fn environment_facts(&self) -> serde_json::Value {
        (self.environment.as_ref()).map_or(serde_json::Value::Null, |e| e.facts())
    }
}

/// A run with all its trials.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunData {
    /// The run.
    pub run: Run,
    /// Its trials, in the order they were stored.
    pub trials: Vec<Trial>,
    /// Flame-graph profiles (`run --profile`); empty when not profiled.
    #[serde(default)]
    pub profiles: Vec<super::ProfileRecord>,
}

impl RunData {
    /// The legend's clauses of the load kinds among its trials
    /// ([`TrialExtras::legend_clauses`](crate::record::facts::TrialExtras::legend_clauses)):
    /// what the verdicts' legend adds to the shared not-comparable rule.
    pub fn kind_legend(&self) -> String {
        crate::record::facts::TrialExtras::legend_clauses(
            self.trials.iter().map(|t| &t.context.extras),
        )
    }

    /// System labels in the order the stored experiment lists them (its
    /// `[[system]]` tables), whatever order the trials ran in; a label the
    /// experiment does not list (or a run whose text does not parse)
    /// follows, in first-seen order.
    pub fn systems(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in &self.trials {
            if !out.contains(&t.system) {
                out.push(t.system.clone());
            }
        }
        let listed = self.run.listed_systems();
        let rank = |s: &String| listed.iter().position(|l| l == s).unwrap_or(usize::MAX);
        out.sort_by_key(rank); // stable: the unlisted keep first-seen order
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

    /// The trials of `system` at the point with index `point`.
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
