//! Per-point summaries: location, spread, a distribution-free confidence
//! interval of the median, and outlier flags.
//!
//! Methods:
//! - CI of the median from order statistics: the interval
//!   `[x(k), x(n-k+1)]` covers the population median with probability
//!   `1 - 2 P(B <= k-1)`, `B ~ Binomial(n, 1/2)`, whatever the distribution
//!   (Conover, "Practical Nonparametric Statistics", 3rd ed., 1999, §3.2;
//!   Hahn & Meeker, "Statistical Intervals", 1991, §5.2). We take the
//!   narrowest such symmetric pair with coverage >= 95%. For n < 6 even
//!   `[min, max]` covers only `1 - 2/2^n <= 93.75%`, so there is no CI.
//! - Outliers: the modified z-score `M = 0.6745 (x - median) / MAD`,
//!   flagged when `|M| > 3.5` (Iglewicz & Hoaglin, "How to Detect and Handle
//!   Outliers", 1993). Outliers are flagged, never dropped.
use serde::{Deserialize, Serialize};

/// Which statistic a point's headline number is.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    /// The median of the trials (the default): robust to one bad trial.
    #[default]
    Median,
    /// Best of N, as seed 003 does ("three runs, keep the highest").
    Best,
}

impl Headline {
    /// The word used in experiment files and the store: `median` or `best`.
    pub fn as_str(self) -> &'static str {
        match self {
            Headline::Median => "median",
            Headline::Best => "best",
        }
    }

    /// The statistic of `values`: their median, or the best (largest);
    /// `None` without a value. The one definition every view and verdict
    /// uses.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        match self {
            Headline::Median => median(values),
            Headline::Best => values.iter().copied().reduce(f64::max),
        }
    }

    /// Reads [`Headline::as_str`]'s words back.
    pub fn parse(word: &str) -> Option<Headline> {
        match word {
            "median" => Some(Headline::Median),
            "best" => Some(Headline::Best),
            _ => None,
        }
    }
}

/// The summary of one point's trial values (throughputs, in their own unit); made by
/// [`summarize`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// Finite values summarised.
    pub n: usize,
    /// The median (the mean of the two middle values for an even n).
    pub median: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub stdev: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// Distribution-free 95% CI of the median from order statistics; `None`
    /// when n is too small for any pair of order statistics to reach 95%.
    pub median_ci: Option<(f64, f64)>,
    /// Indices (into the input) flagged by the MAD modified z-score > 3.5.
    pub outliers: Vec<usize>,
    /// The headline value (median or best).
    pub headline: f64,
    /// Plain-words caveats ("1 trial: no spread", ...).
    pub notes: Vec<String>,
}

/// Confidence level of [`median_ci`].
pub const CI_LEVEL: f64 = 0.95;
/// The smallest sample with a 95% order-statistic CI of the median.
pub const MIN_N_FOR_CI: usize = 6;
/// Iglewicz & Hoaglin's cut-off for the modified z-score.
pub const OUTLIER_Z: f64 = 3.5;

/// Summarises the finite values; non-finite ones (NaN, inf) are left out
/// with a note, and their indices are never reported as outliers. `None`
/// when no finite value remains.
///
/// `stdev` is the sample standard deviation (n - 1), and 0 for one value.
pub fn summarize(values: &[f64], headline: Headline) -> Option<Summary> {
    let kept: Vec<(usize, f64)> = values
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .collect();
    if kept.is_empty() {
        return None;
    }
    let finite: Vec<f64> = kept.iter().map(|&(_, v)| v).collect();
    let mut sorted = finite.clone();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = median_of_sorted(&sorted);
    let mean = running_mean(&finite);
    let min = sorted[0];
    let max = sorted[n - 1];
    let outliers: Vec<usize> = outlier_positions(&finite, median)
        .into_iter()
        .map(|i| kept[i].0)
        .collect();

    let mut notes = Vec::new();
    let rejected = values.len() - n;
    if rejected > 0 {
        notes.push(format!(
            "{rejected} non-finite value(s) (NaN or infinite) left out"
        ));
    }
    if n == 1 {
        notes.push("1 trial: no spread and no confidence interval".into());
    } else if n < MIN_N_FOR_CI {
        notes.push(format!(
            "{n} trials: a 95% confidence interval of the median needs at least {MIN_N_FOR_CI}"
        ));
    }
    if n > 1 && min == max {
        notes.push(format!("all {n} values are equal"));
    }
    if !outliers.is_empty() {
        notes.push(format!(
            "{} value(s) look like outliers (modified z-score above {OUTLIER_Z}); kept",
            outliers.len()
        ));
    }

    Some(Summary {
        n,
        median,
        mean,
        stdev: sample_stdev(&finite, mean),
        min,
        max,
        median_ci: median_ci(&sorted),
        outliers,
        headline: match headline {
            Headline::Median => median,
            Headline::Best => max,
        },
        notes,
    })
}

