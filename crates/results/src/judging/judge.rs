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
//! Background load ([`crate::record::probe::background`]): inside a run its
//! trials are kept and marked, since alternation spreads another tenant
//! over every system alike. Between runs, where the run is the unit, a run
//! whose kept trials at a point **all** ran beside background load is no
//! clean sample of this host's drift between runs (Kalibera & Jones model
//! the runs of one system on one quiet machine; another tenant is neither)
//! and is left out there, and the verdict says how many
//! (`judged_runs`). Where every run of a side was, the change is shown
//! from them but not judged (`?`). A run only partly disturbed stays,
//! whole. `check`, whose one candidate run cannot be left out, takes the
//! other named rule ([`BackgroundRule`]): a slower candidate most of whose
//! kept trials ran beside background load is "cannot say".
//!
//! The rules are named, and [`Rules`] holds each: errors
//! ([`crate::analysis::compare::MAX_ERROR_RATE`], [`super::comparable`]),
//! client-bound and unsteady trials ([`crate::store::left_out_of_verdicts`]),
//! too few trials (the test's own minimum, [`Verdict::NeedsMoreTrials`]),
//! too few runs ([`Rules::need_runs`]), background ([`Rules::background`])
//! and the noise floor ([`Rules::noise`]).
use super::rows::{Cell, Sample};
use crate::analysis::compare::{compare_by, compare_run_values, Comparison, Verdict};
use crate::analysis::summary::Headline;
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
    /// What background load on the host does to a verdict between runs.
    pub background: BackgroundRule,
}

/// The background rule between runs, one of two named ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BackgroundRule {
    /// Leave out a run whose every kept trial at a point ran beside
    /// background load (`judged_runs`, `one_runs_values`): `compare`,
    /// `report` and the N-run page.
    LeaveOutDisturbedRuns,
    /// Keep every run, but a slower candidate more than `max_share` of
    /// whose kept trials ran beside background load cannot be blamed
    /// (`disturbed`): `check`, whose one candidate run cannot be left
    /// out, and `history`, which keeps such a run in its series, marked.
    CannotBlameADisturbedCandidate {
        /// The share of the candidate's kept trials ([`MAX_DISTURBED_SHARE`]).
        max_share: f64,
    },
}

/// `check`'s share: a slower candidate more than half of whose kept trials
/// ran beside background load is rerun, not blamed.
pub const MAX_DISTURBED_SHARE: f64 = 0.5;

impl Rules {
    /// `compare`, `report` and `run`: [`crate::analysis::between::MIN_RUNS`]
    /// runs a side between runs.
    pub fn symmetric(headline: Headline, noise: f64) -> Rules {
        let n = crate::analysis::between::MIN_RUNS;
        Rules {
            headline,
            noise,
            need_runs: (n, n),
            background: BackgroundRule::LeaveOutDisturbedRuns,
        }
    }

    /// `check`: [`crate::analysis::between::MIN_RUNS`] baseline runs against
    /// one candidate run, and a disturbed candidate not blamed.
    pub fn gate(headline: Headline, noise: f64) -> Rules {
        Rules {
            headline,
            noise,
            need_runs: (crate::analysis::between::MIN_RUNS, 1),
            background: BackgroundRule::CannotBlameADisturbedCandidate {
                max_share: MAX_DISTURBED_SHARE,
            },
        }
    }

    /// Whether a run whose every kept trial at a point ran beside
    /// background load is left out there.
    pub fn leaves_out_disturbed_runs(&self) -> bool {
        self.background == BackgroundRule::LeaveOutDisturbedRuns
    }
}

