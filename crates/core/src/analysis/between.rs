//! Between runs, the run is the unit.
//!
//! Trials inside one run share its conditions (the boot, the placement,
//! the page cache, the neighbours of that hour): on the project's 2-CPU VM
//! four trials of a run agree within a few percent while whole runs move
//! by ±15–25%. A test that counts trials then calls two identical runs
//! different (an A/A pair of quickstarts: 4 of 12 points "significant" at
//! p = 0.029). So between runs each run contributes one value, its
//! headline over its own trials, and the test is on those values:
//!
//! - Georges, Buytaert & Eeckhout, "Statistically Rigorous Java
//!   Performance Evaluation" (OOPSLA 2007): the invocation (our run), not
//!   the iteration (our trial), is the independent unit.
//! - Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time" (ISMM
//!   2013) and "Quantifying Performance Changes with Effect Size Confidence
//!   Intervals" (2012): a random effect per level; the variance of a run's
//!   mean is the between-run variance plus the within-run one over the
//!   trials, and the number of runs is chosen for the CI's width
//!   ([`runs_needed`]).
//!
//! The test is Student's two-sample t on the logarithms of the run
//! headlines with one pooled variance ([`pooled_log_t`]): one variance per
//! level, as in Kalibera & Jones's model, estimated from every run of both
//! sides, since both ran on the host whose drift it measures. On logs the
//! difference of the means is the log of the ratio of geometric means, so
//! the CI is of that ratio. With a single run on one side it is exactly
//! the prediction interval for one new run from the other side's runs
//! (the regression gate's question, [`pooled_log_t`] with `cand.len() ==
//! 1`). Statistical quantiles are statrs's.
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Fewest runs a side for a verdict between runs in `compare` and on the
/// N-run page: with fewer, one side's drift between runs is unknown. Three
/// a side leave the pooled variance 4 degrees of freedom.
pub const MIN_RUNS: usize = 3;

/// Student's t on the log run headlines of two sides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunTest {
    /// exp(mean ln cand − mean ln base): the ratio of the sides' geometric
    /// means of run headlines.
    pub ratio: f64,
    /// Standard error of ln(ratio).
    pub se: f64,
    /// Degrees of freedom of the pooled variance, n₁ + n₂ − 2.
    pub df: f64,
    /// ln(ratio) / se.
    pub t: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// One-sided p-value for "the candidate is slower": P(T ≤ t).
    pub p_slower: f64,
    /// Runs on each side (baseline, candidate).
    pub runs: (usize, usize),
}

/// Student's pooled two-sample t-test on the logs of `base` and `cand`,
/// each a side's run headlines (positive, finite; other values are left
/// out). `None` when a side has no run or no degree of freedom is left
/// (n₁ + n₂ < 3).
pub fn pooled_log_t(base: &[f64], cand: &[f64]) -> Option<RunTest> {
    let (a, b) = (logs(base), logs(cand));
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || n1 + n2 < 3 {
        return None;
    }
    let (ma, mb) = (mean(&a), mean(&b));
    let df = (n1 + n2 - 2) as f64;
    let pooled = (squares(&a, ma) + squares(&b, mb)) / df;
    let se = (pooled * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
    let diff = mb - ma;
    let (t, p_value, p_slower) = if se == 0.0 {
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        (t, p, if diff < 0.0 { 0.0 } else { 1.0 })
    } else {
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        let t = diff / se;
        let two = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
        (t, two, dist.cdf(t).clamp(0.0, 1.0))
    };
    Some(RunTest {
        ratio: diff.exp(),
        se,
        df,
        t,
        p_value,
        p_slower,
        runs: (n1, n2),
    })
}

impl RunTest {
    /// The 95% (1 − `alpha`) CI of the ratio: exp(ln ratio ± t(1 − α/2, df)
    /// · se).
    pub fn ratio_ci(&self, alpha: f64) -> Option<(f64, f64)> {
        let h = self.half_width(alpha)?;
        let l = self.ratio.ln();
        Some(((l - h).exp(), (l + h).exp()))
    }

    /// The smallest relative change (0.12 = 12%) these runs could call
    /// significant at `alpha`, two-sided: exp(t(1 − α/2, df) · se) − 1.
    pub fn detectable(&self, alpha: f64) -> Option<f64> {
        Some(self.half_width(alpha)?.exp() - 1.0)
    }

    fn half_width(&self, alpha: f64) -> Option<f64> {
        Some(super::student_t::quantile(1.0 - alpha / 2.0, self.df)? * self.se)
    }
}

/// The spread of a label's repeats at one point: the drift between runs
/// beside the spread inside them.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Drift {
    /// Runs with a headline at the point.
    pub runs: usize,
    /// Coefficient of variation of the run headlines (the standard
    /// deviation of their logs, which is the CV for small spreads).
    pub between_cv: f64,
    /// Pooled within-run CV of the trials (the standard deviation of the
    /// trials' logs about their run's mean, pooled over runs); `None` when
    /// no run has two trials.
    pub within_cv: Option<f64>,
}

