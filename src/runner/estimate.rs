//! How long a run takes, from the recipe alone: the least and the most the
//! stopping rule allows, printed before the first trial, and the one source
//! of the times the docs give (a test checks the guides against it).
//!
//! A trial costs its warmup, its measured windows (one, or a search's
//! steps: [`crate::load::LoadPlan::windows_per_trial`]), the cooldown after
//! it and a fixed [`TRIAL_OVERHEAD`]. At every point each system runs at
//! least `min` trials; after that the rule (see
//! [`crate::analysis::stopping`]) may stop as soon as the CI is narrow
//! enough, and must stop at `max` trials or once the point's time `budget`
//! is spent (checked after each round of one trial per system).
//!
//! On top come the server starts, counted as the runner makes them (one
//! per system when its restart key changes, at every point with `restart
//! = "per_point"`, before every trial with `"per_trial"`), each its kind's
//! [`crate::server::ServerKind::start_estimate`] (labs included), and the
//! datasets a first run builds ([`crate::model::Dataset::build_estimate`],
//! once per server kind and dataset: targets keep them for later runs).
//! `bench/estimates.sh` measures every seed recipe's `--quick` against it.
//!
//! A recipe with `[trials] runs = N` (or `run --repeat N`) runs the whole
//! sweep N times, each with its own server starts, [`REPEAT_PAUSE`] apart:
//! the estimate counts every repeat, and the datasets once (the first run
//! builds them, the targets keep them).

use crate::recipe::{Experiment, Restart};
use std::time::Duration;

/// What every trial costs besides its windows: the probe's start and end,
/// connecting, storing the trial (measured on this project's VM).
pub const TRIAL_OVERHEAD: Duration = Duration::from_millis(600);

/// The pause between repeats of a sweep (`[trials] runs`, `run
/// --repeat`): the last one's sockets in TIME_WAIT and dirty pages settle,
/// and each repeat starts its servers anew.
pub const REPEAT_PAUSE: Duration = Duration::from_secs(5);

/// The run's length as the recipe bounds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Sweep points.
    pub points: usize,
    /// Compared systems.
    pub systems: usize,
    /// Trials per point and system: always `min`, at most `max` (fewer when
    /// the budget runs out first).
    pub min_trials: u32,
    /// See `min_trials`.
    pub max_trials: u32,
    /// Warmup + measured windows + cooldown + [`TRIAL_OVERHEAD`], with
    /// the most windows a trial may run.
    pub per_trial: Duration,
    /// The same with the fewest (a search that ends early).
    pub per_trial_least: Duration,
    /// Per system, the cost of one server start (its kind's).
    start_cost: Vec<Duration>,
    /// Per system, the starts that do not depend on the trial count
    /// (restart key changes, points with `per_point`).
    fixed_starts: Vec<u32>,
    /// Whether every trial starts its server (`per_trial`).
    start_per_trial: bool,
    /// The datasets a first run builds.
    pub datasets: Duration,
    /// How many times the whole sweep runs (`[trials] runs`, or `run
    /// --repeat`), each its own run.
    pub repeats: u32,
}

impl Estimate {
    /// The bounds `exp`'s sweep, `[trials]`, servers and datasets put on
    /// its length.
    pub fn of(exp: &Experiment) -> Estimate {
        let t = &exp.trials;
        let windows = windows_per_trial(exp);
        let trial = |windows: u32| t.warmup + t.duration * windows + t.cooldown + TRIAL_OVERHEAD;
        let (per_trial, per_trial_least) = (trial(*windows.end()), trial(*windows.start()));
        let systems = exp.systems.len().max(1);
        let round = per_trial * systems as u32;
        let max_trials = match t.budget {
            Some(budget) if !round.is_zero() => {
                let rounds = budget.as_secs_f64() / round.as_secs_f64();
                (rounds.ceil() as u32).clamp(t.min_trials, t.max_trials)
            }
            _ => t.max_trials,
        };
        let (start_cost, fixed_starts) = starts(exp);
        Estimate {
            points: exp.points().len(),
            systems,
            min_trials: t.min_trials,
            max_trials,
            per_trial,
            per_trial_least,
            start_cost,
            fixed_starts,
            start_per_trial: t.restart == Restart::PerTrial,
            datasets: datasets(exp),
            repeats: t.runs.max(1),
        }
    }

