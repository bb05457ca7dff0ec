//! The two-sided Mann-Whitney U (Wilcoxon rank-sum) test.
//!
//! The method follows `scipy.stats.mannwhitneyu(x, y,
//! alternative='two-sided', method='auto')` (SciPy 1.7 and later, which
//! cites Mann & Whitney 1947 and the normal approximation with tie
//! correction from Wikipedia's "Mann-Whitney U test"):
//!
//! - U1 = R1 - n1 (n1 + 1) / 2 from average ranks; U = max(U1, n1 n2 - U1).
//! - Exact: without ties and when either sample has at most 8 values,
//!   p = 2 P(U' >= U) under the exact null distribution of U'.
//! - Otherwise the normal approximation with tie and continuity
//!   corrections: z = (U - n1 n2 / 2 - 0.5) / s,
//!   s = sqrt(n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1)))),
//!   p = 2 (1 - Phi(z)).
//!
//! p is clipped to [0, 1].
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// Which p-value computation was used (scipy's `method='auto'` rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The exact null distribution of U: no ties, and the smaller sample has at most 8 values.
    Exact,
    /// The normal approximation with tie and continuity corrections.
    Asymptotic,
}

/// The result of [`mann_whitney_u`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample (scipy's `statistic`).
    pub u1: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: Method,
}

/// Largest sample size of the smaller sample for which the exact test is used
/// (scipy's `method='auto'` rule).
const EXACT_MAX_SMALLER: usize = 8;

/// Two-sided Mann-Whitney U test of finite samples; `None` when either is
/// empty or holds a non-finite value.
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let (rank_sum_x, tie_sizes) = rank_sum_of_first(x, y);
    let u1 = rank_sum_x - (n1 * (n1 + 1)) as f64 / 2.0;
    let u = u1.max((n1 * n2) as f64 - u1);
    let ties = tie_sizes.iter().any(|&t| t > 1);
    let exact = !ties && n1.min(n2) <= EXACT_MAX_SMALLER;
    let exact_p = if exact {
        exact_upper_tail(n1, n2, u.round() as usize)
    } else {
        None
    };
    let (p, method) = match exact_p {
        Some(tail) => (2.0 * tail, Method::Exact),
        None => (
            2.0 * normal_upper_tail(u, n1, n2, &tie_sizes),
            Method::Asymptotic,
        ),
    };
    Some(MannWhitney {
        u1,
        p_value: p.clamp(0.0, 1.0),
        method,
    })
}

/// The smallest two-sided p-value the exact test can give for these sample
/// sizes (all of one sample above all of the other): 2 / C(n1 + n2, n1).
pub fn min_exact_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let ln_c = statrs::function::factorial::ln_binomial((n1 + n2) as u64, n1 as u64);
    (2.0 * (-ln_c).exp()).min(1.0)
}

/// Sum of the average ranks of `x` in the pooled sample, and the sizes of
/// the groups of tied values.
fn rank_sum_of_first(x: &[f64], y: &[f64]) -> (f64, Vec<usize>) {
    let mut pooled: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut ties = Vec::new();
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start + 1;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        // Ranks start+1 ..= end share their average.
        let average = (start + 1 + end) as f64 / 2.0;
        let from_x = pooled[start..end].iter().filter(|p| p.1).count();
        rank_sum += average * from_x as f64;
        ties.push(end - start);
        start = end;
    }
    (rank_sum, ties)
}

/// P(U' >= u) under the exact null distribution, or `None` when the counts
/// would not fit in 128-bit integers (then the normal approximation is
/// used).
fn exact_upper_tail(n1: usize, n2: usize, u: usize) -> Option<f64> {
    let counts = u_counts(n1.min(n2), n1.max(n2))?;
    let total: i128 = counts.iter().sum();
    let upper: i128 = counts.iter().skip(u).sum();
    Some(upper as f64 / total as f64)
}

/// Number of arrangements giving each value of U for samples of sizes m and
/// n: the coefficients of the Gaussian binomial [m + n choose m]_q, built as
/// prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i) (Andrews, "The Theory of
/// Partitions", 1976, Thm 3.1). Every division is exact.
fn u_counts(m: usize, n: usize) -> Option<Vec<i128>> {
    // Keep C(m + n, m) well below i128::MAX (1.7e38); intermediate values
    // are at most twice the final ones.
    let ln_total = statrs::function::factorial::ln_binomial((m + n) as u64, m as u64);
    if ln_total > 36.0 * std::f64::consts::LN_10 {
        return None;
    }
    let mut c = vec![0i128; m * n + m + 1];
    c[0] = 1;
    let mut degree = 0;
    for i in 1..=m {
        let a = n + i;
        for k in (a..=degree + a).rev() {
            c[k] -= c[k - a];
        }
        degree += a;
        for k in i..=degree {
            c[k] += c[k - i];
        }
        degree -= i;
    }
    c.truncate(m * n + 1);
    Some(c)
}

