//! `scalelab check BASELINE CANDIDATE`: a regression gate with `git bisect
//! run`'s exit-code contract (git-bisect(1), "bisect run"): 0 good, 1 bad,
//! 125 cannot be tested (skip).
//!
//! The candidate is compared with [`compare_runs`] against the baseline: one
//! run, or a saved set of runs whose trials are pooled, so its statistic is
//! the median over the set. A point regresses when it is significantly
//! slower (the verdict's Mann-Whitney test and noise floor) *and* slower by
//! more than `max_regression`. Anything that stops a verdict (another
//! recipe, a point the candidate did not measure, a client-bound or
//! erroring point, too few trials, a failed candidate) is "cannot say"
//! unless a regression was found at a point that could be judged.

use crate::analysis::compare::Verdict;
use crate::report::runs::{compare_runs, RunComparison};
use crate::store::{RunData, TrialStatus};
use serde::Serialize;

/// The exit code for "no significant regression".
pub const GOOD: i32 = 0;
/// The exit code for "a regression" (git bisect: bad).
pub const REGRESSION: i32 = 1;
/// The exit code for "cannot say" (git bisect: skip this commit).
pub const CANNOT_SAY: i32 = 125;

/// One point that got slower beyond the threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slower {
    /// The system.
    pub system: String,
    /// The point.
    pub point: String,
    /// candidate / baseline.
    pub ratio: f64,
    /// Its 95% bootstrap CI.
    pub ratio_ci: Option<(f64, f64)>,
    /// The Mann-Whitney p-value.
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
        /// The slower points.
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
    /// The per-point comparison behind it.
    pub comparison: RunComparison,
}

/// Checks `candidate` against the pooled `baselines` (at least one).
pub fn check(baselines: &[RunData], candidate: &RunData, max_regression: f64) -> Check {
    let (baseline, bound_a) = without_client_bound(pooled(baselines));
    let (candidate_kept, bound_b) = without_client_bound(candidate.clone());
    let comparison = compare_runs(&baseline, &candidate_kept, baseline.run.noise);
    let outcome = match baselines.iter().find(|b| is_same_run(b, candidate)) {
        // Compared with itself, any run is "good": no verdict on it at all.
        Some(b) => Outcome::CannotSay {
            reasons: vec![format!(
                "the baseline holds the candidate itself (run {}); name a baseline run or \
                 store other than the candidate",
                b.run.id
            )],
        },
        None => outcome(&baseline, &candidate_kept, &comparison, max_regression),
    };
    Check {
        exit_code: outcome.exit_code(),
        outcome,
        max_regression,
        baseline_runs: baselines.len(),
        client_bound_left_out: (bound_a, bound_b),
        comparison,
    }
}

/// Whether `a` and `b` are one run (read once or twice, from one store or
/// from a copy of it): the same id, start time and recipe.
pub fn is_same_run(a: &RunData, b: &RunData) -> bool {
    a.run.id == b.run.id
        && a.run.started_at == b.run.started_at
        && a.run.experiment == b.run.experiment
}

/// The run without its client-bound trials (they measured the load
/// generator, not the server), and how many were left out. A point all of
/// whose trials were client-bound is then missing, which is "cannot say".
fn without_client_bound(mut run: RunData) -> (RunData, usize) {
    let before = run.trials.len();
    run.trials
        .retain(|t| t.context.client_bound_why().is_none());
    let left_out = before - run.trials.len();
    (run, left_out)
}

/// The runs as one: the first run's record with every run's trials.
fn pooled(runs: &[RunData]) -> RunData {
    let mut out = runs[0].clone();
    for r in &runs[1..] {
        out.trials.extend(r.trials.iter().cloned());
    }
    out
}

fn outcome(base: &RunData, cand: &RunData, c: &RunComparison, max_regression: f64) -> Outcome {
    let mut blocking = candidate_problems(base, cand, c);
    if c.points.is_empty() {
        blocking.push(nothing_checked(base));
    }
    if !blocking.is_empty() {
        return Outcome::CannotSay { reasons: blocking };
    }
    let slower: Vec<Slower> = c
        .points
        .iter()
        .filter(|p| p.comparison.verdict == Verdict::Slower)
        .filter(|p| p.comparison.ratio <= 1.0 - max_regression)
        .map(|p| Slower {
            system: p.system.clone(),
            point: p.point.clone(),
            ratio: p.comparison.ratio,
            ratio_ci: p.comparison.ratio_ci,
            p_value: p.comparison.p_value,
        })
        .collect();
    if !slower.is_empty() {
        return Outcome::Regression { points: slower };
    }
    let unjudged = unjudged_points(c, max_regression);
    if unjudged.is_empty() {
        Outcome::Good
    } else {
        Outcome::CannotSay { reasons: unjudged }
    }
}

