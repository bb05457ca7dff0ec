//! `scalelab check BASELINE CANDIDATE`: a regression gate with `git bisect
//! run`'s exit-code contract (git-bisect(1), "bisect run"): 0 good, 1 bad,
//! 125 cannot be tested (skip).
//!
//! Every commit is its own run, so the gate judges between runs, where the
//! run is the unit ([`crate::analysis::between`]): the baseline is a set of
//! runs (a store file's runs of the recipe, pooled), each run gives one
//! value per point, and their spread is this host's drift between runs.
//! The candidate run is then judged against the prediction interval of
//! one new run from that set (Student's t with the baseline's variance,
//! [`compare_sides`] with one candidate run).
//!
//! - **Regression** (1): the run as a whole (each run's geometric mean
//!   over the comparable points, one test) is significantly slower with
//!   the whole 95% interval of its slowdown beyond `max_regression` (a
//!   minimum-effect test, [`crate::analysis::floor`]), or a point is,
//!   after Holm's correction over the points ([`holm`]). A slowdown whose
//!   interval reaches inside the threshold is no regression; a "good"
//!   names it. Each test is two-sided at 5%, so each claims
//!   "slower" falsely at most 2.5% of the time, and the two together at
//!   most 5%.
//! - **Good** (0): neither, and the run as a whole could have shown a
//!   change of `max_regression` (the whole-run test's smallest detectable
//!   change is under it).
//! - **Cannot say** (125): fewer than [`MIN_RUNS`] baseline runs (one
//!   run's drift between runs is unknown), another recipe, a point the
//!   candidate lacks, a client-bound or erroring point, nothing checked,
//!   a failed candidate, a baseline too noisy to see the threshold, or a
//!   slower candidate most of whose trials ran beside background load.

use crate::analysis::between::{holm, MIN_RUNS};
use crate::analysis::compare::{Comparison, Verdict, ALPHA};
use crate::analysis::floor::Side;
use crate::analysis::summary::Headline;
use crate::judging::judge::{self, Rules};
use crate::judging::runs::{compare_sides, RunComparison};
use crate::store::RunStatus;
use crate::store::{RunData, TrialStatus};
use serde::Serialize;

/// The exit code for "no significant regression".
pub const GOOD: i32 = 0;
/// The exit code for "a regression" (git bisect: bad).
pub const REGRESSION: i32 = 1;
/// The exit code for "cannot say" (git bisect: skip this commit).
pub const CANNOT_SAY: i32 = 125;

/// One point (or the run as a whole) that got slower beyond the threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slower {
    /// The system (`all points` for the run as a whole).
    pub system: String,
    /// The point (`geomean` for the run as a whole).
    pub point: String,
    /// candidate / baseline.
    pub ratio: f64,
    /// Its 95% CI, from the runs.
    pub ratio_ci: Option<(f64, f64)>,
    /// The test's p-value (two-sided; Holm-adjusted threshold for points).
    pub p_value: Option<f64>,
}

/// What the gate concluded.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// No point is significantly slower by more than the threshold.
    Good,
    /// These points are.
    Regression {
        /// The slower points, the run as a whole first when it is.
        points: Vec<Slower>,
    },
    /// No verdict can be drawn, and why.
    CannotSay {
        /// Each reason.
        reasons: Vec<String>,
    },
}

impl Outcome {
    /// The process exit code for this outcome.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Good => GOOD,
            Outcome::Regression { .. } => REGRESSION,
            Outcome::CannotSay { .. } => CANNOT_SAY,
        }
    }
}

/// The gate's full answer, for the terminal and `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    /// The verdict.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Its exit code.
    pub exit_code: i32,
    /// The largest slowdown allowed (0.05 = 5%).
    pub max_regression: f64,
    /// How many baseline runs were pooled.
    pub baseline_runs: usize,
    /// Client-bound trials left out of the baseline and of the candidate:
    /// they measured the load generator, not the server.
    pub client_bound_left_out: (usize, usize),
    /// The per-point comparison behind it, with the run as a whole under
    /// `geomean`.
    pub comparison: RunComparison,
}