/// Why a slower `cand` cannot be blamed (`check`'s background rule):
/// more than `max_share` of its kept trials ran beside background load.
/// `None` under the other rule, or when it is not so disturbed.
pub fn disturbed(cand: &crate::store::RunData, rules: &Rules) -> Option<String> {
    let BackgroundRule::CannotBlameADisturbedCandidate { max_share } = rules.background else {
        return None;
    };
    let kept: Vec<_> = (cand.trials.iter())
        .filter(|t| t.throughput().is_some())
        .filter(|t| !crate::store::left_out_of_verdicts(&t.context, &t.window))
        .collect();
    let noisy = (kept.iter())
        .filter(|t| {
            (t.probe.as_ref())
                .and_then(|p| p.background)
                .is_some_and(|b| b.noisy)
        })
        .count();
    (!kept.is_empty() && noisy as f64 > max_share * kept.len() as f64).then(|| {
        format!(
            "slower, but {noisy} of the candidate's {} trials {BESIDE_BACKGROUND_LOAD} (other \
             processes or steal took {}% or more of the CPUs): rerun it on a quiet machine",
            kept.len(),
            crate::record::probe::background::BACKGROUND_SHARE * 100.0
        )
    })
}

/// `cand` against `base` at one point.
pub fn judge(base: &Cell, cand: &Cell, rules: &Rules) -> Comparison {
    let excluded = [cand, base]
        .into_iter()
        .find_map(|cell| Some(format!("{} in {}", excluded(cell)?, cell.system)));
    let (b, c) = (kept(&base.samples), kept(&cand.samples));
    let (comparison, disturbed) = if one_run(&b, &c) {
        let c = compare_by(&values(&b), &values(&c), rules.noise, rules.headline);
        (c, None)
    } else {
        let (jb, jc) = (judged_runs(&b, rules), judged_runs(&c, rules));
        let (rb, rc) = (
            run_values(&jb.samples, rules),
            run_values(&jc.samples, rules),
        );
        let comparison = compare_run_values(&rb, &rc, rules.noise, rules.need_runs);
        let named = |(j, cell): (&Judged, &Cell)| {
            (j.left > 0).then(|| left_out_sentence(j.left, j.runs, &cell.system))
        };
        let notes: Vec<String> = [(&jb, base), (&jc, cand)]
            .into_iter()
            .filter_map(named)
            .collect();
        let clean = (jb.runs - jb.left, jc.runs - jc.left);
        let shown_only = (jb.shown_only || jc.shown_only).then_some(clean);
        (
            comparison,
            (!notes.is_empty()).then(|| (notes.join("; "), shown_only)),
        )
    };
    match (excluded, disturbed) {
        (Some(reason), _) => comparison.not_comparable(reason),
        (None, Some((note, Some(clean)))) => not_judged(comparison, rules.need_runs, clean, note),
        (None, Some((note, None))) => Comparison {
            sentence: format!("{}; {note}", comparison.sentence),
            ..comparison
        },
        (None, None) => comparison,
    }
}

/// A change shown but not judged (`?`): a side had no run clear of
/// background load, so its values are those runs' and nothing is claimed;
/// `clean` counts the runs a side that were clear.
fn not_judged(
    c: Comparison,
    need: (usize, usize),
    clean: (usize, usize),
    why: String,
) -> Comparison {
    Comparison {
        verdict: Verdict::NeedsMoreRuns {
            at_least: need,
            runs: clean,
        },
        p_value: None,
        ratio_ci: None,
        detectable: None,
        within_floor: false,
        sentence: format!("shown, not judged: {why}"),
        ..c
    }
}

/// The words every verdict uses for runs left out beside background load.
pub const BESIDE_BACKGROUND_LOAD: &str = "ran beside background load";

/// `1 of 3 runs of run B left out: its every trial here ran beside
/// background load (…)`.
fn left_out_sentence(left: usize, runs: usize, who: &str) -> String {
    let share = crate::record::probe::background::BACKGROUND_SHARE * 100.0;
    let (them, its) = if left == 1 {
        ("it", "its")
    } else {
        ("they", "their")
    };
    format!(
        "{left} of {runs} runs of {who} left out: {its} every trial here {BESIDE_BACKGROUND_LOAD} \
         (other processes or steal took {share}% or more of the CPUs), so {them} measured \
         another tenant too; rerun on a quiet machine"
    )
}

