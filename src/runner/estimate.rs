//! How long a run takes, from the recipe alone: the least and the most the
//! stopping rule allows, printed before the first trial.
//!
//! A trial costs its warmup, its measured window and the cooldown after it.
//! At every point each system runs at least `min` trials; after that the
//! rule (see [`crate::analysis::stopping`]) may stop as soon as the CI is
//! narrow enough, and must stop at `max` trials or once the point's time
//! `budget` is spent (checked after each round of one trial per system).
//! Server starts, dataset builds and profiling come on top: the estimate
//! says so rather than guess them.

use crate::spec::Experiment;
use std::time::Duration;

/// The run's length as the recipe bounds it.
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// Warmup + measured window + cooldown.
    pub per_trial: Duration,
}

impl Estimate {
    /// The bounds `exp`'s sweep and `[trials]` put on its length.
    pub fn of(exp: &Experiment) -> Estimate {
        let t = &exp.trials;
        let per_trial = t.warmup + t.duration + t.cooldown;
        let systems = exp.systems.len().max(1);
        let round = per_trial * systems as u32;
        let max_trials = match t.budget {
            Some(budget) if !round.is_zero() => {
                let rounds = budget.as_secs_f64() / round.as_secs_f64();
                (rounds.ceil() as u32).clamp(t.min_trials, t.max_trials)
            }
            _ => t.max_trials,
        };
        Estimate {
            points: exp.points().len(),
            systems,
            min_trials: t.min_trials,
            max_trials,
            per_trial,
        }
    }

    /// The least time: `min` trials everywhere.
    pub fn shortest(&self) -> Duration {
        self.total(self.min_trials)
    }

    /// The most time: `max` trials everywhere (or as many as the budget
    /// lets start).
    pub fn longest(&self) -> Duration {
        self.total(self.max_trials)
    }

    fn total(&self, trials: u32) -> Duration {
        self.per_trial * (self.points * self.systems) as u32 * trials
    }

    /// `estimated 1m12s to 3m20s: 2 points x 2 systems x 4..10 trials of
    /// 1.8s, plus server starts` (a trial: warmup, window and cooldown).
    pub fn sentence(&self) -> String {
        let (lo, hi) = (self.shortest(), self.longest());
        let span = if lo == hi {
            clock(lo)
        } else {
            format!("{} to {}", clock(lo), clock(hi))
        };
        let trials = if self.min_trials == self.max_trials {
            self.min_trials.to_string()
        } else {
            format!("{}..{}", self.min_trials, self.max_trials)
        };
        format!(
            "estimated {span}: {} point{} x {} system{} x {trials} trial{} of {}, plus server starts",
            self.points,
            plural(self.points),
            self.systems,
            plural(self.systems),
            plural(self.max_trials as usize),
            clock(self.per_trial)
        )
    }
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

    #[test]
    fn min_equal_max_gives_one_figure() {
        let e = Estimate::of(&exp(
            "duration = \"1500ms\"\nwarmup = \"300ms\"\nmin = 4\nmax = 4",
        ));
        // 3 points x 2 systems x 4 trials x 1.8 s = 43.2 s
        assert_eq!(e.shortest(), Duration::from_millis(43_200));
        assert_eq!(e.shortest(), e.longest());
        let s = e.sentence();
        assert!(
            s.starts_with("estimated 43s: 3 points x 2 systems x 4 trials of 1.8s"),
            "{s}"
        );
    }

    #[test]
    fn the_stopping_rule_spans_min_to_max() {
        let e = Estimate::of(&exp(
            "duration = \"5s\"\nwarmup = \"1s\"\ncooldown = \"2s\"\nmin = 3\nmax = 10",
        ));
        assert_eq!(e.shortest(), Duration::from_secs(3 * 2 * 3 * 8));
        assert_eq!(e.longest(), Duration::from_secs(3 * 2 * 10 * 8));
        let s = e.sentence();
        assert!(s.starts_with("estimated 2m24s to 8m00s"), "{s}");
        assert!(s.contains("3..10 trials of 8.0s"), "{s}");
    }

    #[test]
    fn a_budget_caps_the_longest() {
        // Rounds of 2 x 2 s; a 9 s budget is spent after the third round.
        let e = Estimate::of(&exp(
            "duration = \"2s\"\nwarmup = \"0s\"\nmin = 2\nmax = 10\nbudget = \"9s\"",
        ));
        assert_eq!(e.max_trials, 3);
        assert_eq!(e.longest(), Duration::from_secs(3 * 2 * 3 * 2));
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
