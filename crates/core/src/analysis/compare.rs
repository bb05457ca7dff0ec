//! Comparisons against a baseline: ratio of medians, its bootstrap CI, the
//! Mann-Whitney p-value and a verdict.
//!
//! A difference is claimed only when it is both significant (two-sided
//! Mann-Whitney p < 0.05, see [`super::mann_whitney`]) and its whole 95%
//! interval of the ratio lies beyond the noise floor on one side (a
//! minimum-effect test, [`super::floor`]); otherwise it is benchstat's "~"
//! for "no difference", and the interval is shown. Each path has its
//! interval: the bootstrap CI of the ratio of medians, Fieller's CI of the
//! ratio of means where Welch's t judges (or the headline is the best),
//! and between runs the Student t CI of the ratio of geometric means.
//!
//! With too few trials for the rank test to ever reach p < 0.05 (3 against
//! 3: its smallest p is 0.1), the verdict comes from Welch's t-test on all
//! trials instead ([`super::welch`]), whatever the headline statistic, and
//! a "no difference" says how large a change those trials could have
//! shown. Below 3 a side no test is trusted.
use super::bootstrap::ratio_of_medians_ci;
use super::floor::{self, Side};
use super::mann_whitney::{mann_whitney_u, min_exact_p};
use super::summary::{median, Headline};
use super::welch::welch_t;
use serde::{Deserialize, Serialize};

/// Significance level of the verdicts.
pub const ALPHA: f64 = 0.05;
/// A point whose errors exceed this share of its attempted requests
/// (0.1%) is not comparable: a system that drops requests must not win on
/// the throughput of the ones it served.
pub const MAX_ERROR_RATE: f64 = 0.001;
/// Fewest trials per side for Welch's t to judge where the rank test
/// cannot: with 2 a side the variance estimate is too rough to trust.
pub const MIN_WELCH_TRIALS: usize = 3;

/// The test a [`Comparison`]'s p-value comes from.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Two-sided Mann-Whitney U ([`super::mann_whitney`]), the default.
    #[default]
    MannWhitney,
    /// Welch's unequal-variances t-test on all trials ([`super::welch`]):
    /// too few trials for the rank test (3 a side).
    Welch,
    /// Between runs: Student's t on the logs of each run's headline
    /// ([`super::between`]); the runs, not the trials, are the samples.
    Runs,
}

/// Whether `errors` out of `requests + errors` attempts exceed
/// [`MAX_ERROR_RATE`].
pub fn too_many_errors(errors: u64, requests: u64) -> bool {
    let attempts = requests.saturating_add(errors);
    attempts > 0 && errors as f64 > MAX_ERROR_RATE * attempts as f64
}

/// What a [`Comparison`] concludes about candidate against baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum Verdict {
    /// The candidate is significantly better (p < 0.05 by the comparison's [`Test`]) and
    /// the whole 95% interval of the ratio lies above 1 + the noise floor
    /// ([`super::floor`]).
    Faster,
    /// The candidate is significantly worse (p < 0.05 by the comparison's [`Test`]) and
    /// the whole 95% interval of the ratio lies below 1 − the noise floor.
    Slower,
    /// Not significant, or an interval that reaches inside the noise floor
    /// (`within_floor` says when the test alone would have claimed it).
    NoDifference,
    /// Too few trials for the test to ever reach significance.
    NeedsMoreTrials {
        /// Trials per system that would let the test reach p < 0.05
        /// ([`trials_needed`]).
        at_least: usize,
    },
    /// Between runs, too few runs on a side for their drift to be known
    /// ([`super::between::MIN_RUNS`]): the change is shown, nothing is
    /// claimed.
    NeedsMoreRuns {
        /// Runs a side the verdict needs (baseline, candidate).
        at_least: (usize, usize),
        /// Runs each side has (baseline, candidate).
        runs: (usize, usize),
    },
    /// One side's errors exceed [`MAX_ERROR_RATE`]: no verdict is drawn.
    NotComparable {
        /// `32948 errors (31042 timeouts, 1906 connect) in nginx defaults`
        reason: String,
    },
}

