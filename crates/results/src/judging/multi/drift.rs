//! The drift between runs of one side (repeats of one label): per point,
//! the spread of the run headlines beside the spread of the trials inside
//! a run ([`crate::analysis::between::drift`]), how many runs a side would
//! resolve the recipe's noise floor ([`runs_needed`]), and, when the runs
//! disagree beyond their own spread, what differed between them, from
//! what each run and trial stored.

use super::Merged;
use crate::analysis::between::{drift, runs_needed, Drift};
use crate::analysis::summary::median;
use crate::judging::judge::{by_run, headline, kept};
use crate::store::RunData;
use serde::Serialize;

/// Repeats whose run headlines spread by more than this many times the
/// trials inside a run (and by more than the noise floor) disagree
/// beyond their own spread: [`SideDrift::why`] lists what differed.
pub const DISAGREE_FACTOR: f64 = 2.0;

/// One side's drift between its runs.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SideDrift {
    /// The side's name (its label).
    pub side: String,
    /// Runs in the side.
    pub runs: usize,
    /// Each point with a drift (3 or more runs with a value there).
    pub points: Vec<PointDrift>,
    /// The noise floor the plan below is for (0.02 = 2%).
    pub noise: f64,
    /// Runs a side for the 95% CI of a ratio between runs to be within
    /// ±`noise`, at the median drift over the points; `None` past 50.
    pub runs_for_noise: Option<usize>,
    /// The median over the points of the drift between runs.
    pub median_between_cv: f64,
    /// The median over the points of the spread inside a run.
    pub median_within_cv: Option<f64>,
    /// When the runs disagree beyond their own spread: each stored fact
    /// per run, those that differ first.
    pub why: Vec<RunFact>,
}

/// One point's drift.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PointDrift {
    /// The series (`label · system`).
    pub series: String,
    /// `connections=64`.
    pub point: String,
    /// Between runs and within a run.
    pub drift: Drift,
}

/// A fact stored per run, one value per run of the side.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunFact {
    /// What it is.
    pub fact: String,
    /// Its value in each run, in the side's order.
    pub values: Vec<String>,
    /// Whether the runs' values differ.
    pub differs: bool,
}

/// Every side of 3 or more runs.
pub fn of_sides(m: &Merged) -> Vec<SideDrift> {
    let agg = m.aggregate();
    let noise = m.data.run.noise;
    m.sides
        .iter()
        .enumerate()
        .filter(|(_, s)| s.runs.len() >= crate::analysis::between::MIN_RUNS)
        .map(|(k, side)| {
            let mut points = Vec::new();
            for series in m.series.iter().filter(|s| s.side == k) {
                for c in agg.cells.iter().filter(|c| c.system == series.name) {
                    let runs: Vec<Vec<f64>> = by_run(&kept(&c.samples))
                        .into_values()
                        .map(|r| r.iter().map(|s| s.value).collect())
                        .collect();
                    if let Some(d) = drift(&runs, |v| headline(v, agg.headline)) {
                        points.push(PointDrift {
                            series: series.name.clone(),
                            point: c.point.label(),
                            drift: d,
                        });
                    }
                }
            }
            let between: Vec<f64> = points.iter().map(|p| p.drift.between_cv).collect();
            let within: Vec<f64> = points.iter().filter_map(|p| p.drift.within_cv).collect();
            let median_between_cv = median(&between).unwrap_or(0.0);
            let median_within_cv = median(&within);
            let disagree = !points.is_empty()
                && median_between_cv > noise
                && median_within_cv.map_or(true, |w| median_between_cv > DISAGREE_FACTOR * w);
            let runs: Vec<&RunData> = side.runs.iter().map(|&i| &m.runs[i]).collect();
            SideDrift {
                side: side.name.clone(),
                runs: side.runs.len(),
                points,
                noise,
                runs_for_noise: runs_needed(median_between_cv, noise),
                median_between_cv,
                median_within_cv,
                why: if disagree { facts(&runs) } else { Vec::new() },
            }
        })
        .collect()
}

