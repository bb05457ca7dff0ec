//! The one comparison engine: a candidate cell against a baseline cell at
//! one point, for `run`, `report`, `compare`, `check` and the N-run page
//! alike. Every rule that decides whether two cells can be compared, and
//! how, is applied here once:
//!
//! 1. **Errors.** A side whose errors exceed the threshold (or a DNS ramp
//!    whose generator fell behind, [`super::comparable`]) is not
//!    comparable, with its reason.
//! 2. **Client-bound trials** measured the load generator, not the server:
//!    they are left out. A side left with no trial is not comparable
//!    (`client-bound at 4 of 4 trials in B`).
//! 3. **Trials of one run** (both cells hold trials of the same single run,
//!    which alternated A B A B, so the run's drift hit both alike) are
//!    compared trial against trial ([`compare_by`]: Mann-Whitney, Welch's t
//!    at 3 a side).
//! 4. **Trials of different runs** are compared run against run: each run
//!    gives one value, its headline over its kept trials, and the verdict
//!    is Student's t on those values' logs ([`compare_run_values`],
//!    [`crate::analysis::between`]). No p-value computed from trials is
//!    shown between runs. Fewer than `need` runs a side is `?`
//!    ([`Verdict::NeedsMoreRuns`]).
//!
//! Background load ([`crate::probe::background`]) is judged alike
//! everywhere: its trials are kept and marked. Inside a run, alternation
//! spreads it over every system; between runs, a run slowed by it is one
//! more sample of the drift between runs, which the run-level test
//! counts (a trial-level test between runs called a run slowed by another
//! tenant "44% slower, p<0.001"). Leaving such trials out would leave
//! nothing to judge on a busy machine, where every trial is marked.
use super::rows::{Cell, Sample};
use crate::analysis::compare::{compare_by, compare_run_values, Comparison, Verdict};
use crate::analysis::summary::{median, Headline};
use std::collections::BTreeMap;

/// How two cells are judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rules {
    /// The statistic compared: each side's (trials) or each run's (runs).
    pub headline: Headline,
    /// Relative differences under this are never called a difference.
    pub noise: f64,
    /// Between runs, the fewest runs each side needs (baseline,
    /// candidate).
    pub need_runs: (usize, usize),
}

impl Rules {
    /// `compare`, `report` and `run`: [`crate::analysis::between::MIN_RUNS`]
    /// runs a side between runs.
    pub fn symmetric(headline: Headline, noise: f64) -> Rules {
        let n = crate::analysis::between::MIN_RUNS;
        Rules {
            headline,
            noise,
            need_runs: (n, n),
        }
    }
}

/// `cand` against `base` at one point.
pub(crate) fn judge(base: &Cell, cand: &Cell, rules: &Rules) -> Comparison {
    let errors = (cand.not_comparable.as_ref())
        .map(|r| format!("{r} in {}", cand.system))
        .or_else(|| (base.not_comparable.as_ref()).map(|r| format!("{r} in {}", base.system)));
    let (b, c) = (kept(&base.samples), kept(&cand.samples));
    let bound = [(cand, &c), (base, &b)].into_iter().find_map(|(cell, k)| {
        (k.is_empty() && !cell.samples.is_empty()).then(|| {
            format!(
                "{} in {}",
                client_bound_reason(cell.samples.len(), cell.samples.len()),
                cell.system
            )
        })
    });
    let comparison = if one_run(&b, &c) {
        compare_by(&values(&b), &values(&c), rules.noise, rules.headline)
    } else {
        let (rb, rc) = (run_values(&b, rules), run_values(&c, rules));
        compare_run_values(&rb, &rc, rules.noise, rules.need_runs)
    };
    match errors.or(bound) {
        Some(reason) => comparison.not_comparable(reason),
        None => comparison,
    }
}