/// Candidate samples against baseline samples: the ratio, its CI, the test's p-value, the
/// verdict drawn, and the sentence the reports print. The default is no
/// comparison at all (ratio 1, too few trials), for building one field by
/// field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// statistic(candidate) / statistic(baseline), the statistic being the
    /// median unless [`compare_by`] was given another; 1.0 when it cannot be formed
    /// (a sample is empty or the baseline median is 0; the sentence says so).
    pub ratio: f64,
    /// The 95% CI of the ratio that the verdict is judged on
    /// ([`super::floor`]): the percentile bootstrap of the ratio of medians
    /// (Mann-Whitney, median headline); Fieller's CI of the ratio of means
    /// ([`super::welch::Welch::ratio_ci`]) where Welch's t judges, or the
    /// headline is the best; between runs, Student's t CI of the ratio of
    /// the geometric means of the run headlines. `None` when none can be
    /// formed (too few trials, a baseline at 0).
    pub ratio_ci: Option<(f64, f64)>,
    /// Two-sided p-value of the test named by `test` (Mann-Whitney U,
    /// else Welch's t).
    pub p_value: Option<f64>,
    /// What is concluded from the p-value, the ratio and the noise floor.
    pub verdict: Verdict,
    /// "B is 12.0% faster (95% CI 9.1..15.2%)" / "no significant difference
    /// (p=0.41)".
    pub sentence: String,
    /// The test behind `p_value`.
    pub test: Test,
    /// With Welch's t and no difference found: the smallest change, as a
    /// fraction of the baseline's mean (0.062 = 6.2%, never under the noise
    /// floor), that these trials could have told apart at their spread.
    /// Between runs, the same for the runs.
    pub detectable: Option<f64>,
    /// Between runs: how many runs each side had (baseline, candidate);
    /// `None` when the trials of one run were compared.
    pub runs: Option<(usize, usize)>,
    /// The verdict is `~` because the 95% interval (`ratio_ci`) did not
    /// clear the noise floor (or none could be formed), although the test
    /// alone (p < 0.05 and the ratio beyond the floor) would have claimed a
    /// difference: the claims the minimum-effect rule ([`super::floor`])
    /// holds back.
    pub within_floor: bool,
}

/// Compares candidate samples against baseline samples (higher is better).
/// `noise` is the relative difference below which no difference is claimed
/// (0.02 = 2%; a negative or non-finite value counts as 0).
///
/// Values that are negative or not finite are left out (a failed trial has
/// no throughput); zeros are kept.
pub fn compare(baseline: &[f64], candidate: &[f64], noise: f64) -> Comparison {
    compare_by(baseline, candidate, noise, Headline::Median)
}

/// As [`compare`], with the ratio (and the noise threshold on it) taken on
/// `statistic`, the one the table shows: with `best`, best of the
/// candidate over best of the baseline. The p-value is Mann-Whitney's in
/// either case; the bootstrap CI is only given for medians.
pub fn compare_by(
    baseline: &[f64],
    candidate: &[f64],
    noise: f64,
    statistic: Headline,
) -> Comparison {
    let noise = clean_noise(noise);
    let base = usable(baseline);
    let cand = usable(candidate);
    let pick = |v: &[f64]| match statistic {
        Headline::Median => median(v),
        Headline::Best => v.iter().copied().reduce(f64::max),
    };
    let medians = pick(&base).zip(pick(&cand));
    let ratio = match medians {
        Some((b, c)) if b > 0.0 => c / b,
        _ => 1.0,
    };
    let needed = trials_needed(base.len(), cand.len());
    let all_trials = welch_t(&base, &cand);
    let welch =
        all_trials.filter(|_| needed.is_some() && base.len().min(cand.len()) >= MIN_WELCH_TRIALS);
    let unbounded = zero_baseline_interval(&base, &cand);
    let mut comparison = match welch {
        Some(w) => judge_by_welch(&w, medians, ratio, noise, unbounded),
        None => {
            let p_value = mann_whitney_u(&base, &cand).map(|m| m.p_value);
            let ratio_ci = match statistic {
                Headline::Median => ratio_of_medians_ci(&base, &cand),
                Headline::Best => all_trials.and_then(|w| w.ratio_ci(ALPHA)),
            };
            let (verdict, within_floor) = match needed {
                // Welch's t takes over at 3 a side, where it applies.
                Some(rank) => (
                    Verdict::NeedsMoreTrials {
                        at_least: rank.min(MIN_WELCH_TRIALS),
                    },
                    false,
                ),
                None => decide(medians, ratio, ratio_ci.or(unbounded), p_value, noise),
            };
            Comparison {
                ratio,
                ratio_ci,
                p_value,
                verdict,
                sentence: String::new(),
                test: Test::MannWhitney,
                detectable: None,
                runs: None,
                within_floor,
            }
        }
    };
    comparison.sentence = describe(&comparison, "B", noise, medians);
    comparison
}