/// P(Z >= z) for the tie- and continuity-corrected z of U.
fn normal_upper_tail(u: f64, n1: usize, n2: usize, tie_sizes: &[usize]) -> f64 {
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let tie_term: f64 = tie_sizes
        .iter()
        .map(|&t| (t as f64).powi(3) - t as f64)
        .sum();
    let variance = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance.is_nan() || variance <= 0.0 {
        // Every value tied (or a single pooled value): no evidence at all.
        return 0.5;
    }
    let z = (u - n1f * n2f / 2.0 - 0.5) / variance.sqrt();
    match Normal::new(0.0, 1.0) {
        Ok(std_normal) => 1.0 - std_normal.cdf(z),
        Err(_) => 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_p(x: &[f64], y: &[f64], expected: f64, method: Method) {
        let r = mann_whitney_u(x, y).unwrap();
        assert_eq!(r.method, method, "{x:?} vs {y:?}");
        assert!(
            (r.p_value - expected).abs() <= 1e-9 * expected.max(1e-300) + 1e-15,
            "{x:?} vs {y:?}: p = {} expected {expected}",
            r.p_value
        );
    }

    // Every expected value below is from scipy 1.17.1:
    // scipy.stats.mannwhitneyu(x, y, alternative='two-sided', method='auto')
    // (which picked the method named in each assertion).

    #[test]
    fn exact_small_samples() {
        assert_p(&[1.0, 2.0], &[3.0, 4.0], 0.3333333333333333, Method::Exact);
        assert_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.1, Method::Exact);
        assert_p(
            &[1.0, 2.0, 3.0, 4.0],
            &[5.0, 6.0, 7.0, 8.0],
            0.02857142857142857,
            Method::Exact,
        );
        assert_p(
            &[1.1, 3.4, 2.2, 5.9, 4.0],
            &[6.3, 2.9, 7.7, 8.1, 5.0, 9.2],
            0.05194805194805195,
            Method::Exact,
        );
        // Interleaved, U = n1 n2 / 2: p clipped to 1.
        assert_p(&[1.0, 4.0], &[2.0, 3.0], 1.0, Method::Exact);
    }

    #[test]
    fn exact_with_one_large_sample() {
        let x: Vec<f64> = (0..5).map(|i| i as f64 * 3.0 + 0.5).collect();
        let y: Vec<f64> = (0..40).map(|i| i as f64).collect();
        assert_p(&x, &y, 0.016291265298639092, Method::Exact);
    }

    #[test]
    fn asymptotic_with_ties() {
        assert_p(
            &[1.0, 1.0, 1.0],
            &[2.0, 2.0, 2.0],
            0.04685417760387376,
            Method::Asymptotic,
        );
        assert_p(
            &[10.0, 12.0, 12.0, 13.0, 15.0],
            &[12.0, 14.0, 16.0, 16.0, 18.0],
            0.08968602177036457,
            Method::Asymptotic,
        );
    }

    #[test]
    fn asymptotic_large_samples() {
        let x: Vec<f64> = (0..12).map(|i| 100.0 + i as f64 * 1.7).collect();
        let y: Vec<f64> = (0..10).map(|i| 105.0 + i as f64 * 2.3).collect();
        assert_p(&x, &y, 0.0647780463311646, Method::Asymptotic);
    }

    #[test]
    fn all_tied_gives_p_one() {
        assert_p(&[5.0, 5.0], &[5.0, 5.0, 5.0], 1.0, Method::Asymptotic);
    }

    #[test]
    fn u1_is_scipys_statistic() {
        let r = mann_whitney_u(&[1.0, 5.0, 6.0], &[2.0, 3.0, 4.0, 7.0]).unwrap();
        // Ranks of x: 1, 5, 6 -> R1 = 12, U1 = 12 - 6 = 6.
        assert_eq!(r.u1, 6.0);
    }

    #[test]
    fn empty_or_non_finite_is_none() {
        assert_eq!(mann_whitney_u(&[], &[1.0]), None);
        assert_eq!(mann_whitney_u(&[f64::NAN], &[1.0]), None);
    }

    #[test]
    fn u_counts_are_the_gaussian_binomial() {
        // [4 choose 2]_q = 1 + q + 2q^2 + q^3 + q^4.
        assert_eq!(u_counts(2, 2).unwrap(), vec![1, 1, 2, 1, 1]);
        let c = u_counts(3, 5).unwrap();
        assert_eq!(c.iter().sum::<i128>(), 56); // C(8, 3)
        assert_eq!(c.len(), 16);
        assert_eq!(c, c.iter().rev().copied().collect::<Vec<_>>()); // symmetric
    }

    #[test]
    fn min_exact_p_values() {
        assert!((min_exact_p(2, 2) - 1.0 / 3.0).abs() < 1e-12);
        assert!((min_exact_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((min_exact_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        assert_eq!(min_exact_p(0, 4), 1.0);
    }
}