/// The samples a verdict between runs uses at one point, and what was left
/// out ([`judged_runs`]).
pub struct Judged {
    /// The runs' samples it uses.
    pub samples: Vec<Sample>,
    /// Runs at the point.
    pub runs: usize,
    /// Runs left out: every one of their samples ran beside background load.
    pub left: usize,
    /// Every run was: `samples` are theirs, to show a value, never to judge.
    pub shown_only: bool,
}

/// Between runs: the runs not disturbed by background load (the module's
/// doc); where every run was, all of them, marked `shown_only`. `check`
/// ([`BackgroundRule::CannotBlameADisturbedCandidate`]) keeps every run.
pub fn judged_runs(samples: &[Sample], rules: &Rules) -> Judged {
    let runs = by_run(samples);
    let n = runs.len();
    let clean: Vec<Sample> = (runs.into_values())
        .filter(|run| !rules.leaves_out_disturbed_runs() || !run.iter().all(|s| s.background))
        .flatten()
        .collect();
    let left = n - by_run(&clean).len();
    let shown_only = clean.is_empty() && n > 0;
    Judged {
        samples: if shown_only { samples.to_vec() } else { clean },
        runs: n,
        left,
        shown_only,
    }
}

/// One run's values at one point as the verdicts between runs take them
/// (its kept trials), or why they leave the run out there: the cell is
/// [`excluded`] (errors, every trial client-bound or unsteady), or every
/// kept trial ran beside background load (under
/// [`BackgroundRule::LeaveOutDisturbedRuns`], as [`judged_runs`] does). `history` asks this of each run, so its series
/// holds what `compare` would judge.
pub fn one_runs_values(cell: &Cell, rules: &Rules) -> Result<Vec<f64>, String> {
    if let Some(why) = excluded(cell) {
        return Err(why);
    }
    if rules.leaves_out_disturbed_runs() && every_kept_trial_disturbed(cell) {
        return Err(format!(
            "every trial here {BESIDE_BACKGROUND_LOAD} (other processes or steal took {}% or \
             more of the CPUs)",
            crate::record::probe::background::BACKGROUND_SHARE * 100.0
        ));
    }
    Ok(values(&kept(&cell.samples)))
}

/// Whether the cell has kept trials and every one ran beside background
/// load: the one test behind `one_runs_values` and `history`'s mark.
pub fn every_kept_trial_disturbed(cell: &Cell) -> bool {
    let kept = kept(&cell.samples);
    !kept.is_empty() && kept.iter().all(|s| s.background)
}