/// The verdict of Welch's t on all trials: a difference only when the
/// means differ significantly, Fieller's 95% CI of their ratio lies
/// wholly beyond the noise floor, and the headline statistic (the number
/// shown: median or best) points the same way beyond the floor.
fn judge_by_welch(
    w: &super::welch::Welch,
    shown: Option<(f64, f64)>,
    ratio: f64,
    noise: f64,
    unbounded: Option<(f64, f64)>,
) -> Comparison {
    let means = Some((w.mean_x, w.mean_y));
    let mean_ratio = if w.mean_x > 0.0 {
        w.mean_y / w.mean_x
    } else {
        1.0
    };
    let by_means = by_test(means, mean_ratio, Some(w.p_value), noise);
    let by_shown = by_test(shown, ratio, Some(w.p_value), noise);
    let by_tests = if by_means == by_shown {
        by_means
    } else {
        Verdict::NoDifference
    };
    let ratio_ci = w.ratio_ci(ALPHA);
    let (verdict, within_floor) = through_floor(by_tests, ratio_ci.or(unbounded), noise);
    let detectable = (verdict == Verdict::NoDifference)
        .then(|| w.detectable(ALPHA).map(|d| d.max(noise)))
        .flatten();
    Comparison {
        ratio,
        ratio_ci,
        p_value: Some(w.p_value),
        verdict,
        sentence: String::new(),
        test: Test::Welch,
        detectable,
        runs: None,
        within_floor,
    }
}

/// A baseline of zeros against a candidate whose every value is positive:
/// the relative change is unbounded, the interval `(∞, ∞)`, which clears
/// any floor ([`floor::side`]). `None` otherwise.
fn zero_baseline_interval(base: &[f64], cand: &[f64]) -> Option<(f64, f64)> {
    let zeros = !base.is_empty() && base.iter().all(|v| *v == 0.0);
    let positive = !cand.is_empty() && cand.iter().all(|v| *v > 0.0);
    (zeros && positive).then_some((f64::INFINITY, f64::INFINITY))
}

/// Compares two sides made of different runs: `base` and `cand` are each
/// run's headline value (one per run), judged by Student's t on their logs
/// ([`super::between::pooled_log_t`]) with the noise floor, as
/// trials are judged. `need` is the fewest runs each side must
/// have (baseline, candidate): [`super::between::MIN_RUNS`] a side for
/// `compare`, one candidate run against a baseline set for `check`. With
/// fewer the verdict is [`Verdict::NeedsMoreRuns`]: the ratio of the
/// geometric means is shown, no p-value.
pub fn compare_run_values(
    base: &[f64],
    cand: &[f64],
    noise: f64,
    need: (usize, usize),
) -> Comparison {
    use super::between::pooled_log_t;
    let noise = clean_noise(noise);
    use super::summary::{geometric_mean, positive_finite};
    let (b, c) = (
        positive_finite(base.iter().copied()),
        positive_finite(cand.iter().copied()),
    );
    let ratio = match (
        geometric_mean(b.iter().copied()),
        geometric_mean(c.iter().copied()),
    ) {
        (Some(b), Some(c)) => c / b,
        _ => 1.0,
    };
    let runs = (b.len(), c.len());
    let test = pooled_log_t(&b, &c).filter(|_| runs.0 >= need.0 && runs.1 >= need.1);
    let mut comparison = match test {
        None => Comparison {
            ratio,
            verdict: Verdict::NeedsMoreRuns {
                at_least: need,
                runs,
            },
            test: Test::Runs,
            runs: Some(runs),
            ..Comparison::default()
        },
        Some(t) => {
            let ratio_ci = t.ratio_ci(ALPHA);
            let (verdict, within_floor) = decide(
                Some((1.0, t.ratio)),
                t.ratio,
                ratio_ci,
                Some(t.p_value),
                noise,
            );
            let detectable = (verdict == Verdict::NoDifference)
                .then(|| t.detectable(ALPHA).map(|d| d.max(noise)))
                .flatten();
            Comparison {
                ratio: t.ratio,
                ratio_ci,
                p_value: Some(t.p_value),
                verdict,
                sentence: String::new(),
                test: Test::Runs,
                detectable,
                runs: Some(runs),
                within_floor,
            }
        }
    };
    comparison.sentence = describe(&comparison, "B", noise, Some((1.0, ratio)));
    comparison
}

fn clean_noise(noise: f64) -> f64 {
    if noise.is_finite() {
        noise.max(0.0)
    } else {
        0.0
    }
}

impl Default for Comparison {
    fn default() -> Self {
        Comparison {
            ratio: 1.0,
            ratio_ci: None,
            p_value: None,
            verdict: Verdict::NeedsMoreTrials { at_least: 4 },
            sentence: String::new(),
            test: Test::MannWhitney,
            detectable: None,
            runs: None,
            within_floor: false,
        }
    }
}

