//! How many runs and trials it takes to tell a change apart: Kalibera &
//! Jones's two-level model ("Rigorous Benchmarking in Reasonable Time",
//! ISMM 2013). A run's mean over `n` trials has variance
//! `σ_b² + σ_w² / n`: the between-run part `σ_b²` no number of trials
//! removes, and the within-run part `σ_w²` that more trials average away.
//! Both are measured on logs, so they are squared coefficients of
//! variation, and a change is a ratio.
//!
//! The interval between two sides of `r` runs each is Student's t on the
//! run means with `2r − 2` degrees of freedom, as every verdict between
//! runs is (`between::pooled_log_t`). A plan that only makes that
//! interval as narrow as the change (the width rule, `runs_needed`) calls
//! a change of exactly that size in about half the tries. To call it with
//! power `P`, the interval's half-width plus `t(P)` standard errors must
//! fit inside the change (the usual two-sample power approximation:
//! Cohen, "Statistical Power Analysis", 1988, §2.4).
//!
//! Each level has a cost: a trial (its warm-up, window and cool-down, at
//! every point and system) and a run's own start (servers, datasets).
//! The cheapest plan is the one of least time among the trial counts
//! `1..=MAX_TRIALS` that reaches the power; Kalibera & Jones's optimum
//! `n* = √(c_run σ_w² / (c_trial σ_b²))` is where it falls.

use super::student_t::quantile;

/// Most trials a point the planner considers.
pub const MAX_TRIALS: usize = 20;
/// Most runs a side the planner considers.
pub const MAX_RUNS: usize = 100;
/// The interval's level: 95% two-sided, as every verdict's.
const ALPHA: f64 = 0.05;

/// What the stored runs measured at one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Levels {
    /// The between-run CV of the run headlines, as measured.
    pub run_cv: f64,
    /// The pooled within-run CV of the trials.
    pub trial_cv: f64,
    /// The trials per point the measured runs had.
    pub trials: usize,
}

impl Levels {
    /// σ_b²: the run headlines' variance less the part their trials
    /// carried (`σ_w² / n₀`), never below 0.
    pub fn between_variance(&self) -> f64 {
        let n0 = self.trials.max(1) as f64;
        (self.run_cv.powi(2) - self.trial_cv.powi(2) / n0).max(0.0)
    }

    /// The variance of one run's mean over `trials` trials.
    pub fn run_variance(&self, trials: usize) -> f64 {
        self.between_variance() + self.trial_cv.powi(2) / trials.max(1) as f64
    }
}

/// What each level costs, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// One trial at every point and system: warm-up, window, cool-down.
    pub trial_round_s: f64,
    /// A run's own start: servers, datasets, the fingerprint.
    pub run_s: f64,
}

impl Costs {
    /// Both sides' wall time: `2r` runs of `n` trial rounds each.
    pub fn seconds(&self, runs: usize, trials: usize) -> f64 {
        2.0 * runs as f64 * (self.run_s + trials as f64 * self.trial_round_s)
    }
}

/// A number of runs a side and trials a point, with what it costs and
/// what it resolves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// Runs on each side.
    pub runs: usize,
    /// Trials at each point of each run.
    pub trials: usize,
    /// Both sides' wall time.
    pub seconds: f64,
    /// The smallest change (0.05 = 5%) this plan calls with the power
    /// asked.
    pub resolves: f64,
}

/// The smallest relative change `r` runs a side of run variance `var`
/// call at 95% with `power`: exp((t(1 − α/2) + t(power)) · √(2 var / r))
/// − 1, both t on 2r − 2 degrees of freedom; `None` with fewer than 2
/// runs.
pub fn resolves(var: f64, runs: usize, power: f64) -> Option<f64> {
    if runs < 2 || !(0.0..1.0).contains(&power) {
        return None;
    }
    let df = (2 * runs - 2) as f64;
    let t = quantile(1.0 - ALPHA / 2.0, df)? + quantile(power, df)?.max(0.0);
    Some((t * (2.0 * var / runs as f64).sqrt()).exp() - 1.0)
}

/// The fewest runs a side that resolve `change` at `power` with `trials`
/// trials; `None` past [`MAX_RUNS`].
pub fn runs_for(levels: &Levels, trials: usize, change: f64, power: f64) -> Option<usize> {
    let var = levels.run_variance(trials);
    (2..=MAX_RUNS).find(|&r| resolves(var, r, power).is_some_and(|d| d <= change))
}