/// The values a geometric mean is taken over: the finite, positive ones
/// (zero, a negative or a non-finite value has no logarithm to average).
/// Every geometric mean in scalelab filters its input here, so none of
/// them disagrees with another on a zero.
pub fn positive_finite(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// The geometric mean of the [`positive_finite`] values, `exp(mean(ln x))`:
/// the mean of ratios that is the same whichever side is the base
/// (Fleming & Wallace, "How not to lie with statistics: the correct way to
/// summarize benchmark results", CACM 29(3), 1986). `None` without such a
/// value; one value is itself, exactly (no round trip through `ln`).
pub fn geometric_mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    match positive_finite(values).as_slice() {
        [] => None,
        [one] => Some(*one),
        many => Some((many.iter().map(|v| v.ln()).sum::<f64>() / many.len() as f64).exp()),
    }
}

/// The median of finite values (`None` when empty). Order of the input does
/// not matter.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(median_of_sorted(&sorted))
}

/// The median of an ascending, non-empty slice.
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        // Written this way it cannot overflow for huge values.
        sorted[n / 2 - 1] + (sorted[n / 2] - sorted[n / 2 - 1]) / 2.0
    }
}

/// The 1-based ranks `(k, n - k + 1)` of the narrowest symmetric pair of
/// order statistics covering the median with probability >= 95%, and that
/// coverage. `None` for n < 6.
pub fn median_ci_ranks(n: usize) -> Option<(usize, usize, f64)> {
    let mut best = None;
    // P(B <= k - 1) accumulated term by term: C(n, i) / 2^n in log space so
    // large n neither overflows nor underflows.
    let mut tail = 0.0;
    for k in 1..=n / 2 {
        tail += binomial_half_pmf(n, k - 1);
        let coverage = 1.0 - 2.0 * tail;
        if coverage < CI_LEVEL {
            break;
        }
        best = Some((k, n - k + 1, coverage));
    }
    best
}

/// The distribution-free 95% CI of the median of an ascending slice.
pub fn median_ci(sorted: &[f64]) -> Option<(f64, f64)> {
    let (lo, hi, _) = median_ci_ranks(sorted.len())?;
    Some((sorted[lo - 1], sorted[hi - 1]))
}

/// C(n, i) / 2^n.
fn binomial_half_pmf(n: usize, i: usize) -> f64 {
    use statrs::function::factorial::ln_binomial;
    (ln_binomial(n as u64, i as u64) - n as f64 * std::f64::consts::LN_2).exp()
}

/// The mean updated value by value, so huge values cannot overflow the sum.
fn running_mean(values: &[f64]) -> f64 {
    values
        .iter()
        .enumerate()
        .fold(0.0, |mean, (i, v)| mean + (v - mean) / (i + 1) as f64)
}

fn sample_stdev(values: &[f64], mean: f64) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    (ss / (values.len() - 1) as f64).sqrt()
}