/// The verdict sentence with the candidate's own name:
/// "nginx-1.27 is 12.0% faster (95% CI 9.1..15.2%)".
pub fn sentence_for(c: &Comparison, candidate: &str) -> String {
    match c.verdict {
        Verdict::Faster | Verdict::Slower => match c.sentence.strip_prefix("B ") {
            Some(rest) => format!("{candidate} {rest}"),
            None => c.sentence.clone(),
        },
        _ => c.sentence.clone(),
    }
}

impl Comparison {
    /// The same comparison with no verdict drawn, for `reason` (errors over
    /// [`MAX_ERROR_RATE`]); the ratio is kept for the record.
    pub fn not_comparable(self, reason: String) -> Comparison {
        Comparison {
            sentence: format!("not comparable: {reason}"),
            verdict: Verdict::NotComparable { reason },
            ..self
        }
    }
}

/// "p=0.41", "p=0.002", "p<0.001".
pub fn format_p(p: f64) -> String {
    if p >= 0.1 {
        format!("p={p:.2}")
    } else if p >= 0.001 {
        format!("p={p:.3}")
    } else {
        "p<0.001".into()
    }
}

/// `None` when samples of these sizes can reach p < 0.05; otherwise the
/// smallest number of trials per system that can. The bound is the exact
/// test's smallest p, 2 / C(n1 + n2, n1) (no ties): 1/3 for 2 vs 2, 0.1 for
/// 3 vs 3, 0.029 for 4 vs 4. With ties the normal approximation can dip
/// under 0.05 earlier, but it is not trustworthy at such sizes, so the
/// bound applies regardless.
pub fn trials_needed(n_baseline: usize, n_candidate: usize) -> Option<usize> {
    let reachable = |a: usize, b: usize| min_exact_p(a, b) < ALPHA;
    if reachable(n_baseline, n_candidate) {
        return None;
    }
    // Four per system always suffice: 2 / C(8, 4) = 0.029.
    (1..=4)
        .find(|&k| reachable(n_baseline.max(k), n_candidate.max(k)))
        .or(Some(4))
}

fn usable(values: &[f64]) -> Vec<f64> {
    values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect()
}

/// The verdict of the test and the floor together: [`by_test`], then
/// [`through_floor`] on `interval`; with whether the floor held a claim
/// back.
fn decide(
    shown: Option<(f64, f64)>,
    ratio: f64,
    interval: Option<(f64, f64)>,
    p_value: Option<f64>,
    noise: f64,
) -> (Verdict, bool) {
    through_floor(by_test(shown, ratio, p_value, noise), interval, noise)
}

/// A claim of the test stands only when the whole 95% `interval` lies
/// beyond the noise floor on its side ([`floor::side`]); otherwise it is
/// no difference, and `true` says the floor held it back (also when no
/// interval could be formed).
fn through_floor(by_test: Verdict, interval: Option<(f64, f64)>, noise: f64) -> (Verdict, bool) {
    let want = match by_test {
        Verdict::Faster => Side::Above,
        Verdict::Slower => Side::Below,
        other => return (other, false),
    };
    match interval.map(|i| floor::side(i, noise)) {
        Some(side) if side == want => (by_test, false),
        _ => (Verdict::NoDifference, true),
    }
}

/// The test's own verdict: significant (p < [`ALPHA`]) with the point
/// estimate beyond the noise floor, before the interval is asked.
fn by_test(medians: Option<(f64, f64)>, ratio: f64, p_value: Option<f64>, noise: f64) -> Verdict {
    let Some((b, c)) = medians else {
        return Verdict::NoDifference;
    };
    let significant = p_value.is_some_and(|p| p < ALPHA);
    // With a zero baseline median any positive candidate is an unbounded
    // relative change, so the noise threshold is met.
    let beyond_noise = b == 0.0 || (ratio - 1.0).abs() >= noise;
    if !(significant && beyond_noise) || b == c {
        Verdict::NoDifference
    } else if c > b {
        Verdict::Faster
    } else {
        Verdict::Slower
    }
}