/// The run as a whole, between runs: each run's geometric mean over the
/// points of `pairs` (baseline cell, candidate cell; the comparable points
/// only), a run lacking one of them left out, judged by
/// [`compare_run_values`] as one value per run. One test, so no
/// correction for the number of points. `None` inside one run (the
/// points' own verdicts judge there) and without a pair.
pub fn whole(pairs: &[(&Cell, &Cell)], rules: &Rules) -> Option<Comparison> {
    if pairs.is_empty() || pairs.iter().all(|(b, c)| one_run(&b.samples, &c.samples)) {
        return None;
    }
    let shown_only = std::cell::Cell::new(false);
    let side = |pick: for<'a> fn(&(&'a Cell, &'a Cell)) -> &'a Cell| -> Vec<f64> {
        let mut per_run: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for pair in pairs {
            let judged = judged_runs(&kept(&pick(pair).samples), rules);
            shown_only.set(shown_only.get() || judged.shown_only);
            for (run, samples) in by_run(&judged.samples) {
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
    let whole = compare_run_values(&b, &c, rules.noise, rules.need_runs);
    Some(match shown_only.get() {
        true => {
            let why = format!("at some point every run of a side {BESIDE_BACKGROUND_LOAD}");
            not_judged(whole, rules.need_runs, (b.len(), c.len()), why)
        }
        false => whole,
    })
}

/// `client-bound at 4 of 4 trials`: why a side whose every trial the load
/// generator limited is not comparable.
pub fn client_bound_reason(bound: usize, trials: usize) -> String {
    format!("client-bound at {bound} of {trials} trials")
}

/// Why `cell` is in no verdict and no ranking, whoever it is compared
/// with: its own errors (or its kind's rule, [`super::comparable`]), or
/// every one of its trials client-bound. `None` when it can be judged.
/// Every view marks a cell with this reason `✗`.
pub fn excluded(cell: &Cell) -> Option<String> {
    cell.not_comparable.clone().or_else(|| {
        let n = cell.samples.len();
        (n > 0 && kept(&cell.samples).is_empty()).then(|| {
            let unsteady = cell.samples.iter().filter(|s| s.unsteady).count();
            if unsteady == 0 {
                client_bound_reason(n, n)
            } else {
                format!("left out at {n} of {n} trials ({})", left_out_words(cell))
            }
        })
    })
}

/// What [`left_out`] counts, in words: `2 client-bound`, `1 unsteady`,
/// `2 client-bound, 1 unsteady` (a trial both is counted client-bound).
pub fn left_out_words(cell: &Cell) -> String {
    let bound = cell.samples.iter().filter(|s| s.client_bound).count();
    let unsteady = cell
        .samples
        .iter()
        .filter(|s| s.unsteady && !s.client_bound)
        .count();
    let mut words = Vec::new();
    if bound > 0 {
        words.push(format!("{bound} client-bound"));
    }
    if unsteady > 0 {
        words.push(format!("{unsteady} unsteady"));
    }
    words.join(", ")
}

/// How many of `cell`'s trials the verdict, and the summary every view
/// shows, leave out: its client-bound ones, while others remain. 0 when
/// every trial is client-bound: the summary is then of them all, and the
/// cell is [`excluded`].
pub fn left_out(cell: &Cell) -> usize {
    let bound = cell.samples.iter().filter(|s| s.left_out()).count();
    if bound == cell.samples.len() {
        0
    } else {
        bound
    }
}

/// The throughputs the cell's summary is over, with their positions among
/// its successful trials: the ones the verdict uses (not client-bound), or
/// all of them when every one is client-bound.
pub fn summarized(cell: &Cell) -> Vec<(usize, f64)> {
    if left_out(cell) == 0 || cell.samples.len() != cell.throughput.len() {
        return cell.throughput.iter().copied().enumerate().collect();
    }
    let all = cell.samples.iter().map(|s| s.value).enumerate();
    all.zip(&cell.samples)
        .filter(|(_, s)| !s.left_out())
        .map(|(v, _)| v)
        .collect()
}

/// Whether both sides hold trials of one and the same run.
pub fn one_run(base: &[Sample], cand: &[Sample]) -> bool {
    let mut runs = base.iter().chain(cand).map(|s| s.run);
    match runs.next() {
        Some(first) => runs.all(|r| r == first),
        None => true,
    }
}

/// The samples a verdict may use: not client-bound.
pub fn kept(samples: &[Sample]) -> Vec<Sample> {
    samples.iter().copied().filter(|s| !s.left_out()).collect()
}

fn values(samples: &[Sample]) -> Vec<f64> {
    samples.iter().map(|s| s.value).collect()
}

/// Each run's headline over its kept trials.
pub fn run_values(samples: &[Sample], rules: &Rules) -> Vec<f64> {
    by_run(samples)
        .into_values()
        .filter_map(|run| headline(&values(&run), rules.headline))
        .collect()
}

/// The samples grouped by run, in run order.
pub fn by_run(samples: &[Sample]) -> BTreeMap<i64, Vec<Sample>> {
    let mut out: BTreeMap<i64, Vec<Sample>> = BTreeMap::new();
    for s in samples {
        out.entry(s.run).or_default().push(*s);
    }
    out
}

/// The median, or the best, of `values` ([`Headline::of`]).
pub fn headline(values: &[f64], statistic: Headline) -> Option<f64> {
    statistic.of(values)
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
        let mut c = crate::judging::test_support::aggregate(&["a"]).1.cells[0].clone();
        c.system = system.into();
        c.not_comparable = None;
        c.samples = runs
            .iter()
            .flat_map(|(run, vals)| {
                vals.iter().map(move |&value| Sample {
                    unsteady: false,
                    value,
                    run: *run,
                    client_bound: false,
                    background: false,
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
        background: BackgroundRule::LeaveOutDisturbedRuns,
    };

    #[test]
    fn checks_background_rule_blames_no_disturbed_candidate_and_counts_kept_trials() {
        let mut cand = crate::judging::test_support::run_data(&["a"]);
        let noisy = crate::record::probe::background::Background {
            noisy: true,
            ..Default::default()
        };
        for t in &mut cand.trials {
            if let Some(p) = &mut t.probe {
                p.background = Some(noisy);
            }
        }
        let gate = Rules::gate(Headline::Median, 0.02);
        let why = disturbed(&cand, &gate).expect("every kept trial was disturbed");
        assert!(why.contains(BESIDE_BACKGROUND_LOAD), "{why}");
        // The other rule leaves runs out instead; it blames nobody.
        assert_eq!(disturbed(&cand, &RULES), None);
        // Client-bound trials are no trials of the verdict's: with every
        // one client-bound, nothing is left to be disturbed.
        for t in &mut cand.trials {
            t.context.set_client_bound(Some("client CPU 99%".into()));
        }
        assert_eq!(disturbed(&cand, &gate), None);
    }

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
    fn between_runs_a_slowed_run_without_background_load_is_one_more_sample_of_the_drift() {
        // Nothing marks the slow run: it is the host's own drift.
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

    /// Issue 46 item 2.7: between runs, a run whose every trial at a point
    /// ran beside background load is left out there, and the verdict says
    /// so; a run only partly disturbed stays.
    #[test]
    fn between_runs_a_run_all_beside_background_load_is_left_out_and_named() {
        let a = cell(
            "a",
            &[
                (1, &[100.0, 100.5]),
                (3, &[101.0, 101.5]),
                (5, &[99.0, 99.5]),
            ],
        );
        let mut b = cell(
            "b",
            &[(2, &[100.0, 100.5]), (4, &[55.0, 55.5]), (6, &[99.0, 99.5])],
        );
        for s in b.samples.iter_mut().filter(|s| s.run == 4) {
            s.background = true;
        }
        let c = judge(&a, &b, &RULES);
        assert_eq!(
            c.verdict,
            Verdict::NeedsMoreRuns {
                at_least: (3, 3),
                runs: (3, 2)
            },
            "{c:?}"
        );
        assert!(
            (c.ratio - 1.0).abs() < 0.01,
            "the slowed run is out: {}",
            c.ratio
        );
        assert!(
            c.sentence.contains(
                "1 of 3 runs of b left out: its every trial here ran beside background load"
            ),
            "{}",
            c.sentence
        );
        // One trial clear of it keeps the run in, whole.
        b.samples[3].background = false;
        let c = judge(&a, &b, &RULES);
        assert_eq!(c.runs, Some((3, 3)), "{c:?}");
        assert!(!c.sentence.contains("left out"), "{}", c.sentence);
        // Every run of a side disturbed: nothing to judge there.
        for s in &mut b.samples {
            s.background = true;
        }
        let c = judge(&a, &b, &RULES);
        assert_eq!(
            c.verdict,
            Verdict::NeedsMoreRuns {
                at_least: (3, 3),
                runs: (3, 0)
            },
            "shown, not judged: {c:?}"
        );
        assert_eq!(c.p_value, None);
        assert!(
            c.sentence
                .starts_with("shown, not judged: 3 of 3 runs of b left out"),
            "{}",
            c.sentence
        );
        // Inside one run alternation spreads it: kept.
        let mut one = cell("b", &[(1, &[120.0, 121.0, 119.0, 120.5])]);
        let base = cell("a", &[(1, &[100.0, 101.0, 99.0, 100.5])]);
        for s in &mut one.samples {
            s.background = true;
        }
        assert_eq!(judge(&base, &one, &RULES).verdict, Verdict::Faster);
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
