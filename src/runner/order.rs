//! The order trials run in (`[trials] order`, issue 47): by default the
//! systems of a point run in a seeded random order in each round, and the
//! points of the sweep in a seeded random order, so that a trend in time
//! (a table that grows, a cache that fills, a machine that heats up) is
//! not confounded with a system or with the sweep's x axis (Abedi &
//! Brecht, ICPE 2017: randomised multiple interleaved trials). Points that
//! share a server start and dataset (the compiled point's restart key, see
//! [`crate::recipe::plan`]) stay together: the groups are shuffled, and the
//! points inside each group. Every order is a pure function of the seed
//! and of where it is drawn (the point, the round), so `--resume` and
//! `run --seed N` draw exactly the same order again.

use crate::recipe::{Experiment, TrialOrder};
use crate::rng::{shuffle, SplitMix64};

/// The run's seed and order, as stored with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    /// The seed every order of the run is drawn from.
    pub seed: u64,
    /// `[trials] order`.
    pub order: TrialOrder,
}

/// Tags that keep the streams of points and rounds apart.
const POINTS: u64 = 1;
const ROUND: u64 = 2;
const SCHEDULE: u64 = 3;

/// A generator for one place in the run: `seed` hashed with a tag and two
/// coordinates through SplitMix64's own finaliser, so neighbouring rounds
/// get unrelated streams.
fn stream(seed: u64, tag: u64, a: u64, b: u64) -> SplitMix64 {
    let mut s = SplitMix64(seed ^ tag);
    let mut s = SplitMix64(s.next() ^ a);
    SplitMix64(s.next() ^ b)
}

/// A seed nobody chose: the clock's nanoseconds and the PID, hashed, and
/// kept under 2^53 so that every JSON reader holds it exactly.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    SplitMix64(nanos ^ (u64::from(std::process::id()) << 32)).next() & ((1 << 53) - 1)
}

impl Draw {
    /// The order of the systems (their indices) in round `round` at point
    /// `point`: `0..systems` with `sweep`, else a shuffle of it.
    pub fn round(&self, systems: usize, point: u32, round: u32) -> Vec<usize> {
        let mut order: Vec<usize> = (0..systems).collect();
        if self.order == TrialOrder::Random {
            let mut rng = stream(self.seed, ROUND, u64::from(point), u64::from(round));
            shuffle(&mut order, &mut rng);
        }
        order
    }

    /// The order of the sweep's points (their indices), given each point's
    /// group (points with equal keys share a server start and dataset):
    /// sweep order with `sweep`; else the groups in a random order, each
    /// group's points in a random order, a group's points kept together.
    pub fn points<K: PartialEq>(&self, keys: &[K]) -> Vec<usize> {
        let mut groups: Vec<(&K, Vec<usize>)> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        if self.order == TrialOrder::Sweep {
            return (0..keys.len()).collect();
        }
        let mut rng = stream(self.seed, POINTS, 0, 0);
        shuffle(&mut groups, &mut rng);
        for (_, members) in &mut groups {
            shuffle(members, &mut rng);
        }
        groups.into_iter().flat_map(|(_, m)| m).collect()
    }
}

/// The run's seed and order: a resumed run's own (a run older than stored
/// orders ran in sweep order, and goes on so); a new run's from `--seed` or
/// a fresh seed, stored before its first trial.
pub(super) fn run_draw(
    exp: &Experiment,
    store: &mut crate::store::Store,
    run_id: i64,
    opts: &super::RunOptions,
) -> Result<Draw, super::RunError> {
    let stored = store.run(run_id)?.order;
    let draw = match (&stored, opts.resume) {
        (Some(s), Some(_)) => Draw {
            seed: s.seed,
            order: if s.order == TrialOrder::Sweep.as_str() {
                TrialOrder::Sweep
            } else {
                TrialOrder::Random
            },
        },
        (None, Some(_)) => Draw {
            seed: 0,
            order: TrialOrder::Sweep,
        },
        (_, None) => Draw {
            seed: opts.seed.unwrap_or_else(fresh_seed),
            order: exp.trials.order,
        },
    };
    if let (Some(given), Some(_)) = (opts.seed, opts.resume) {
        if given != draw.seed || stored.is_none() {
            return Err(super::RunError::SeedChanged {
                run: run_id,
                stored: draw.seed,
                given,
            });
        }
    }
    if stored.is_none() {
        store.set_run_order(run_id, draw.seed, draw.order.as_str())?;
    }
    Ok(draw)
}

/// What the run says of its order before the first trial.
pub(super) fn draw_line(draw: &Draw) -> String {
    match draw.order {
        TrialOrder::Random => format!(
            "trial order: random, seed {} (`run --seed {}` repeats it)",
            draw.seed, draw.seed
        ),
        TrialOrder::Sweep => {
            "trial order: sweep ([trials] order = \"sweep\"): systems as listed, points in \
             sweep order"
                .to_string()
        }
    }
}

/// Each point's group: the restart key of every system at it (the key
/// holds the server's settings, resources and dataset), so points that
/// differ only in the load shape share one.
pub fn point_groups(exp: &Experiment) -> Vec<Vec<&str>> {
    exp.points()
        .iter()
        .map(|p| {
            (0..exp.systems.len())
                .map(|s| exp.plan.point(s, p).restart_key.as_str())
                .collect()
        })
        .collect()
}

/// One step of a schedule between runs (`scalelab plan`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boot {
    /// The label to boot and run.
    pub label: String,
    /// Which of the label's runs this is (1-based).
    pub run: u32,
}