fn describe(c: &Comparison, who: &str, noise: f64, medians: Option<(f64, f64)>) -> String {
    let p = c
        .p_value
        .map(|p| match c.test {
            Test::MannWhitney => format_p(p),
            Test::Welch => format!("Welch t on all trials, {}", format_p(p)),
            Test::Runs => match c.runs {
                Some((a, b)) => format!("t on {a} against {b} runs, {}", format_p(p)),
                None => format_p(p),
            },
        })
        .unwrap_or_default();
    let zero_base = matches!(medians, Some((b, _)) if b == 0.0);
    match c.verdict {
        Verdict::NeedsMoreTrials { at_least } => {
            format!("needs at least {at_least} trials per system")
        }
        Verdict::NeedsMoreRuns { at_least, runs } => runs_too_few(at_least, runs),
        Verdict::NotComparable { ref reason } => format!("not comparable: {reason}"),
        Verdict::NoDifference if c.within_floor || c.p_value.is_some_and(|p| p < ALPHA) => {
            match c.ratio_ci {
                Some(ci) => format!("{} ({p})", floor::within_sentence(ci, noise)),
                None => format!("no claim: no interval of the change could be formed ({p})"),
            }
        }
        Verdict::NoDifference if c.detectable.is_some() => format!(
            "no significant difference ({p}{}): at this spread, these {} can only tell apart a change of {:.1}% or more",
            ci_note(c),
            if c.test == Test::Runs { "runs" } else { "trials" },
            c.detectable.unwrap_or(0.0) * 100.0
        ),
        Verdict::NoDifference => format!("no significant difference ({p}{})", ci_note(c)),
        Verdict::Faster if zero_base => {
            format!("{who} is faster: the baseline median is 0 ({p})")
        }
        Verdict::Faster => format!(
            "{who} is {:.1}% faster ({}{})",
            (c.ratio - 1.0) * 100.0,
            interval(c, 1.0, &p),
            named_test(c, &p)
        ),
        Verdict::Slower => format!(
            "{who} is {:.1}% slower ({}{})",
            (1.0 - c.ratio) * 100.0,
            interval(c, -1.0, &p),
            named_test(c, &p)
        ),
    }
}

/// `; CI -1.2..1.5%`: the interval beside a "no significant difference".
fn ci_note(c: &Comparison) -> String {
    c.ratio_ci.map_or(String::new(), |ci| {
        format!("; CI {}", floor::interval_text(ci))
    })
}

/// `1 run a side: this host's drift between runs is unknown (a verdict
/// between runs needs ≥3 runs a side)`.
pub fn runs_too_few(at_least: (usize, usize), runs: (usize, usize)) -> String {
    let count = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
    let have = if runs.0 == runs.1 {
        format!("{} a side", count(runs.0))
    } else {
        format!("{} against {}", count(runs.0), count(runs.1))
    };
    let need = if at_least.0 == at_least.1 {
        format!("≥{} runs a side", at_least.0)
    } else {
        format!(
            "≥{} baseline runs and ≥{} candidate run(s)",
            at_least.0, at_least.1
        )
    };
    format!("{have}: the drift between runs is unknown (a verdict between runs needs {need})")
}

/// `; t on 3 against 3 runs, p=0.004` after a CI between runs (or `;
/// Welch t on all trials, p=0.01`): the test is named where it is not the
/// rank test.
fn named_test(c: &Comparison, p: &str) -> String {
    match (c.test, c.ratio_ci) {
        (Test::Runs | Test::Welch, Some(_)) => format!("; {p}"),
        _ => String::new(),
    }
}

