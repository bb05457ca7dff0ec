//! `scalelab plan RECIPE`: the cheapest runs × trials that resolve a
//! change, from the variance the recipe's stored runs measured at each
//! level (between runs, between the trials of a run) and what each level
//! cost on this host (`analysis::plan`, Kalibera & Jones).
//!
//! The runs are the recipe's finished runs in the stores given. Each
//! (system, point) gives its levels from the trials the verdicts keep
//! (`judge::one_runs_values`), so the plan is for the values a verdict
//! would compare. The plan is made for the median point's variance, and
//! the noisiest point's plan is said beside it. The costs are medians over
//! the runs: a trial's seconds from the spread of its run's trial starts,
//! a run's own start from its wall time less its trials', plus the gap
//! between back-to-back runs.

use crate::analysis::between::{drift, MIN_RUNS};
use crate::analysis::plan::{best_within, cheapest, Costs, Levels, Plan};
use crate::analysis::summary::median;
use crate::judging::judge::{one_runs_values, Rules};
use crate::judging::rows::collect;
use crate::store::{RunData, RunStatus};
use serde::Serialize;

/// What the planner was asked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ask {
    /// The change to resolve (0.05 = 5%).
    pub detect: f64,
    /// The chance of calling a change of that size (0.8).
    pub power: f64,
    /// Seconds the plan may take, both sides together.
    pub budget: Option<f64>,
}

/// One point's levels.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointLevels {
    /// The system.
    pub system: String,
    /// The point.
    pub point: String,
    /// Between-run CV of the run headlines.
    pub run_cv: f64,
    /// Pooled within-run CV of the trials.
    pub trial_cv: f64,
    /// Runs that measured it.
    pub runs: usize,
}

/// A plan in the terms the output uses.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PlanLine {
    /// Runs on each side.
    pub runs: usize,
    /// Trials at each point of each run.
    pub trials: usize,
    /// Both sides' wall time.
    pub seconds: f64,
    /// The smallest change this plan calls with the power asked.
    pub resolves: f64,
}

impl From<Plan> for PlanLine {
    fn from(p: Plan) -> PlanLine {
        PlanLine {
            runs: p.runs,
            trials: p.trials,
            seconds: p.seconds,
            resolves: p.resolves,
        }
    }
}

/// The planner's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    /// The recipe.
    pub recipe: String,
    /// Its finished runs read.
    pub runs_read: usize,
    /// The change asked for and the power.
    pub detect: f64,
    /// See `detect`.
    pub power: f64,
    /// Every point's levels, noisiest last.
    pub points: Vec<PointLevels>,
    /// The costs measured: one trial at every point and system, and a
    /// run's own start, in seconds.
    pub trial_round_s: f64,
    /// See `trial_round_s`.
    pub run_s: f64,
    /// The cheapest plan for the median point at the power asked.
    pub plan: Option<PlanLine>,
    /// The same at 50% power: the interval only as narrow as the change.
    pub plan_half_power: Option<PlanLine>,
    /// The cheapest plan for the noisiest point.
    pub noisiest: Option<PlanLine>,
    /// Within the budget, the plan that resolves the smallest change.
    pub within_budget: Option<PlanLine>,
    /// Why there is no plan, and how to get one.
    pub cannot_plan: Option<String>,
}

/// Plans `recipe` from `runs` (any runs; those of other recipes and
/// unfinished ones are left out).
pub fn plan(recipe: &str, runs: &[RunData], ask: Ask) -> PlanReport {
    let runs: Vec<&RunData> = (runs.iter())
        .filter(|r| r.run.name == recipe && r.run.status == RunStatus::Finished)
        .collect();
    let mut points = point_levels(&runs);
    points.sort_by(|a, b| a.run_cv.total_cmp(&b.run_cv));
    let (trial_round_s, run_s) = costs(&runs);
    let costs = Costs {
        trial_round_s,
        run_s,
    };
    let trials = median_trials(&runs);
    let levels_of = |p: &PointLevels| Levels {
        run_cv: p.run_cv,
        trial_cv: p.trial_cv,
        trials,
    };
    let middle = points.get(points.len() / 2).map(levels_of);
    let noisiest = points.last().map(levels_of);
    let plan_at = |l: Option<Levels>, power: f64| {
        cheapest(&l?, &costs, ask.detect, power).map(PlanLine::from)
    };
    let cannot_plan = match (runs.len(), points.is_empty()) {
        (n, _) if n < MIN_RUNS => Some(format!(
            "{n} finished run(s) of `{recipe}`; the variance between runs needs at least \
             {MIN_RUNS}: run `scalelab run RECIPE --repeat {MIN_RUNS}` once"
        )),
        (_, true) => Some(format!(
            "no point of `{recipe}` was measured by {MIN_RUNS} runs with kept trials"
        )),
        _ => None,
    };
    PlanReport {
        recipe: recipe.into(),
        runs_read: runs.len(),
        detect: ask.detect,
        power: ask.power,
        plan: plan_at(middle, ask.power),
        plan_half_power: plan_at(middle, 0.5),
        noisiest: plan_at(noisiest, ask.power),
        within_budget: ask
            .budget
            .and_then(|b| best_within(&middle?, &costs, b, ask.power))
            .map(PlanLine::from),
        points,
        trial_round_s,
        run_s,
        cannot_plan,
    }
}