/// The drift of `runs` (each run's successful trial values) at one
/// point, with `headline` each run's value; `None` with fewer than
/// [`MIN_RUNS`] runs that have one.
pub fn drift(runs: &[Vec<f64>], headline: impl Fn(&[f64]) -> Option<f64>) -> Option<Drift> {
    let heads: Vec<f64> = runs.iter().filter_map(|r| headline(r)).collect();
    let l = logs(&heads);
    if l.len() < MIN_RUNS {
        return None;
    }
    let between_cv = (squares(&l, mean(&l)) / (l.len() - 1) as f64).sqrt();
    let (mut ss, mut df) = (0.0, 0usize);
    for r in runs {
        let lr = logs(r);
        if lr.len() >= 2 {
            ss += squares(&lr, mean(&lr));
            df += lr.len() - 1;
        }
    }
    Some(Drift {
        runs: l.len(),
        between_cv,
        within_cv: (df > 0).then(|| (ss / df as f64).sqrt()),
    })
}

/// Most runs a side [`runs_needed`] searches.
pub const MAX_RUNS_PLANNED: usize = 50;

/// Runs a side for the 95% CI of the ratio between two sides to be no
/// wider than ±`change` (0.05 = 5%), at a between-run CV of `cv` (the run
/// headlines' spread, which already holds the within-run part over the
/// trials: Kalibera & Jones's variance of a run's mean). The smallest r
/// with t(0.975, 2r − 2) · cv · √(2/r) ≤ ln(1 + change); `None` past
/// [`MAX_RUNS_PLANNED`] or for a change that is not positive.
pub fn runs_needed(cv: f64, change: f64) -> Option<usize> {
    if !(change > 0.0 && cv.is_finite() && cv >= 0.0) {
        return None;
    }
    let target = (1.0 + change).ln();
    (2..=MAX_RUNS_PLANNED).find(|&r| {
        let df = (2 * r - 2) as f64;
        super::student_t::quantile(0.975, df)
            .is_some_and(|q| q * cv * (2.0 / r as f64).sqrt() <= target)
    })
}

/// The baseline runs in all that would let one candidate run be told
/// apart by `target` (0.05 = 5%), from what `n` baseline runs could tell
/// apart (`detectable`, [`RunTest::detectable`] of the prediction interval
/// for one new run): the runs' spread `s` is recovered from
/// `ln(1 + detectable) = t(0.975, n − 1) · s · √(1/n + 1)`, and the
/// smallest n′ with `t(0.975, n′ − 1) · s · √(1/n′ + 1) ≤ ln(1 + target)`
/// is returned. `None` when no count up to [`MAX_RUNS_PLANNED`] does: with
/// one candidate run its own drift stays in the interval however many
/// baseline runs there are, so only repeating the candidate narrows it.
pub fn baseline_runs_to_resolve(detectable: f64, n: usize, target: f64) -> Option<usize> {
    if n < 2 || !(detectable > 0.0 && target > 0.0) {
        return None;
    }
    let width = |runs: usize| -> Option<f64> {
        let df = (runs - 1) as f64;
        Some(super::student_t::quantile(0.975, df)? * (1.0 / runs as f64 + 1.0).sqrt())
    };
    let s = (1.0 + detectable).ln() / width(n)?;
    (n..=MAX_RUNS_PLANNED).find(|&r| width(r).is_some_and(|w| w * s <= (1.0 + target).ln()))
}

/// Holm's step-down procedure (Holm, "A Simple Sequentially Rejective
/// Multiple Test Procedure", Scand. J. Statistics 6, 1979): which of the
/// hypotheses with these p-values are rejected at family-wise level
/// `alpha`. The i-th smallest p is compared with α / (m − i); the first
/// that fails stops the rejections.
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut out = vec![false; m];
    for (rank, &i) in order.iter().enumerate() {
        if p_values[i] <= alpha / (m - rank) as f64 {
            out[i] = true;
        } else {
            break;
        }
    }
    out
}