/// "95% CI 9.1..15.2%" of the speed-up (`sign` 1) or slow-down (`sign` -1),
/// or the p-value when there is no CI.
fn interval(c: &Comparison, sign: f64, p: &str) -> String {
    match c.ratio_ci {
        Some((lo, hi)) => {
            let (a, b) = if sign > 0.0 { (lo, hi) } else { (hi, lo) };
            format!(
                "95% CI {:.1}..{:.1}%",
                sign * (a - 1.0) * 100.0,
                sign * (b - 1.0) * 100.0
            )
        }
        None => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The noise floor the tests judge by (2%).
    const NOISE: f64 = 0.02;

    const A: [f64; 6] = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];

    fn scaled(f: f64) -> Vec<f64> {
        A.iter().map(|v| v * f).collect()
    }

    #[test]
    fn clearly_faster() {
        let c = compare(&A, &scaled(1.12), NOISE);
        assert_eq!(c.verdict, Verdict::Faster);
        assert!((c.ratio - 1.12).abs() < 1e-12);
        // Exact test, complete separation of 6 vs 6: 2 / C(12, 6) = 0.002165
        // (scipy 1.17.1 mannwhitneyu two-sided exact gives 0.0021645021645021645).
        assert!((c.p_value.unwrap() - 0.0021645021645021645).abs() < 1e-12);
        let (lo, hi) = c.ratio_ci.unwrap();
        assert!(lo < 1.12 && 1.12 < hi && lo > 1.0);
        assert!(
            c.sentence.starts_with("B is 12.0% faster (95% CI "),
            "{}",
            c.sentence
        );
        assert!(sentence_for(&c, "nginx-1.27").starts_with("nginx-1.27 is 12.0% faster"));
    }

    #[test]
    fn clearly_slower() {
        let c = compare(&A, &scaled(0.92), NOISE);
        assert_eq!(c.verdict, Verdict::Slower);
        assert!(
            c.sentence.starts_with("B is 8.0% slower (95% CI "),
            "{}",
            c.sentence
        );
        // Slow-down CI is ordered low..high.
        let (lo, hi) = c.ratio_ci.unwrap();
        let expected = format!(
            "95% CI {:.1}..{:.1}%",
            (1.0 - hi) * 100.0,
            (1.0 - lo) * 100.0
        );
        assert!(
            c.sentence.contains(&expected),
            "{} vs {expected}",
            c.sentence
        );
    }

    #[test]
    fn significant_but_within_noise_is_no_difference() {
        let base = [100.0, 100.1, 100.2, 100.3, 100.4, 100.5];
        let cand: Vec<f64> = base.iter().map(|v| v * 1.01).collect();
        let c = compare(&base, &cand, NOISE);
        assert!(c.p_value.unwrap() < ALPHA);
        assert_eq!(c.verdict, Verdict::NoDifference);
        // The point itself is under the floor: the test alone claims
        // nothing either, but the interval is shown.
        assert!(!c.within_floor);
        assert!(
            c.sentence
                .starts_with("within the 2% floor: CI 0.7..1.3% (p=0.002)"),
            "{}",
            c.sentence
        );
        // With no noise threshold the same data is a difference: the whole
        // interval is above 1.
        let none = compare(&base, &cand, 0.0);
        assert_eq!(none.verdict, Verdict::Faster);
        assert!(none.ratio_ci.unwrap().0 > 1.0);
    }

    /// Issue 47: the point estimate clears the floor and p < 0.05, but the
    /// interval reaches inside it: `~`, the interval shown.
    #[test]
    fn a_significant_change_whose_interval_reaches_inside_the_floor_is_no_difference() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2];
        let cand = [101.6, 103.8, 102.2, 104.5, 102.9, 101.2];
        let c = compare(&base, &cand, NOISE);
        assert!(c.p_value.unwrap() < ALPHA, "{c:?}");
        assert!(c.ratio - 1.0 > NOISE, "the point clears the floor: {c:?}");
        let (lo, hi) = c.ratio_ci.unwrap();
        assert!(lo < 1.0 + NOISE && hi > 1.0 + NOISE, "{lo} {hi}");
        assert_eq!(c.verdict, Verdict::NoDifference);
        assert!(c.within_floor);
        let shown = format!("within the 2% floor: CI {}", floor::interval_text((lo, hi)));
        assert!(c.sentence.starts_with(&shown), "{} vs {shown}", c.sentence);
        // A larger change on the same spread clears it.
        let far: Vec<f64> = cand.iter().map(|v| v * 1.04).collect();
        let c = compare(&base, &far, NOISE);
        assert_eq!((c.verdict, c.within_floor), (Verdict::Faster, false));
        assert!(c.ratio_ci.unwrap().0 > 1.0 + NOISE);
    }

    /// The A/A case between runs: +2.1%, CI 0.3..4.0%, p = 0.034
    /// on 3 against 3 runs was "faster"; its interval reaches inside the 2%
    /// floor, so it is `~` and says so.
    #[test]
    fn between_runs_a_claim_needs_its_interval_beyond_the_floor() {
        let base = [100.0, 100.9, 99.2];
        let cand = [102.5, 101.4, 103.3];
        let c = compare_run_values(&base, &cand, NOISE, (3, 3));
        assert!(c.p_value.unwrap() < ALPHA, "{c:?}");
        assert!(c.ratio - 1.0 >= NOISE, "{c:?}");
        assert_eq!(
            (c.verdict.clone(), c.within_floor),
            (Verdict::NoDifference, true)
        );
        let (lo, _) = c.ratio_ci.unwrap();
        assert!(lo > 1.0 && lo < 1.0 + NOISE, "{c:?}");
        assert!(
            c.sentence.starts_with("within the 2% floor: CI ")
                && c.sentence.contains("t on 3 against 3 runs, p="),
            "{}",
            c.sentence
        );
        // A 10% change at this drift clears it.
        let ten: Vec<f64> = base.iter().map(|v| v * 1.1).collect();
        let c = compare_run_values(&base, &ten, NOISE, (3, 3));
        assert_eq!((c.verdict, c.within_floor), (Verdict::Faster, false));
    }

    #[test]
    fn overlapping_samples_are_no_difference() {
        let b = [99.5, 101.5, 98.5, 100.2, 100.8, 99.0];
        let c = compare(&A, &b, NOISE);
        assert_eq!(c.verdict, Verdict::NoDifference);
        // scipy 1.17.1 mannwhitneyu(A, b, alternative='two-sided'): one tie
        // (99.0), so the normal approximation: U = 19.5, p = 0.8725590308923818.
        assert!((c.p_value.unwrap() - 0.8725590308923818).abs() < 1e-12);
        assert_eq!(
            c.sentence,
            "no significant difference (p=0.87; CI -2.0..1.7%)"
        );
        assert!(!c.within_floor);
    }

    #[test]
    fn two_versus_two_needs_three_trials() {
        // The rank test would need 4; Welch's t decides at 3.
        let c = compare(&[100.0, 101.0], &[200.0, 201.0], NOISE);
        assert_eq!(c.verdict, Verdict::NeedsMoreTrials { at_least: 3 });
        assert_eq!(c.sentence, "needs at least 3 trials per system");
        assert!((c.ratio - 200.5 / 100.5).abs() < 1e-12);
    }

    #[test]
    fn trials_needed_table() {
        assert_eq!(trials_needed(2, 2), Some(4));
        assert_eq!(trials_needed(3, 3), Some(4));
        assert_eq!(trials_needed(4, 4), None);
        // 2 / C(12, 2) = 0.030: ten against two can already tell.
        assert_eq!(trials_needed(10, 2), None);
        // 10 vs 1: 2 / 11 = 0.18; with 2 on the short side it can.
        assert_eq!(trials_needed(10, 1), Some(2));
        assert_eq!(trials_needed(0, 0), Some(4));
    }

    #[test]
    fn single_trials_and_empty_samples() {
        let c = compare(&[100.0], &[120.0], NOISE);
        assert_eq!(c.verdict, Verdict::NeedsMoreTrials { at_least: 3 });
        assert_eq!(c.ratio_ci, None);
        let e = compare(&[], &[1.0, 2.0], NOISE);
        assert_eq!(e.verdict, Verdict::NeedsMoreTrials { at_least: 3 });
        assert_eq!((e.ratio, e.p_value), (1.0, None));
    }

    #[test]
    fn all_equal_is_no_difference() {
        let c = compare(&[7.0; 5], &[7.0; 5], NOISE);
        assert_eq!(c.verdict, Verdict::NoDifference);
        assert_eq!(
            (c.ratio, c.p_value, c.ratio_ci),
            (1.0, Some(1.0), Some((1.0, 1.0)))
        );
    }

    #[test]
    fn zero_baseline_never_gives_nan() {
        // scipy 1.17.1: mannwhitneyu([0] * 5, [50, 51, 52, 53, 54]) (ties, so
        // asymptotic) p = 0.007494957516935239.
        let c = compare(&[0.0; 5], &[50.0, 51.0, 52.0, 53.0, 54.0], NOISE);
        assert_eq!(c.verdict, Verdict::Faster);
        assert_eq!((c.ratio, c.ratio_ci), (1.0, None));
        assert!(
            c.sentence.contains("baseline median is 0"),
            "{}",
            c.sentence
        );
        assert!((c.p_value.unwrap() - 0.007494957516935239).abs() < 1e-12);
        // The interval of a rise from a baseline of zeros is unbounded
        // above any floor; with one baseline trial above 0 none can be
        // formed (a resampled median could be 0), so nothing is claimed.
        assert_eq!(
            zero_baseline_interval(&[0.0; 3], &[1.0]),
            Some((f64::INFINITY, f64::INFINITY))
        );
        let c = compare(
            &[0.0, 0.0, 0.0, 5.0, 0.0],
            &[50.0, 51.0, 52.0, 53.0, 54.0],
            NOISE,
        );
        assert_eq!((c.verdict, c.within_floor), (Verdict::NoDifference, true));
        assert!(
            c.sentence.starts_with("no claim: no interval"),
            "{}",
            c.sentence
        );
    }

    #[test]
    fn failed_and_non_finite_values_are_left_out() {
        let noisy = [100.0, f64::NAN, 102.0, -1.0, 98.0, 101.0, 99.0, 100.5];
        assert_eq!(
            compare(&noisy, &scaled(1.12), NOISE),
            compare(&A, &scaled(1.12), NOISE)
        );
    }

    #[test]
    fn best_compares_bests_on_the_interval_of_the_means() {
        // Seed 003's case: the bests differ by 0.3%, the medians by -4.6%.
        let base = [153_190.0, 150_000.0, 149_000.0];
        let cand = [153_700.0, 143_100.0, 140_000.0];
        let c = compare_by(&base, &cand, NOISE, Headline::Best);
        assert!((c.ratio - 153_700.0 / 153_190.0).abs() < 1e-12);
        // The interval a best is judged on is Fieller's of the means.
        let means = welch_t(&base, &cand).unwrap().ratio_ci(ALPHA);
        assert!(means.is_some());
        assert_eq!(c.ratio_ci, means);
        let m = compare(&base, &cand, NOISE);
        assert!((m.ratio - 143_100.0 / 150_000.0).abs() < 1e-12);
    }

    #[test]
    fn best_of_three_is_judged_by_welch_on_all_trials() {
        // Seed 003's method: best of 3 against best of 3. The rank test
        // cannot decide 3 vs 3 (smallest p 0.1); Welch's t can.
        let base = [100_000.0, 100_400.0, 99_700.0];
        let clearly = [110_000.0, 110_300.0, 109_800.0];
        let c = compare_by(&base, &clearly, NOISE, Headline::Best);
        assert_eq!((c.verdict.clone(), c.test), (Verdict::Faster, Test::Welch));
        assert!(
            (c.ratio - 110_300.0 / 100_400.0).abs() < 1e-12,
            "the best is shown"
        );
        assert!(c.p_value.unwrap() < ALPHA);
        assert!(
            c.sentence.contains("Welch t on all trials"),
            "{}",
            c.sentence
        );
        // +1.5% under a few percent of spread: no difference, and the
        // sentence says how large a change 3 trials could have shown.
        let noisy = [100_000.0, 104_000.0, 96_000.0];
        let close = [101_500.0, 105_500.0, 97_500.0];
        let c = compare_by(&noisy, &close, NOISE, Headline::Best);
        assert_eq!(c.verdict, Verdict::NoDifference);
        let d = c.detectable.unwrap();
        assert!(d > 0.05 && d < 0.2, "{d}");
        assert!(
            c.sentence
                .contains(&format!("a change of {:.1}% or more", d * 100.0)),
            "{}",
            c.sentence
        );
        // Means and bests pointing apart are no difference, whatever p says.
        let split = [112_000.0, 90_000.0, 90_500.0];
        let c = compare_by(&base, &split, NOISE, Headline::Best);
        assert_eq!(c.verdict, Verdict::NoDifference, "{c:?}");
        // Two a side stay too few.
        let two = compare_by(&base[..2], &clearly[..2], NOISE, Headline::Best);
        assert_eq!(two.verdict, Verdict::NeedsMoreTrials { at_least: 3 });
    }

    #[test]
    fn a_median_of_three_is_judged_by_welch_too() {
        // bind-threads --quick: 3 ramps a side, median headline. The rank
        // test cannot decide 3 vs 3; Welch's t on all trials can.
        let base = [40_000.0, 41_000.0, 39_500.0];
        let faster = [52_000.0, 50_500.0, 53_000.0];
        let c = compare(&base, &faster, NOISE);
        assert_eq!((c.verdict.clone(), c.test), (Verdict::Faster, Test::Welch));
        assert!(
            (c.ratio - 52_000.0 / 40_000.0).abs() < 1e-12,
            "the median is shown"
        );
        // Judged by Welch's t, on Fieller's interval of the means.
        let fieller = welch_t(&base, &faster).unwrap().ratio_ci(ALPHA);
        assert_eq!(c.ratio_ci, fieller);
        assert!(c.ratio_ci.unwrap().0 > 1.0 + NOISE, "{c:?}");
        // Means and medians pointing apart are no difference.
        let split = [30_000.0, 41_500.0, 42_000.0];
        assert_eq!(compare(&base, &split, NOISE).verdict, Verdict::NoDifference);
        // With 4 a side the rank test decides again.
        let four = compare(&[1.0, 1.1, 0.9, 1.05], &[2.0, 2.1, 1.9, 2.05], NOISE);
        assert_eq!(four.test, Test::MannWhitney);
    }

    #[test]
    fn error_rate_threshold_is_a_tenth_of_a_percent() {
        assert!(!too_many_errors(0, 0));
        assert!(!too_many_errors(1, 999));
        assert!(too_many_errors(2, 998));
        assert!(too_many_errors(32_948, 4_000_000));
        let c = compare(&A, &scaled(1.03), NOISE).not_comparable("9 errors (9 timeouts)".into());
        assert_eq!(
            c.verdict,
            Verdict::NotComparable {
                reason: "9 errors (9 timeouts)".into()
            }
        );
        assert_eq!(c.sentence, "not comparable: 9 errors (9 timeouts)");
    }

    #[test]
    fn p_formatting() {
        assert_eq!(format_p(0.4123), "p=0.41");
        assert_eq!(format_p(0.0286), "p=0.029");
        assert_eq!(format_p(0.0004), "p<0.001");
    }
}