/// Checks `candidate` against the `baselines` (at least one), pooled as
/// repeats of one system.
pub fn check(baselines: &[RunData], candidate: &RunData, max_regression: f64) -> Check {
    let headline = Headline::parse(&baselines[0].run.headline).unwrap_or_default();
    let rules = Rules::gate(headline, baselines[0].run.noise);
    let comparison = compare_sides(baselines, std::slice::from_ref(candidate), &rules);
    let outcome = match baselines.iter().find(|b| is_same_run(b, candidate)) {
        // Compared with itself, any run is "good": no verdict on it at all.
        Some(b) => Outcome::CannotSay {
            reasons: vec![format!(
                "the baseline holds the candidate itself (run {}); name a baseline run or \
                 store other than the candidate",
                b.run.id
            )],
        },
        None => outcome((baselines, candidate), &comparison, &rules, max_regression),
    };
    let bound = |runs: &[RunData]| {
        (runs.iter().flat_map(|r| &r.trials))
            .filter(|t| t.throughput().is_some() && t.context.client_bound_why().is_some())
            .count()
    };
    Check {
        exit_code: outcome.exit_code(),
        outcome,
        max_regression,
        baseline_runs: baselines.len(),
        client_bound_left_out: (bound(baselines), bound(std::slice::from_ref(candidate))),
        comparison,
    }
}

/// Whether `a` and `b` are one run (read once or twice, from one store or
/// from a copy of it): the same id, start time and recipe, and the same
/// trials with the same throughputs (two runs started in one second in two
/// stores are still two runs).
pub fn is_same_run(a: &RunData, b: &RunData) -> bool {
    let throughputs =
        |r: &RunData| -> Vec<Option<f64>> { r.trials.iter().map(|t| t.throughput()).collect() };
    a.run.id == b.run.id
        && a.run.started_at == b.run.started_at
        && a.run.name == b.run.name
        && a.run.experiment == b.run.experiment
        && a.run.environment == b.run.environment
        && throughputs(a) == throughputs(b)
}

fn outcome(
    (base, cand): (&[RunData], &RunData),
    c: &RunComparison,
    rules: &Rules,
    max_regression: f64,
) -> Outcome {
    let mut blocking = candidate_problems(&base[0], cand, c);
    // The engine's too-few-runs rule (`Rules::need_runs`), for the run as a
    // whole: the points' own verdicts say `?` by the same count.
    if base.len() < rules.need_runs.0 {
        blocking.push(too_few_baseline_runs(base.len()));
    }
    if c.geomean.is_none() {
        // Nothing comparable: each point's reason, then "nothing checked".
        blocking.extend(unjudged(c, max_regression));
    }
    if !blocking.is_empty() {
        return Outcome::CannotSay { reasons: blocking };
    }
    let slower = regressions(c, max_regression);
    if !slower.is_empty() {
        if let Some(why) = judge::disturbed(cand, rules) {
            // A slowdown the candidate's own probe blames on other
            // processes is no evidence against the commit.
            return Outcome::CannotSay { reasons: vec![why] };
        }
        return Outcome::Regression { points: slower };
    }
    let unjudged = unjudged(c, max_regression);
    if unjudged.is_empty() {
        Outcome::Good
    } else {
        Outcome::CannotSay { reasons: unjudged }
    }
}

/// `one baseline run: its drift between runs is unknown …`.
fn too_few_baseline_runs(n: usize) -> String {
    let have = if n == 1 {
        "one baseline run: its drift between runs is unknown".to_string()
    } else {
        format!("{n} baseline runs: too few to know the drift between runs")
    };
    format!(
        "{have}; a commit is its own run, so the gate needs a baseline of at least {MIN_RUNS} \
         runs (`scalelab run --repeat {MIN_RUNS}` into one store, then `check STORE`)"
    )
}

/// The run as a whole, then each point (Holm over the points), that is
/// significantly slower with the whole 95% interval of its slowdown beyond
/// `max_regression` ([`crate::analysis::floor`]: a minimum-effect test,
/// the threshold as the floor).
fn regressions(c: &RunComparison, max_regression: f64) -> Vec<Slower> {
    let beyond =
        |cmp: &Comparison| cmp.verdict == Verdict::Slower && beyond_threshold(cmp, max_regression);
    let mut out: Vec<Slower> = c
        .geomean
        .iter()
        .filter(|g| beyond(g))
        .map(|g| slower("all points", "geomean", g))
        .collect();
    let tested: Vec<&crate::judging::runs::PointComparison> = c
        .points
        .iter()
        .filter(|p| p.comparison.p_value.is_some())
        .collect();
    let p: Vec<f64> = tested.iter().filter_map(|p| p.comparison.p_value).collect();
    for (point, kept) in tested.iter().zip(holm(&p, ALPHA)) {
        if kept && beyond(&point.comparison) {
            out.push(slower(&point.system, &point.point, &point.comparison));
        }
    }
    out
}

/// Whether the interval of `c`'s ratio lies wholly below 1 −
/// `max_regression`.
fn beyond_threshold(c: &Comparison, max_regression: f64) -> bool {
    c.ratio_ci
        .is_some_and(|ci| crate::analysis::floor::side(ci, max_regression) == Side::Below)
}