/// The cheapest plan that resolves `change` at `power`; `None` when no
/// plan within [`MAX_RUNS`] and [`MAX_TRIALS`] does.
pub fn cheapest(levels: &Levels, costs: &Costs, change: f64, power: f64) -> Option<Plan> {
    (1..=MAX_TRIALS)
        .filter_map(|n| {
            let r = runs_for(levels, n, change, power)?;
            Some(Plan {
                runs: r,
                trials: n,
                seconds: costs.seconds(r, n),
                resolves: resolves(levels.run_variance(n), r, power)?,
            })
        })
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
}

/// Within `budget` seconds, the plan that resolves the smallest change at
/// `power`; `None` when not even 2 runs a side of 1 trial fit.
pub fn best_within(levels: &Levels, costs: &Costs, budget: f64, power: f64) -> Option<Plan> {
    let mut best: Option<Plan> = None;
    for n in 1..=MAX_TRIALS {
        for r in 2..=MAX_RUNS {
            let seconds = costs.seconds(r, n);
            if seconds > budget {
                break;
            }
            let Some(d) = resolves(levels.run_variance(n), r, power) else {
                continue;
            };
            if best.map_or(true, |b| d < b.resolves) {
                best = Some(Plan {
                    runs: r,
                    trials: n,
                    seconds,
                    resolves: d,
                });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEVELS: Levels = Levels {
        run_cv: 0.05,
        trial_cv: 0.03,
        trials: 4,
    };

    /// σ_b² is the run variance less the trials' share of it.
    #[test]
    fn the_between_run_part_is_what_trials_cannot_remove() {
        let b = LEVELS.between_variance();
        assert!((b - (0.0025 - 0.0009 / 4.0)).abs() < 1e-12);
        assert!((LEVELS.run_variance(4) - 0.0025).abs() < 1e-12);
        assert!(LEVELS.run_variance(100) < LEVELS.run_variance(4));
        assert!(
            LEVELS.run_variance(100) > b,
            "more trials never remove σ_b²"
        );
    }

    /// At 50% power the plan is the width rule (`between::runs_needed`):
    /// the same runs a side; 80% power takes more, as a peer pass
    /// measured (1.6-2× as many).
    #[test]
    fn half_power_is_the_width_rule_and_eighty_percent_takes_more() {
        let var = 0.27f64.powi(2);
        let width = crate::analysis::between::runs_needed(0.27, 0.2).unwrap();
        let levels = Levels {
            run_cv: 0.27,
            trial_cv: 0.0,
            trials: 1,
        };
        assert_eq!(runs_for(&levels, 1, 0.2, 0.5), Some(width));
        let eighty = runs_for(&levels, 1, 0.2, 0.8).unwrap();
        let ratio = eighty as f64 / width as f64;
        assert!((1.6..=2.2).contains(&ratio), "{eighty} against {width}");
        assert!(resolves(var, eighty, 0.8).unwrap() <= 0.2);
        assert!(resolves(var, eighty - 1, 0.8).unwrap() > 0.2);
    }

    /// With costly runs and cheap trials the cheapest plan uses more
    /// trials, near Kalibera & Jones's n* = √(c_run σ_w² / (c_trial σ_b²)).
    #[test]
    fn expensive_runs_buy_more_trials_near_kalibera_and_jones_optimum() {
        let levels = Levels {
            run_cv: 0.04,
            trial_cv: 0.08,
            trials: 4,
        };
        let cheap_runs = cheapest(
            &levels,
            &Costs {
                trial_round_s: 10.0,
                run_s: 1.0,
            },
            0.05,
            0.8,
        )
        .unwrap();
        let dear_runs = cheapest(
            &levels,
            &Costs {
                trial_round_s: 10.0,
                run_s: 600.0,
            },
            0.05,
            0.8,
        )
        .unwrap();
        assert!(
            dear_runs.trials > cheap_runs.trials,
            "{cheap_runs:?} {dear_runs:?}"
        );
        let n_star = (600.0 * 0.0064 / (10.0 * levels.between_variance())).sqrt();
        assert!(
            (dear_runs.trials as f64 - n_star).abs() <= n_star * 0.5 + 1.0,
            "{dear_runs:?} against n* = {n_star:.1}"
        );
        assert!(dear_runs.resolves <= 0.05);
    }

    #[test]
    fn a_budget_too_small_says_what_it_would_resolve() {
        let costs = Costs {
            trial_round_s: 10.0,
            run_s: 30.0,
        };
        let plan = cheapest(&LEVELS, &costs, 0.02, 0.8).unwrap();
        let within = best_within(&LEVELS, &costs, plan.seconds / 4.0, 0.8).unwrap();
        assert!(within.seconds <= plan.seconds / 4.0);
        assert!(within.resolves > 0.02, "{within:?}");
        assert!(
            best_within(&LEVELS, &costs, 10.0, 0.8).is_none(),
            "2 runs a side do not fit"
        );
    }
}