/// Why a schedule cannot be drawn.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScheduleError {
    /// No labels, or an empty one.
    #[error(
        "--labels: label {0} is empty; give the labels as a comma-separated list such as \"A,B,C\""
    )]
    EmptyLabel(usize),
    /// A label given twice.
    #[error("--labels: `{0}` is given twice; each system to compare is named once")]
    DuplicateLabel(String),
    /// `--runs 0`.
    #[error("--runs 0: give the number of runs of each label, 1 or more (3 or more for a verdict between runs)")]
    NoRuns,
}

/// A randomised schedule of `runs` runs of each label: `runs` blocks, each
/// with every label once in a random order (randomised complete blocks, as
/// the rounds of a run are), so no label's runs all come first.
pub fn schedule(labels: &[String], runs: u32, seed: u64) -> Result<Vec<Boot>, ScheduleError> {
    if runs == 0 {
        return Err(ScheduleError::NoRuns);
    }
    for (i, l) in labels.iter().enumerate() {
        if l.trim().is_empty() {
            return Err(ScheduleError::EmptyLabel(i + 1));
        }
        if labels[..i].iter().any(|m| m.trim() == l.trim()) {
            return Err(ScheduleError::DuplicateLabel(l.trim().to_string()));
        }
    }
    if labels.is_empty() {
        return Err(ScheduleError::EmptyLabel(1));
    }
    let mut out = Vec::new();
    for run in 1..=runs {
        let mut block: Vec<usize> = (0..labels.len()).collect();
        shuffle(&mut block, &mut stream(seed, SCHEDULE, u64::from(run), 0));
        out.extend(block.into_iter().map(|i| Boot {
            label: labels[i].trim().to_string(),
            run,
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(seed: u64) -> Draw {
        Draw {
            seed,
            order: TrialOrder::Random,
        }
    }

    #[test]
    fn one_seed_draws_one_order_and_sweep_keeps_the_written_one() {
        assert_eq!(random(5).round(4, 2, 3), random(5).round(4, 2, 3));
        let sweep = Draw {
            seed: 5,
            order: TrialOrder::Sweep,
        };
        assert_eq!(sweep.round(3, 0, 1), vec![0, 1, 2]);
        assert_eq!(sweep.points(&[1, 1, 2, 3]), vec![0, 1, 2, 3]);
    }

    /// Rounds get orders of their own: over 8 rounds of 4 systems, the
    /// chance that all 8 draw one order is (1/24)^7, about 2e-10.
    #[test]
    fn the_rounds_of_a_point_differ() {
        let d = random(11);
        let orders: Vec<Vec<usize>> = (1..=8).map(|r| d.round(4, 0, r)).collect();
        assert!(orders.iter().any(|o| *o != orders[0]), "{orders:?}");
        let mut first: Vec<usize> = orders.iter().map(|o| o[0]).collect();
        first.sort_unstable();
        first.dedup();
        assert!(first.len() > 1, "one system always ran first: {orders:?}");
    }

    #[test]
    fn a_group_of_points_stays_together_and_is_shuffled_inside() {
        // Points 0..6 on dataset "a", 6..12 on "b".
        let keys: Vec<&str> = (0..12).map(|i| if i < 6 { "a" } else { "b" }).collect();
        let mut shuffled_inside = false;
        for seed in 0..20 {
            let order = random(seed).points(&keys);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..12).collect::<Vec<_>>());
            let head: Vec<bool> = order.iter().map(|&i| i < 6).collect();
            assert!(
                head[..6].iter().all(|&x| x == head[0]) && head[6..].iter().all(|&x| x != head[0]),
                "a group split: {order:?}"
            );
            shuffled_inside |=
                order[..6] != [0, 1, 2, 3, 4, 5] && order[..6] != [6, 7, 8, 9, 10, 11];
        }
        assert!(shuffled_inside);
    }

    #[test]
    fn a_schedule_has_each_label_once_per_block() {
        let labels: Vec<String> = ["A", "B", "C"].map(String::from).to_vec();
        let s = schedule(&labels, 4, 9).unwrap();
        assert_eq!(s.len(), 12);
        for block in s.chunks(3) {
            let mut names: Vec<&str> = block.iter().map(|b| b.label.as_str()).collect();
            names.sort_unstable();
            assert_eq!(names, ["A", "B", "C"]);
        }
        assert_eq!(s, schedule(&labels, 4, 9).unwrap());
        let blocks: Vec<Vec<&str>> = (0..4)
            .map(|k| {
                s[3 * k..3 * k + 3]
                    .iter()
                    .map(|b| b.label.as_str())
                    .collect()
            })
            .collect();
        // Equal blocks by chance: (1/6)^3 for this seed; it is fixed, so
        // the assertion is about the shuffle being applied at all.
        assert!(blocks.iter().any(|b| *b != blocks[0]), "{blocks:?}");
    }

    #[test]
    fn a_bad_schedule_is_refused_by_name() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(schedule(&l(&["A"]), 0, 1), Err(ScheduleError::NoRuns));
        assert_eq!(
            schedule(&l(&["A", " "]), 2, 1),
            Err(ScheduleError::EmptyLabel(2))
        );
        assert_eq!(
            schedule(&l(&["A", "B", "A"]), 2, 1),
            Err(ScheduleError::DuplicateLabel("A".into()))
        );
        assert_eq!(schedule(&[], 2, 1), Err(ScheduleError::EmptyLabel(1)));
    }
}