/// The facts each run stored that can tell two boots apart: the kernel,
/// the server's CPUs, steal, frequency, background load, how evenly the
/// server's processes shared its work, and how often it was started.
fn facts(runs: &[&RunData]) -> Vec<RunFact> {
    type Read = fn(&RunData) -> String;
    let table: [(&str, Read); 7] = [
        ("kernel", |r| {
            r.run
                .environment
                .as_ref()
                .map_or("–".into(), |e| e.machine.kernel_release.clone())
        }),
        ("server CPUs", |r| {
            first(r, |t| {
                let p = t.context.placement.as_ref()?;
                Some(p.affinity.clone().unwrap_or_else(|| "any".into()))
            })
            .unwrap_or_else(|| "any".into())
        }),
        ("steal (median share of CPU time)", |r| {
            percent(per_trial(r, |p| Some(p.cpu.steal)))
        }),
        ("background load (median share)", |r| {
            percent(per_trial(r, |p| Some(p.background?.share)))
        }),
        ("CPU frequency (median MHz)", |r| {
            per_trial(r, |p| p.freq_mhz_mean).map_or("–".into(), |v| format!("{v:.0}"))
        }),
        ("busiest server process (median share of its CPU)", |r| {
            percent(per_trial(r, |p| {
                let total: f64 = p.server_processes.iter().map(|s| s.cpu_s).sum();
                let top = p
                    .server_processes
                    .iter()
                    .map(|s| s.cpu_s)
                    .reduce(f64::max)?;
                (total > 0.0).then(|| top / total)
            }))
        }),
        ("server starts (distinct server PIDs)", |r| {
            let mut pids: Vec<u32> = (r.trials.iter())
                .filter_map(|t| t.probe.as_ref()?.server_pid)
                .collect();
            pids.sort_unstable();
            pids.dedup();
            pids.len().to_string()
        }),
    ];
    let mut out: Vec<RunFact> = table
        .iter()
        .map(|(fact, read)| {
            let values: Vec<String> = runs.iter().map(|r| read(r)).collect();
            RunFact {
                fact: fact.to_string(),
                differs: values.iter().any(|v| v != &values[0]),
                values,
            }
        })
        .collect();
    out.sort_by_key(|f| !f.differs);
    out
}

fn first(r: &RunData, f: impl Fn(&crate::store::Trial) -> Option<String>) -> Option<String> {
    r.trials.iter().find_map(f)
}

/// The median over the run's successful trials of a probe figure.
fn per_trial(
    r: &RunData,
    f: impl Fn(&crate::record::probe::ProbeSummary) -> Option<f64>,
) -> Option<f64> {
    let v: Vec<f64> = (r.trials.iter())
        .filter(|t| t.throughput().is_some())
        .filter_map(|t| f(t.probe.as_ref()?))
        .filter(|v| v.is_finite())
        .collect();
    median(&v)
}

fn percent(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.1}%", v * 100.0))
}

/// `to tell 2% apart between runs on this host: 12 runs a side (median
/// drift 4.1% between runs, 0.8% within)`.
pub fn plan_sentence(s: &SideDrift) -> String {
    let runs = s.runs_for_noise.map_or_else(
        || {
            format!(
                "more than {} runs a side",
                crate::analysis::between::MAX_RUNS_PLANNED
            )
        },
        |n| format!("{n} runs a side"),
    );
    format!(
        "to tell {} apart between runs on this host: {runs} (median drift {} between runs, {} \
         within a run; a 95% CI of the ratio within ±{}, Kalibera & Jones 2013; a change is \
         claimed only when its whole CI clears the {} floor, so these runs find a change of {} \
         or more)",
        pct(s.noise),
        pct(s.median_between_cv),
        s.median_within_cv.map_or("–".into(), pct),
        pct(s.noise),
        pct(s.noise),
        pct(2.0 * s.noise)
    )
}

/// A share as a percentage with one decimal: `4.1%`.
pub fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}