fn logs(values: &[f64]) -> Vec<f64> {
    values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(f64::ln)
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn squares(v: &[f64], m: f64) -> f64 {
    v.iter().map(|x| (x - m).powi(2)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_t_on_logs_agrees_with_scipy() {
        // scipy 1.17.1: ttest_ind(log(b), log(a)) (equal_var=True) for
        // a = [100, 110, 95], b = [80, 85, 78]: t = -4.5254634584725935,
        // p = 0.010613988302449478.
        let (a, b) = ([100.0, 110.0, 95.0], [80.0, 85.0, 78.0]);
        let r = pooled_log_t(&a, &b).unwrap();
        assert!((r.t - -4.5254634584725935).abs() < 1e-9, "{r:?}");
        assert!((r.p_value - 0.010613988302449478).abs() < 1e-9, "{r:?}");
        assert_eq!(r.df, 4.0);
        assert!((r.p_value - 2.0 * r.p_slower).abs() < 1e-12, "{r:?}");
        let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
        assert!((r.ratio - geo(&b) / geo(&a)).abs() < 1e-12);
        let (lo, hi) = r.ratio_ci(0.05).unwrap();
        assert!(lo < r.ratio && r.ratio < hi && hi < 1.0, "{lo} {hi}");
    }

    #[test]
    fn with_two_degrees_of_freedom_the_p_value_has_a_closed_form() {
        // Student's t with df = 2: F(t) = 1/2 + t / (2 sqrt(2 + t²)).
        // Three baseline runs against one candidate run: df = 2, the
        // prediction interval for one new run.
        let r = pooled_log_t(&[100.0, 104.0, 97.0], &[90.0]).unwrap();
        assert_eq!((r.df, r.runs), (2.0, (3, 1)));
        let t = r.t;
        let cdf = 0.5 + t / (2.0 * (2.0 + t * t).sqrt());
        assert!((r.p_slower - cdf).abs() < 1e-9, "{r:?}");
        // se = s · sqrt(1 + 1/3): the prediction interval's width.
        let l: Vec<f64> = [100.0f64, 104.0, 97.0].iter().map(|v| v.ln()).collect();
        let s = (squares(&l, mean(&l)) / 2.0).sqrt();
        assert!((r.se - s * (4.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn identical_runs_and_too_few_runs() {
        let r = pooled_log_t(&[5.0, 5.0], &[5.0]).unwrap();
        assert_eq!((r.p_value, r.ratio), (1.0, 1.0));
        let r = pooled_log_t(&[5.0, 5.0], &[4.0]).unwrap();
        assert_eq!((r.p_value, r.p_slower), (0.0, 0.0));
        assert!(pooled_log_t(&[5.0], &[4.0]).is_none());
        assert!(pooled_log_t(&[], &[4.0, 5.0, 6.0]).is_none());
        // Non-positive and non-finite run values are left out.
        assert!(pooled_log_t(&[5.0, 0.0, f64::NAN], &[4.0]).is_none());
    }

    #[test]
    fn drift_separates_the_spread_between_runs_from_the_spread_inside() {
        // Three runs whose trials agree within 1% but whose levels differ
        // by 20%: the seeds' case on one VM.
        let runs = vec![
            vec![100.0, 101.0, 99.0, 100.5],
            vec![120.0, 121.0, 119.0, 120.5],
            vec![90.0, 91.0, 89.0, 90.5],
        ];
        let med = |v: &[f64]| crate::analysis::summary::median(v);
        let d = drift(&runs, med).unwrap();
        assert_eq!(d.runs, 3);
        assert!(d.between_cv > 0.1 && d.between_cv < 0.2, "{d:?}");
        assert!(d.within_cv.unwrap() < 0.01, "{d:?}");
        assert!(drift(&runs[..2], med).is_none());
    }

    #[test]
    fn runs_needed_follows_the_ci_width() {
        // No drift: two runs a side already suffice (the CI has width 0).
        assert_eq!(runs_needed(0.0, 0.05), Some(2));
        // cv 2%, change 5%: r = 3 gives t(0.975, 4) = 2.776 · 0.02 ·
        // sqrt(2/3) = 0.0453 ≤ ln 1.05 = 0.0488; r = 2 gives 4.303 ·
        // 0.02 = 0.086 > 0.0488.
        assert_eq!(runs_needed(0.02, 0.05), Some(3));
        // More drift, more runs; too much is past the plan.
        let ten = runs_needed(0.10, 0.05).unwrap();
        assert!(ten > 10 && ten < 40, "{ten}");
        assert_eq!(runs_needed(1.0, 0.01), None);
        assert_eq!(runs_needed(0.1, 0.0), None);
    }

    #[test]
    fn holm_steps_down_and_stops_at_the_first_failure() {
        // m = 4: 0.01 ≤ 0.05/4, 0.015 ≤ 0.05/3, 0.03 > 0.05/2 stops.
        assert_eq!(
            holm(&[0.03, 0.01, 0.5, 0.015], 0.05),
            vec![false, true, false, true]
        );
        assert_eq!(holm(&[0.2, 0.3], 0.05), vec![false, false]);
        assert!(holm(&[], 0.05).is_empty());
    }

    /// From 3 baseline runs that told apart 8%, more runs resolve 5%; a
    /// spread so wide that one candidate run's own drift exceeds 5% has no
    /// count that would.
    #[test]
    fn more_baseline_runs_resolve_a_smaller_change_until_the_candidates_own_drift() {
        let more = baseline_runs_to_resolve(0.08, 3, 0.05).unwrap();
        assert!(more > 3, "{more}");
        let df = (more - 1) as f64;
        let s = 1.08f64.ln()
            / (super::super::student_t::quantile(0.975, 2.0).unwrap() * (4.0f64 / 3.0).sqrt());
        let w = super::super::student_t::quantile(0.975, df).unwrap()
            * (1.0 / more as f64 + 1.0).sqrt();
        assert!(w * s <= 1.05f64.ln());
        assert_eq!(
            baseline_runs_to_resolve(0.5, 3, 0.05),
            None,
            "s ≈ 0.08: 1.96 s > ln 1.05"
        );
        assert_eq!(
            baseline_runs_to_resolve(0.04, 3, 0.05),
            Some(3),
            "already resolved"
        );
    }
}