    /// The same estimate for `repeats` runs of the sweep (`run --repeat`,
    /// which overrides `[trials] runs`).
    pub fn with_repeats(self, repeats: u32) -> Estimate {
        Estimate {
            repeats: repeats.max(1),
            ..self
        }
    }

    /// The least time: `min` trials everywhere.
    pub fn shortest(&self) -> Duration {
        self.total(self.min_trials, self.per_trial_least)
    }

    /// The most time: `max` trials everywhere (or as many as the budget
    /// lets start).
    pub fn longest(&self) -> Duration {
        self.total(self.max_trials, self.per_trial)
    }

    fn total(&self, trials: u32, per_trial: Duration) -> Duration {
        let one =
            per_trial * (self.points * self.systems) as u32 * trials + self.server_starts(trials);
        one * self.repeats + REPEAT_PAUSE * (self.repeats - 1) + self.datasets
    }

    /// The server starts' time with `trials` trials per point and system.
    pub fn server_starts(&self, trials: u32) -> Duration {
        (self.start_cost.iter().zip(&self.fixed_starts))
            .map(|(cost, fixed)| {
                let starts = if self.start_per_trial {
                    trials * self.points as u32
                } else {
                    *fixed
                };
                *cost * starts
            })
            .sum()
    }

    /// `1m12s to 3m20s`, or one figure when the least is the most: the
    /// figure the docs give for a recipe (a test checks them).
    pub fn span(&self) -> String {
        let (lo, hi) = (self.shortest(), self.longest());
        if lo == hi {
            clock(lo)
        } else {
            format!("{} to {}", clock(lo), clock(hi))
        }
    }

    /// `estimated 1m12s to 3m20s: 2 points x 2 systems x 4..10 trials of
    /// 1.8s, 4 server starts (2.0s), datasets 9.0s` (a trial: warmup,
    /// windows, cooldown and overhead).
    pub fn sentence(&self) -> String {
        let span = self.span();
        let trials = if self.min_trials == self.max_trials {
            self.min_trials.to_string()
        } else {
            format!("{}..{}", self.min_trials, self.max_trials)
        };
        let mut out = format!(
            "estimated {span}: {} point{} x {} system{} x {trials} trial{} of {}",
            self.points,
            plural(self.points),
            self.systems,
            plural(self.systems),
            plural(self.max_trials as usize),
            clock(self.per_trial)
        );
        if self.repeats > 1 {
            out.push_str(&format!(
                ", x {} runs {} apart",
                self.repeats,
                clock(REPEAT_PAUSE)
            ));
        }
        let starts = self.server_starts(self.min_trials) * self.repeats;
        if !starts.is_zero() {
            out.push_str(&format!(", server starts {}", clock(starts)));
        }
        if !self.datasets.is_zero() {
            out.push_str(&format!(
                ", datasets {} (first run only)",
                clock(self.datasets)
            ));
        }
        out
    }
}

/// The fewest and the most measured windows a trial runs, over every
/// (system, point).
fn windows_per_trial(exp: &Experiment) -> std::ops::RangeInclusive<u32> {
    let ranges: Vec<_> = (exp.plan.systems.iter())
        .flat_map(|s| s.points.iter().map(|p| p.load.windows_per_trial()))
        .collect();
    let least = ranges.iter().map(|r| *r.start()).min().unwrap_or(1);
    let most = ranges.iter().map(|r| *r.end()).max().unwrap_or(1);
    least.max(1)..=most.max(1)
}

/// Per system: one start's cost, and the starts the runner makes walking
/// the points in order, besides `per_trial` ones.
fn starts(exp: &Experiment) -> (Vec<Duration>, Vec<u32>) {
    let points = exp.points();
    let per_point = exp.trials.restart == Restart::PerPoint;
    (exp.plan.systems.iter())
        .map(|system| {
            let mut last: Option<&str> = None;
            let mut n = 0;
            for point in &points {
                let key = system.at(point).restart_key.as_str();
                if per_point || last != Some(key) {
                    n += 1;
                }
                last = Some(key);
            }
            (system.server_kind.start_estimate, n)
        })
        .unzip()
}