/// Positions (into `values`) whose modified z-score exceeds 3.5.
///
/// When the MAD is 0 (more than half the values are identical) the score
/// is undefined; as IBM SPSS and Iglewicz & Hoaglin's follow-up practice
/// do, we then scale by the mean absolute deviation instead:
/// `M = (x - median) / (1.253314 * MeanAD)`. When that is 0 too, all values
/// are equal and none is an outlier.
pub fn outlier_positions(values: &[f64], median: f64) -> Vec<usize> {
    let deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    let mad = self::median(&deviations).unwrap_or(0.0);
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * deviations.iter().sum::<f64>() / deviations.len().max(1) as f64
    };
    if scale <= 0.0 || !scale.is_finite() {
        return Vec::new();
    }
    deviations
        .iter()
        .enumerate()
        .filter(|(_, d)| **d / scale > OUTLIER_Z)
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_geometric_mean_averages_only_finite_positive_values() {
        // (2 · 8)^(1/2) = 4; zero, a negative, NaN and infinity are left out.
        let g = geometric_mean([2.0, 0.0, -3.0, 8.0, f64::NAN, f64::INFINITY]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "{g}");
        assert_eq!(geometric_mean([0.0, -1.0]), None);
        assert_eq!(geometric_mean([]), None);
        // One value is itself, bit for bit.
        assert_eq!(geometric_mean([0.1 + 0.2]), Some(0.1 + 0.2));
        // The mean of ratios is the same whichever side is the base.
        let up = geometric_mean([1.25, 0.8, 2.0]).unwrap();
        let down = geometric_mean([0.8, 1.25, 0.5]).unwrap();
        assert!((up * down - 1.0).abs() < 1e-12);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn basic_statistics_match_r() {
        // R 4.x: x <- c(2, 4, 4, 4, 5, 5, 7, 9); median(x) = 4.5,
        // mean(x) = 5, sd(x) = 2.13809 (sample sd, n - 1).
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = summarize(&x, Headline::Median).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.median, 4.5);
        assert_eq!(s.mean, 5.0);
        assert!(close(s.stdev, 2.138090, 1e-6), "{}", s.stdev);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert_eq!(s.headline, 4.5);
        let best = summarize(&x, Headline::Best).unwrap();
        assert_eq!(best.headline, 9.0);
    }

    #[test]
    fn ci_ranks_match_the_binomial_table() {
        // Ranks and coverage 1 - 2 * binom.cdf(k - 1, n, 0.5) computed with
        // scipy 1.17.1 scipy.stats.binom; the same ranks as the classic table
        // of order-statistic CIs for the median (Conover 1999, Table A3):
        // n=6 (1,6) 0.96875, n=9 (2,8) 0.9609375, n=10 (2,9) 0.978515625,
        // n=12 (3,10) 0.96142578125, n=20 (6,15) 0.95861053, n=100 (40,61)
        // 0.96479980.
        let table = [
            (6, 1, 6, 0.96875),
            (7, 1, 7, 0.984375),
            (8, 1, 8, 0.9921875),
            (9, 2, 8, 0.9609375),
            (10, 2, 9, 0.978515625),
            (12, 3, 10, 0.96142578125),
            (15, 4, 12, 0.96484375),
            (20, 6, 15, 0.9586105346679688),
            (30, 10, 21, 0.9572260547429323),
            (100, 40, 61, 0.9647997997822951),
        ];
        for (n, lo, hi, cov) in table {
            let (l, h, c) = median_ci_ranks(n).unwrap();
            assert_eq!((l, h), (lo, hi), "n={n}");
            assert!(close(c, cov, 1e-9), "n={n}: {c} vs {cov}");
        }
        for n in 0..6 {
            assert_eq!(median_ci_ranks(n), None, "n={n}");
        }
    }

    #[test]
    fn ci_uses_the_order_statistics() {
        let x = [10.0, 3.0, 7.0, 1.0, 9.0, 2.0, 8.0, 4.0, 6.0, 5.0];
        let s = summarize(&x, Headline::Median).unwrap();
        // n = 10: ranks (2, 9) of 1..10.
        assert_eq!(s.median_ci, Some((2.0, 9.0)));
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }

    #[test]
    fn small_samples_have_no_ci_and_say_so() {
        let s = summarize(&[1.0, 2.0, 3.0], Headline::Median).unwrap();
        assert_eq!(s.median_ci, None);
        assert!(
            s.notes.iter().any(|n| n.contains("at least 6")),
            "{:?}",
            s.notes
        );
    }

    #[test]
    fn single_value() {
        let s = summarize(&[42.0], Headline::Median).unwrap();
        assert_eq!((s.n, s.median, s.mean, s.stdev), (1, 42.0, 42.0, 0.0));
        assert_eq!(s.median_ci, None);
        assert!(s.outliers.is_empty());
        assert!(s.notes[0].contains("1 trial"));
    }

    #[test]
    fn empty_and_all_non_finite_give_none() {
        assert_eq!(summarize(&[], Headline::Median), None);
        assert_eq!(
            summarize(&[f64::NAN, f64::INFINITY], Headline::Median),
            None
        );
    }

    #[test]
    fn non_finite_values_are_left_out_with_a_note() {
        let s = summarize(&[1.0, f64::NAN, 3.0, f64::NEG_INFINITY], Headline::Median).unwrap();
        assert_eq!((s.n, s.median), (2, 2.0));
        assert!(s.notes[0].contains("2 non-finite"), "{:?}", s.notes);
    }

    #[test]
    fn all_equal_values() {
        let s = summarize(&[5.0; 7], Headline::Median).unwrap();
        assert_eq!(
            (s.median, s.stdev, s.median_ci),
            (5.0, 0.0, Some((5.0, 5.0)))
        );
        assert!(s.outliers.is_empty());
        assert!(s.notes.iter().any(|n| n.contains("all 7 values are equal")));
    }

    #[test]
    fn outliers_are_flagged_by_input_index_and_kept() {
        // median 100, |dev| = [0,1,1,2,2,0,100] -> MAD = 1, M(200) = 67.45.
        let x = [100.0, 101.0, 99.0, 102.0, 98.0, 100.0, 200.0];
        let s = summarize(&x, Headline::Median).unwrap();
        assert_eq!(s.outliers, vec![6]);
        assert_eq!(s.n, 7);
        assert_eq!(s.max, 200.0);
        // 0.6745 * 4 / 1 = 2.698 < 3.5: a value 4 MADs out is not flagged.
        let y = [100.0, 101.0, 99.0, 102.0, 98.0, 100.0, 104.0];
        assert!(summarize(&y, Headline::Median).unwrap().outliers.is_empty());
    }

    #[test]
    fn outlier_index_skips_non_finite_inputs() {
        let x = [f64::NAN, 100.0, 101.0, 99.0, 100.0, 500.0];
        let s = summarize(&x, Headline::Median).unwrap();
        assert_eq!(s.outliers, vec![5]);
    }

    #[test]
    fn zero_mad_falls_back_to_mean_absolute_deviation() {
        // median 10, MAD 0; MeanAD = 1/5 = 0.2, M(11) = 1 / (1.253314 * 0.2) = 3.99.
        let s = summarize(&[10.0, 10.0, 10.0, 10.0, 11.0], Headline::Median).unwrap();
        assert_eq!(s.outliers, vec![4]);
        // MeanAD = 1/4, M = 1 / (1.253314 * 0.25) = 3.19: not flagged.
        let t = summarize(&[10.0, 10.0, 10.0, 11.0], Headline::Median).unwrap();
        assert!(t.outliers.is_empty());
        assert!(s.stdev.is_finite() && t.stdev.is_finite());
    }

    #[test]
    fn median_and_mean_of_huge_values_do_not_overflow() {
        assert_eq!(median(&[f64::MAX, f64::MAX]), Some(f64::MAX));
        let s = summarize(&[f64::MAX; 3], Headline::Median).unwrap();
        assert_eq!((s.mean, s.stdev), (f64::MAX, 0.0));
    }
}