/// The run as a whole, between runs: each run's geometric mean over the
/// points of `pairs` (baseline cell, candidate cell; the comparable points
/// only), a run lacking one of them left out, judged by
/// [`compare_run_values`] as one value per run. One test, so no
/// correction for the number of points. `None` inside one run (the
/// points' own verdicts judge there) and without a pair.
pub(crate) fn whole(pairs: &[(&Cell, &Cell)], rules: &Rules) -> Option<Comparison> {
    if pairs.is_empty() || pairs.iter().all(|(b, c)| one_run(&b.samples, &c.samples)) {
        return None;
    }
    let side = |pick: for<'a> fn(&(&'a Cell, &'a Cell)) -> &'a Cell| -> Vec<f64> {
        let mut per_run: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for pair in pairs {
            for (run, samples) in by_run(&kept(&pick(pair).samples)) {
                if let Some(v) = run_values(&samples, rules).first().filter(|v| **v > 0.0) {
                    per_run.entry(run).or_default().push(v.ln());
                }
            }
        }
        per_run
            .into_values()
            .filter(|logs| logs.len() == pairs.len())
            .map(|logs| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
            .collect()
    };
    let (b, c) = (side(|p| p.0), side(|p| p.1));
    Some(compare_run_values(&b, &c, rules.noise, rules.need_runs))
}

/// `client-bound at 4 of 4 trials`: why a side whose every trial the load
/// generator limited is not comparable.
pub fn client_bound_reason(bound: usize, trials: usize) -> String {
    format!("client-bound at {bound} of {trials} trials")
}

/// Whether both sides hold trials of one and the same run.
pub(crate) fn one_run(base: &[Sample], cand: &[Sample]) -> bool {
    let mut runs = base.iter().chain(cand).map(|s| s.run);
    match runs.next() {
        Some(first) => runs.all(|r| r == first),
        None => true,
    }
}

/// The samples a verdict may use: not client-bound.
pub(crate) fn kept(samples: &[Sample]) -> Vec<Sample> {
    samples
        .iter()
        .copied()
        .filter(|s| !s.client_bound)
        .collect()
}

fn values(samples: &[Sample]) -> Vec<f64> {
    samples.iter().map(|s| s.value).collect()
}

/// Each run's headline over its kept trials.
pub(crate) fn run_values(samples: &[Sample], rules: &Rules) -> Vec<f64> {
    by_run(samples)
        .into_values()
        .filter_map(|run| headline(&values(&run), rules.headline))
        .collect()
}

/// The samples grouped by run, in run order.
pub(crate) fn by_run(samples: &[Sample]) -> BTreeMap<i64, Vec<Sample>> {
    let mut out: BTreeMap<i64, Vec<Sample>> = BTreeMap::new();
    for s in samples {
        out.entry(s.run).or_default().push(*s);
    }
    out
}

/// The median, or the best, of `values`.
pub fn headline(values: &[f64], statistic: Headline) -> Option<f64> {
    match statistic {
        Headline::Median => median(values),
        Headline::Best => values.iter().copied().reduce(f64::max),
    }
}

/// Whether a verdict was drawn between runs.
pub fn between_runs(c: &Comparison) -> bool {
    c.runs.is_some() || matches!(c.verdict, Verdict::NeedsMoreRuns { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::Test;

    fn cell(system: &str, runs: &[(i64, &[f64])]) -> Cell {
        let mut c = crate::report::test_support::aggregate(&["a"]).1.cells[0].clone();
        c.system = system.into();
        c.not_comparable = None;
        c.samples = runs
            .iter()
            .flat_map(|(run, vals)| {
                vals.iter().map(move |&value| Sample {
                    value,
                    run: *run,
                    client_bound: false,
                })
            })
            .collect();
        c.throughput = c.samples.iter().map(|s| s.value).collect();
        c
    }

    const RULES: Rules = Rules {
        headline: Headline::Median,
        noise: 0.02,
        need_runs: (3, 3),
    };

    #[test]
    fn trials_of_one_run_are_compared_trial_against_trial() {
        let a = cell("a", &[(7, &[100.0, 101.0, 99.0, 100.5])]);
        let b = cell("b", &[(7, &[120.0, 121.0, 119.0, 120.5])]);
        let c = judge(&a, &b, &RULES);
        assert_eq!(
            (c.verdict, c.test, c.runs),
            (Verdict::Faster, Test::MannWhitney, None)
        );
    }

    #[test]
    fn one_run_a_side_is_never_a_verdict_and_shows_no_p_value() {
        // The A/A case: two runs whose trials agree tightly but whose
        // levels differ by 20%. Trial against trial this is p = 0.029.
        let a = cell("a", &[(1, &[100.0, 101.0, 99.0, 100.5])]);
        let b = cell("b", &[(2, &[80.0, 81.0, 79.0, 80.5])]);
        let c = judge(&a, &b, &RULES);
        assert_eq!(
            c.verdict,
            Verdict::NeedsMoreRuns {
                at_least: (3, 3),
                runs: (1, 1)
            }
        );
        assert_eq!(c.p_value, None);
        assert!(c.sentence.starts_with("1 run a side"), "{}", c.sentence);
        assert!((c.ratio - 80.25 / 100.25).abs() < 1e-9, "{}", c.ratio);
    }

    #[test]
    fn three_runs_a_side_are_judged_on_their_run_medians() {
        // Run medians 100, 112, 92 against 101, 90, 110: the trials inside
        // each run are tight, so a trial-level test would call it; the
        // runs do not.
        let a = cell(
            "a",
            &[
                (1, &[100.0, 100.5, 99.5]),
                (3, &[112.0, 112.5, 111.5]),
                (5, &[92.0, 92.5, 91.5]),
            ],
        );
        let same = cell(
            "b",
            &[
                (2, &[101.0, 101.5, 100.5]),
                (4, &[90.0, 90.5, 89.5]),
                (6, &[110.0, 110.5, 109.5]),
            ],
        );
        let c = judge(&a, &same, &RULES);
        assert_eq!(
            (c.verdict.clone(), c.test, c.runs),
            (Verdict::NoDifference, Test::Runs, Some((3, 3)))
        );
        assert!(c.detectable.unwrap() > 0.1, "{c:?}");
        // A 40% drop is beyond that drift.
        let slower = cell(
            "b",
            &[
                (2, &[60.0, 60.5, 59.5]),
                (4, &[64.0, 64.5, 63.5]),
                (6, &[58.0, 58.5, 57.5]),
            ],
        );
        let c = judge(&a, &slower, &RULES);
        assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
        assert!(
            c.sentence.contains("t on 3 against 3 runs"),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn client_bound_trials_are_left_out_and_a_side_of_only_them_is_not_comparable() {
        let a = cell("a", &[(7, &[100.0, 101.0, 99.0, 100.5])]);
        let mut b = cell("b", &[(7, &[120.0, 121.0, 119.0, 120.5, 500.0])]);
        b.samples[4].client_bound = true;
        // The client-bound 500 is not used: the same verdict as without it.
        let without = cell("b", &[(7, &[120.0, 121.0, 119.0, 120.5])]);
        assert_eq!(judge(&a, &b, &RULES), judge(&a, &without, &RULES));
        for s in &mut b.samples {
            s.client_bound = true;
        }
        let c = judge(&a, &b, &RULES);
        assert_eq!(
            c.verdict,
            Verdict::NotComparable {
                reason: "client-bound at 5 of 5 trials in b".into()
            }
        );
    }

    #[test]
    fn between_runs_a_run_in_background_load_is_one_more_sample_of_the_drift() {
        // A busy machine marks every trial: still judged, run by run.
        let a = cell(
            "a",
            &[
                (1, &[100.0, 100.5]),
                (3, &[101.0, 101.5]),
                (5, &[99.0, 99.5]),
            ],
        );
        let b = cell(
            "b",
            &[(2, &[100.0, 100.5]), (4, &[55.0, 55.5]), (6, &[99.0, 99.5])],
        );
        let c = judge(&a, &b, &RULES);
        assert_eq!(c.runs, Some((3, 3)), "{c:?}");
        // The slowed run widens the drift: no claim either way.
        assert_eq!(c.verdict, Verdict::NoDifference, "{c:?}");
    }

    #[test]
    fn errors_on_either_side_are_named() {
        let mut a = cell("a", &[(7, &[100.0, 101.0, 99.0, 100.5])]);
        let b = cell("b", &[(7, &[120.0, 121.0, 119.0, 120.5])]);
        a.not_comparable = Some("9 errors (9 timeouts)".into());
        let c = judge(&a, &b, &RULES);
        assert_eq!(
            c.verdict,
            Verdict::NotComparable {
                reason: "9 errors (9 timeouts) in a".into()
            }
        );
    }
}