/// The datasets a first run builds: each distinct one once per server
/// kind.
fn datasets(exp: &Experiment) -> Duration {
    let mut seen = Vec::new();
    for system in &exp.plan.systems {
        for p in &system.points {
            if let Some(d) = &p.dataset {
                let key = (system.server_kind.name, d.clone());
                if !seen.contains(&key) {
                    seen.push(key);
                }
            }
        }
    }
    seen.iter().map(|(_, d)| d.build_estimate()).sum()
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `850ms`, `1.8s`, `42s`, `3m05s`, `1h20m`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{}ms", d.as_millis())
    } else if s < 10.0 {
        format!("{:.1}s", s)
    } else if s < 60.0 {
        format!("{:.0}s", s)
    } else if s < 3600.0 {
        let s = s.round() as u64;
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        let m = (s / 60.0).round() as u64;
        format!("{}h{:02}m", m / 60, m % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn exp(trials: &str) -> Experiment {
        let text = format!(
            "name = \"e\"\n[server]\nkind = \"nginx\"\n[load]\nkind = \"http\"\n\
             [sweep]\nconnections = [1, 4, 16]\n[trials]\n{trials}\n\
             [[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\"\n"
        );
        Experiment::parse(Path::new("e.toml"), &text, false).expect("valid recipe")
    }

    /// The trials' part of a total: `trials` per point and system.
    fn trials_part(e: &Estimate, trials: u32) -> Duration {
        e.per_trial * (e.points * e.systems) as u32 * trials
    }

    #[test]
    fn min_equal_max_gives_one_figure() {
        let e = Estimate::of(&exp(
            "duration = \"1500ms\"\nwarmup = \"300ms\"\nmin = 4\nmax = 4",
        ));
        // 3 points x 2 systems x 4 trials x (1.8 s + the overhead).
        assert_eq!(e.per_trial, Duration::from_millis(1800) + TRIAL_OVERHEAD);
        let starts = e.server_starts(4);
        assert_eq!(e.shortest(), trials_part(&e, 4) + starts);
        assert_eq!(e.shortest(), e.longest());
        let s = e.sentence();
        let head = format!(
            "estimated {}: 3 points x 2 systems x 4 trials of {}, server starts {}",
            clock(e.shortest()),
            clock(e.per_trial),
            clock(starts)
        );
        assert!(s.starts_with(&head), "{s}");
        assert!(!s.contains("datasets"), "nginx builds none: {s}");
    }

    #[test]
    fn the_stopping_rule_spans_min_to_max() {
        let e = Estimate::of(&exp(
            "duration = \"5s\"\nwarmup = \"1s\"\ncooldown = \"2s\"\nmin = 3\nmax = 10",
        ));
        assert_eq!(e.per_trial, Duration::from_secs(8) + TRIAL_OVERHEAD);
        assert_eq!(e.shortest(), trials_part(&e, 3) + e.server_starts(3));
        assert_eq!(e.longest(), trials_part(&e, 10) + e.server_starts(10));
        let s = e.sentence();
        let span = format!(
            "estimated {} to {}",
            clock(e.shortest()),
            clock(e.longest())
        );
        assert!(s.starts_with(&span), "{s}");
        assert!(s.contains("3..10 trials of 8.6s"), "{s}");
    }

    #[test]
    fn a_budget_caps_the_longest() {
        // Rounds of 2 x 2.6 s; a 9 s budget is spent after the second round.
        let e = Estimate::of(&exp(
            "duration = \"2s\"\nwarmup = \"0s\"\nmin = 2\nmax = 10\nbudget = \"9s\"",
        ));
        assert_eq!(e.max_trials, 2);
        assert_eq!(e.longest(), trials_part(&e, 2) + e.server_starts(2));
    }

    /// Issue 46: `[trials] runs = 3` and `--repeat` run the sweep again,
    /// each with its own server starts, a pause apart; the estimate said
    /// one sweep's time (6.7 s for a run of 26 s).
    #[test]
    fn repeats_multiply_the_sweep_and_build_datasets_once() {
        let t = "duration = \"1s\"\nmin = 2\nmax = 3";
        let one = Estimate::of(&exp(t));
        assert_eq!(one.repeats, 1);
        let three = Estimate::of(&exp(&format!("{t}\nruns = 3")));
        let sweep = |e: &Estimate, n| trials_part(e, n) + e.server_starts(n);
        let pauses = REPEAT_PAUSE * 2;
        assert_eq!(three.shortest(), sweep(&one, 2) * 3 + pauses);
        assert_eq!(three.longest(), sweep(&one, 3) * 3 + pauses);
        assert!(
            three.sentence().contains("x 3 runs 5.0s apart"),
            "{}",
            three.sentence()
        );
        let four = one.clone().with_repeats(4);
        assert_eq!(four.shortest(), sweep(&one, 2) * 4 + REPEAT_PAUSE * 3);
        assert_eq!(three.with_repeats(1), one, "--repeat 1 overrides runs = 3");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/pg-readonly-dbsize.toml");
        let text = std::fs::read_to_string(&path).expect("recipe");
        let pg1 = Estimate::of(&Experiment::parse(&path, &text, true).expect("recipe"));
        assert!(!pg1.datasets.is_zero());
        let pg2 = pg1.clone().with_repeats(2);
        assert_eq!(pg2.datasets, pg1.datasets, "built once");
        assert_eq!(
            pg2.shortest() - pg1.datasets,
            (pg1.shortest() - pg1.datasets) * 2 + REPEAT_PAUSE
        );
    }

    /// Server starts as the runner makes them: one per system while the
    /// restart key holds (`never`), one per point (`per_point`), one per
    /// trial (`per_trial`); each the kind's start.
    #[test]
    fn server_starts_follow_the_restart_policy() {
        let start = crate::server::nginx::SERVER_KIND.start_estimate;
        let with = |restart: &str| {
            Estimate::of(&exp(&format!(
                "duration = \"1s\"\nmin = 2\nmax = 3\nrestart = \"{restart}\""
            )))
        };
        assert_eq!(with("never").server_starts(3), start * 2);
        assert_eq!(with("per_point").server_starts(3), start * 2 * 3);
        assert_eq!(with("per_trial").server_starts(2), start * 2 * 3 * 2);
        assert_eq!(with("per_trial").server_starts(3), start * 2 * 3 * 3);
    }

    /// A forwarding trial is a whole search: its steps are windows; a
    /// dataset is built once per server kind, however many points use it.
    #[test]
    fn searches_count_their_steps_and_datasets_are_built_once() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
        let load = |name: &str| {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path).expect("recipe");
            Estimate::of(&Experiment::parse(&path, &text, true).expect("recipe"))
        };
        let fwd = load("ipv4-forwarding.toml");
        // --quick: 300 ms steps, at most 12 per search.
        assert_eq!(
            fwd.per_trial,
            Duration::from_millis(300) * 12 + TRIAL_OVERHEAD
        );
        let pg = load("pg-readonly-dbsize.toml");
        let built: Duration = [2, 16, 32]
            .map(|scale| crate::model::Dataset::Pgbench { scale }.build_estimate())
            .iter()
            .sum();
        assert_eq!(pg.datasets, built);
        let smp = load("pgbench-smp-scaling.toml");
        assert_eq!(
            smp.datasets,
            crate::model::Dataset::Pgbench { scale: 10 }.build_estimate(),
            "12 points, one dataset"
        );
    }

    /// Every recipe, full and quick, parses and gets an estimate; the
    /// short-lived one sweeps enough connection levels for a USL fit.
    #[test]
    fn every_recipe_has_an_estimate() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes");
        for entry in std::fs::read_dir(&dir).expect("recipes/") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("recipe");
            for quick in [false, true] {
                let e = Experiment::parse(&path, &text, quick)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let est = Estimate::of(&e);
                assert!(est.shortest() <= est.longest(), "{}", path.display());
                if path.ends_with("nginx-short-lived.toml") {
                    let mut levels: Vec<String> = e
                        .points()
                        .iter()
                        .flat_map(|p| {
                            p.coords
                                .iter()
                                .filter(|c| c.target == crate::model::AxisTarget::Connections)
                        })
                        .map(|c| c.value.to_string())
                        .collect();
                    levels.sort();
                    levels.dedup();
                    assert!(levels.len() >= 6, "quick={quick}: {levels:?}");
                }
            }
        }
    }

    #[test]
    fn clock_reads_like_a_person_writes() {
        assert_eq!(clock(Duration::from_millis(850)), "850ms");
        assert_eq!(clock(Duration::from_secs(185)), "3m05s");
        assert_eq!(clock(Duration::from_secs(4800)), "1h20m");
    }
}