/// Slower points whose interval reaches inside `max_regression`: named, so
/// that a "good" says what it did not claim.
pub fn within_threshold(c: &RunComparison, max_regression: f64) -> Vec<String> {
    let whole = c.geomean.iter().map(|g| ("all points", "geomean", g));
    let points = (c.points.iter()).map(|p| (p.system.as_str(), p.point.as_str(), &p.comparison));
    whole
        .chain(points)
        .filter(|(_, _, cmp)| cmp.ratio < 1.0 && cmp.p_value.is_some_and(|p| p < ALPHA))
        .filter(|(_, _, cmp)| !beyond_threshold(cmp, max_regression))
        .filter_map(|(system, point, cmp)| {
            let ci = cmp.ratio_ci?;
            Some(format!(
                "{system} {point}: {:+.1}%, within the {:.1}% threshold: CI {}",
                (cmp.ratio - 1.0) * 100.0,
                max_regression * 100.0,
                crate::analysis::floor::interval_text(ci)
            ))
        })
        .collect()
}

fn slower(system: &str, point: &str, c: &Comparison) -> Slower {
    Slower {
        system: system.to_string(),
        point: point.to_string(),
        ratio: c.ratio,
        ratio_ci: c.ratio_ci,
        p_value: c.p_value,
    }
}

/// Reasons no point can be trusted: another recipe, a candidate that did
/// not finish or measured nothing, points it lacks, nothing checked.
fn candidate_problems(base: &RunData, cand: &RunData, c: &RunComparison) -> Vec<String> {
    let mut out = Vec::new();
    if base.run.name != cand.run.name || base.run.load_kind != cand.run.load_kind {
        out.push(format!(
            "another recipe: the baseline ran `{}` ({} load), the candidate `{}` ({} load)",
            base.run.name, base.run.load_kind, cand.run.name, cand.run.load_kind
        ));
    }
    if cand.run.status != RunStatus::Finished {
        out.push(format!("the candidate run is {}", cand.run.status));
    }
    if !cand.trials.iter().any(|t| t.status == TrialStatus::Ok) {
        out.push(
            "the candidate has no trial that measured the server: every trial failed or was \
             client-bound"
                .into(),
        );
    }
    if !c.only_in_a.is_empty() {
        out.push(format!(
            "the candidate did not measure {}",
            c.only_in_a.join(", ")
        ));
    }
    out
}

/// What would settle a check whose baseline runs could tell apart only
/// `detectable`: how many more baseline runs would resolve the threshold
/// (`between::baseline_runs_to_resolve`), or that none would.
fn what_would_settle(detectable: f64, runs: usize, max_regression: f64) -> String {
    match crate::analysis::between::baseline_runs_to_resolve(detectable, runs, max_regression) {
        Some(all) if all > runs => format!(
            "{} more baseline runs, {all} in all, would resolve {:.1}% at this drift between runs",
            all - runs,
            max_regression * 100.0
        ),
        _ => format!(
            "no number of baseline runs would resolve {:.1}% against one candidate run: its own \
             drift between runs is that large on this host; repeat the candidate too \
             (`run --repeat`) and compare the sides",
            max_regression * 100.0
        ),
    }
}

/// Why no "good" can be given: points that could not be judged
/// (client-bound or erroring, "not comparable" in [`compare_sides`]), and
/// a run as a whole whose "no difference" could only have shown a change
/// larger than the threshold: a regression of the threshold's size would
/// have passed unseen, so it is no evidence of "good".
fn unjudged(c: &RunComparison, max_regression: f64) -> Vec<String> {
    let mut out = Vec::new();
    for p in &c.points {
        if let Verdict::NotComparable { reason } = &p.comparison.verdict {
            out.push(format!("{} {}: {reason}", p.system, p.point));
        }
    }
    match &c.geomean {
        Some(g) => {
            if let Some(d) = g.detectable.filter(|d| *d > max_regression) {
                out.push(format!(
                    "the run as a whole: these {} baseline runs could only tell apart a change \
                     of {:.1}% or more, above the {:.1}% threshold ({})",
                    c.runs_a,
                    d * 100.0,
                    max_regression * 100.0,
                    what_would_settle(d, c.runs_a, max_regression)
                ));
            }
            if let Verdict::NeedsMoreRuns { at_least, runs } = g.verdict {
                out.push(crate::analysis::compare::runs_too_few(at_least, runs));
            }
        }
        None => out.push(
            "nothing checked: no point was comparable between the baseline and the candidate \
             (the baseline kept no usable trial: none stored, or every one client-bound; or \
             they share no point)"
                .into(),
        ),
    }
    out
}