/// Each (system, point) measured by at least [`MIN_RUNS`] runs, with its
/// levels.
fn point_levels(runs: &[&RunData]) -> Vec<PointLevels> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let headline =
        crate::analysis::summary::Headline::parse(&first.run.headline).unwrap_or_default();
    let rules = Rules::symmetric(headline, first.run.noise);
    let cells: Vec<_> = runs.iter().map(|r| collect(r)).collect();
    let mut keys: Vec<(String, String)> = Vec::new();
    for agg in &cells {
        for c in &agg.cells {
            let k = (c.system.clone(), c.point.label());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.into_iter()
        .filter_map(|(system, point)| {
            let values: Vec<Vec<f64>> = (cells.iter())
                .filter_map(|agg| {
                    let c = (agg.cells.iter())
                        .find(|c| c.system == system && c.point.label() == point)?;
                    one_runs_values(c, &rules).ok().filter(|v| !v.is_empty())
                })
                .collect();
            let d = drift(&values, median)?;
            Some(PointLevels {
                system,
                point,
                run_cv: d.between_cv,
                trial_cv: d.within_cv.unwrap_or(0.0),
                runs: d.runs,
            })
        })
        .collect()
}

/// The median trials a point over the runs.
fn median_trials(runs: &[&RunData]) -> usize {
    let per_run: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            let cells = r.systems().len() * r.points().len();
            (cells > 0).then(|| r.trials.len() as f64 / cells as f64)
        })
        .collect();
    median(&per_run).map_or(1, |m| m.round().max(1.0) as usize)
}

/// (one trial at every point and system, a run's own start), in seconds:
/// medians over the runs with at least two trials and a finish time.
fn costs(runs: &[&RunData]) -> (f64, f64) {
    let mut trial_round = Vec::new();
    let mut own = Vec::new();
    for r in runs {
        let (Some(finished), n) = (r.run.finished_at, r.trials.len()) else {
            continue;
        };
        let starts: Vec<i64> = r.trials.iter().map(|t| t.started_at).collect();
        let (Some(first), Some(last)) = (starts.iter().min(), starts.iter().max()) else {
            continue;
        };
        if n < 2 || last <= first {
            continue;
        }
        let per_trial = (last - first) as f64 / (n - 1) as f64;
        let cells = (r.systems().len() * r.points().len()).max(1);
        trial_round.push(per_trial * cells as f64);
        own.push(((finished - r.run.started_at) as f64 - per_trial * n as f64).max(0.0));
    }
    (
        median(&trial_round).unwrap_or(0.0),
        median(&own).unwrap_or(0.0) + between_runs_s(runs),
    )
}

/// Back-to-back runs (`--repeat`) lose time between one's finish and the
/// next's start: the report of one, the preparation of the next before its
/// clock starts. The median of those gaps, from consecutive runs at most
/// [`BACK_TO_BACK_S`] apart; 0 where no two runs were back to back.
fn between_runs_s(runs: &[&RunData]) -> f64 {
    let mut by_start: Vec<(i64, Option<i64>)> = runs
        .iter()
        .map(|r| (r.run.started_at, r.run.finished_at))
        .collect();
    by_start.sort_unstable();
    let gaps: Vec<f64> = (by_start.windows(2))
        .filter_map(|w| {
            let gap = w[1].0 - w[0].1?;
            (0..=BACK_TO_BACK_S).contains(&gap).then_some(gap as f64)
        })
        .collect();
    median(&gaps).unwrap_or(0.0)
}

/// The longest gap between two runs still taken as back to back.
const BACK_TO_BACK_S: i64 = 120;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::run_data;

    fn runs(n: usize) -> Vec<RunData> {
        (0..n)
            .map(|i| {
                let mut r = run_data(&["nginx"]);
                r.run.id = i as i64 + 1;
                // Back to back, 30 s between one's finish and the next's start.
                let shift = i as i64 * 630;
                r.run.started_at += shift;
                r.run.finished_at = r.run.finished_at.map(|f| f + shift);
                for t in &mut r.trials {
                    t.started_at += shift;
                }
                for t in &mut r.trials {
                    if let Some(m) = &mut t.measurement {
                        // The runs 4% apart, the trials 1% (run_data's own).
                        m.rps.0 *= 1.0 + 0.04 * (i as f64 - 1.0);
                    }
                }
                r
            })
            .collect()
    }

    #[test]
    fn too_few_runs_say_how_to_get_the_variance() {
        let ask = Ask {
            detect: 0.05,
            power: 0.8,
            budget: None,
        };
        let p = plan("nginx <scaling>", &runs(2), ask);
        assert!(p.plan.is_none());
        assert!(p.cannot_plan.unwrap().contains("--repeat 3"), "says how");
    }

    #[test]
    fn three_runs_give_a_plan_with_its_power_and_its_costs() {
        let ask = Ask {
            detect: 0.05,
            power: 0.8,
            budget: Some(60.0),
        };
        let p = plan("nginx <scaling>", &runs(3), ask);
        assert_eq!(p.cannot_plan, None);
        assert_eq!(p.runs_read, 3);
        let (plan, half) = (p.plan.unwrap(), p.plan_half_power.unwrap());
        assert!(
            plan.resolves <= 0.05 && plan.runs >= half.runs,
            "{plan:?} {half:?}"
        );
        assert!(
            p.points.iter().all(|l| l.run_cv > 0.02 && l.runs == 3),
            "{:?}",
            p.points
        );
        assert!(
            (p.run_s - 480.0).abs() < 1e-9,
            "600 s a run less 15 trials of 10 s, and 30 s between runs: {}",
            p.run_s
        );
        // run_data's trials start 10 s apart, 5 points: a round is 50 s.
        assert!((p.trial_round_s - 50.0).abs() < 1e-9, "{}", p.trial_round_s);
        let within = p.within_budget;
        assert!(within.map_or(true, |w| w.seconds <= 60.0), "{within:?}");
    }
}