/// Reasons no point can be trusted: another recipe, a candidate that did
/// not finish or measured nothing, points it lacks.
fn candidate_problems(base: &RunData, cand: &RunData, c: &RunComparison) -> Vec<String> {
    let mut out = Vec::new();
    if base.run.name != cand.run.name || base.run.load_kind != cand.run.load_kind {
        out.push(format!(
            "another recipe: the baseline ran `{}` ({} load), the candidate `{}` ({} load)",
            base.run.name, base.run.load_kind, cand.run.name, cand.run.load_kind
        ));
    }
    if cand.run.status != "finished" {
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

/// Why no point was checked (a gate that checked nothing passes nothing):
/// the baseline kept no trial (all client-bound, or none), or the two runs
/// share no point.
fn nothing_checked(base: &RunData) -> String {
    if base.trials.is_empty() {
        "nothing checked: the baseline has no usable trial (none stored, or every one \
         client-bound)"
            .into()
    } else {
        "nothing checked: the baseline and the candidate share no point".into()
    }
}

/// Points that could not be judged: client-bound or erroring (both are
/// "not comparable" in [`compare_runs`]), with too few trials, or whose
/// "no difference" (Welch's t at 3 a side) could only have shown a change
/// larger than the threshold: a regression of the threshold's size would
/// have passed unseen, so that point is no evidence of "good".
fn unjudged_points(c: &RunComparison, max_regression: f64) -> Vec<String> {
    let mut out = Vec::new();
    for p in &c.points {
        if let Some(d) = p.comparison.detectable.filter(|d| *d > max_regression) {
            out.push(format!(
                "{} {}: these trials could only tell apart a change of {:.1}% or more, above \
                 the {:.1}% threshold ({} against {} trials; run more)",
                p.system,
                p.point,
                d * 100.0,
                max_regression * 100.0,
                p.trials_a,
                p.trials_b
            ));
            continue;
        }
        match &p.comparison.verdict {
            Verdict::NotComparable { reason } => {
                out.push(format!("{} {}: {reason}", p.system, p.point))
            }
            Verdict::NeedsMoreTrials { at_least } => out.push(format!(
                "{} {}: too few trials to judge ({} against {}; at least {at_least} each needed)",
                p.system, p.point, p.trials_a, p.trials_b
            )),
            Verdict::Faster | Verdict::Slower | Verdict::NoDifference => {}
        }
    }
    out
}

/// The gate's answer as text.
pub fn render(check: &Check) -> String {
    let mut out = String::new();
    let (a, b) = check.client_bound_left_out;
    if a + b > 0 {
        out += &format!(
            "left out as client-bound (they measured the load generator): {a} baseline \
             trial(s), {b} candidate trial(s)\n"
        );
    }
    match &check.outcome {
        Outcome::Good => {
            out += &format!(
            "good: no point is significantly slower by more than {:.1}% ({} point(s) checked)\n",
            check.max_regression * 100.0,
            check.comparison.points.len()
        )
        }
        Outcome::Regression { points } => {
            out += &format!(
                "regression: {} point(s) significantly slower by more than {:.1}%\n",
                points.len(),
                check.max_regression * 100.0
            );
            for p in points {
                let ci = p.ratio_ci.map_or(String::new(), |(lo, hi)| {
                    format!(
                        " (95% CI {:+.1}%..{:+.1}%)",
                        (lo - 1.0) * 100.0,
                        (hi - 1.0) * 100.0
                    )
                });
                let pv = p.p_value.map_or(String::new(), |v| {
                    format!(", {}", crate::analysis::compare::format_p(v))
                });
                out += &format!(
                    "  {} {}: {:+.1}%{ci}{pv}\n",
                    p.system,
                    p.point,
                    (p.ratio - 1.0) * 100.0
                );
            }
        }
        Outcome::CannotSay { reasons } => {
            out += "cannot say (exit 125, `git bisect run` skips this revision):\n";
            for r in reasons {
                out += &format!("  {r}\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::run_data;

    #[test]
    fn a_run_checked_against_itself_is_cannot_say_not_good() {
        let run = run_data(&["nginx"]);
        let c = check(std::slice::from_ref(&run), &run, 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY, "{:?}", c.outcome);
        assert!(
            render(&c).contains("the candidate itself"),
            "{}",
            render(&c)
        );
    }

    #[test]
    fn another_run_of_the_same_recipe_is_no_self_comparison() {
        let base = run_data(&["nginx"]);
        let mut cand = base.clone();
        cand.run.id += 1;
        cand.run.started_at += 600;
        let c = check(&[base], &cand, 0.05);
        assert!(
            !render(&c).contains("the candidate itself"),
            "{}",
            render(&c)
        );
    }

    #[test]
    fn two_trials_a_side_cannot_say_and_three_are_judged() {
        let slower = |trials: u32| {
            let mut base = run_data(&["nginx"]);
            base.trials.retain(|t| t.trial <= trials);
            let mut cand = base.clone();
            cand.run.id += 1;
            cand.run.started_at += 600;
            for t in &mut cand.trials {
                if let Some(m) = &mut t.measurement {
                    m.rps *= 0.5;
                }
            }
            check(&[base], &cand, 0.3)
        };
        let two = slower(2);
        assert_eq!(two.exit_code, CANNOT_SAY, "{}", render(&two));
        assert!(
            render(&two).contains("too few trials to judge"),
            "{}",
            render(&two)
        );
        // Three a side: Welch's t on all trials names the halving.
        let three = slower(3);
        assert_eq!(three.exit_code, 1, "{}", render(&three));
    }

    #[test]
    fn a_no_difference_that_could_not_see_the_threshold_is_cannot_say_not_good() {
        // Three trials a side, one of them wild: Welch's t finds no
        // difference, but could only have seen a change far above 5%.
        let mut base = run_data(&["nginx"]);
        base.trials.retain(|t| t.trial <= 3);
        let mut cand = base.clone();
        cand.run.id += 1;
        cand.run.started_at += 600;
        for t in &mut cand.trials {
            if let Some(m) = &mut t.measurement {
                m.rps *= if t.trial == 1 { 0.2 } else { 0.97 };
            }
        }
        let c = check(&[base], &cand, 0.05);
        assert!(
            c.comparison
                .points
                .iter()
                .any(|p| p.comparison.detectable.is_some_and(|d| d > 0.05)),
            "{}",
            render(&c)
        );
        assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
        assert!(
            render(&c).contains("could only tell apart a change of"),
            "{}",
            render(&c)
        );
    }

    #[test]
    fn a_baseline_with_no_usable_trial_checks_nothing_and_cannot_say() {
        // Issue 36: "good: ... (0 point(s) checked)" and exit 0 made every
        // commit good under `git bisect run`.
        let mut cand = run_data(&["nginx"]);
        cand.run.id += 1;
        cand.run.started_at += 600;
        let mut all_bound = run_data(&["nginx"]);
        for t in &mut all_bound.trials {
            t.context
                .set_client_bound(Some("the client was at 100% CPU".into()));
        }
        let mut empty = run_data(&["nginx"]);
        empty.trials.clear();
        for base in [all_bound, empty] {
            let c = check(&[base], &cand, 0.05);
            assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
            assert!(render(&c).contains("nothing checked"), "{}", render(&c));
        }
    }

    #[test]
    fn client_bound_trials_are_left_out_not_the_whole_point() {
        // run_data has one client-bound trial (system 0, point 4, trial 3).
        let base = run_data(&["nginx"]);
        assert!(base
            .trials
            .iter()
            .any(|t| t.context.client_bound_why().is_some()));
        let mut cand = base.clone();
        cand.run.id += 1;
        cand.run.started_at += 600;
        let c = check(&[base.clone(), base], &cand, 0.05);
        assert_eq!(c.client_bound_left_out, (2, 1));
        assert!(
            c.comparison
                .points
                .iter()
                .all(|p| !matches!(p.comparison.verdict, Verdict::NotComparable { .. })),
            "{}",
            render(&c)
        );
        assert!(render(&c).contains("left out as client-bound"));
    }
}
