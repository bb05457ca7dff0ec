//! Welch's unequal-variances t-test (Welch, "The generalization of
//! 'Student's' problem when several different population variances are
//! involved", Biometrika 34, 1947), two-sided, as
//! `scipy.stats.ttest_ind(x, y, equal_var=False)` computes it:
//!
//! - t = (mean(y) − mean(x)) / se, se = √(s²ₓ/nₓ + s²ᵧ/nᵧ), s² the
//!   unbiased sample variance;
//! - ν = se⁴ / ((s²ₓ/nₓ)²/(nₓ−1) + (s²ᵧ/nᵧ)²/(nᵧ−1)) (Welch–Satterthwaite);
//! - p = 2 (1 − F_ν(|t|)), F_ν Student's t distribution.
//!
//! Unlike the rank tests it can reach p < 0.05 with 3 trials against 3
//! (the exact Mann-Whitney and permutation tests cannot: their smallest
//! two-sided p is 2 / C(6, 3) = 0.1), at the price of assuming the trials
//! are roughly normal. It also gives the smallest difference the trials
//! could have shown at their spread ([`Welch::detectable`]).
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The result of [`welch_t`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// mean(y) − mean(x) over its standard error; infinite when both
    /// samples are constant and their means differ.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// mean(x), the baseline's mean.
    pub mean_x: f64,
    /// mean(y), the candidate's mean.
    pub mean_y: f64,
    /// The standard error of the difference of the means.
    pub se: f64,
    /// s²ₓ/nₓ: the variance of the baseline's mean.
    pub var_mean_x: f64,
    /// s²ᵧ/nᵧ: the variance of the candidate's mean.
    pub var_mean_y: f64,
}

/// Welch's two-sided t-test of `y` against `x`; `None` when either sample
/// has fewer than 2 values or a non-finite one.
pub fn welch_t(x: &[f64], y: &[f64]) -> Option<Welch> {
    if x.len() < 2 || y.len() < 2 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let (mx, vx) = mean_var(x);
    let (my, vy) = mean_var(y);
    let (ax, ay) = (vx / x.len() as f64, vy / y.len() as f64);
    let se = (ax + ay).sqrt();
    if se == 0.0 {
        // Both samples constant: the means either agree or differ surely.
        let same = mx == my;
        return Some(Welch {
            t: if same { 0.0 } else { f64::INFINITY },
            df: (x.len() + y.len() - 2) as f64,
            p_value: if same { 1.0 } else { 0.0 },
            mean_x: mx,
            mean_y: my,
            se,
            var_mean_x: ax,
            var_mean_y: ay,
        });
    }
    let df =
        (ax + ay).powi(2) / (ax.powi(2) / (x.len() - 1) as f64 + ay.powi(2) / (y.len() - 1) as f64);
    let t = (my - mx) / se;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p_value = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    Some(Welch {
        t,
        df,
        p_value,
        mean_x: mx,
        mean_y: my,
        se,
        var_mean_x: ax,
        var_mean_y: ay,
    })
}

impl Welch {
    /// The smallest difference of the means, relative to the baseline's
    /// mean, that this test would call significant at level `alpha` with
    /// these trials' spread: t(1 − α/2, ν) · se / mean(x) (0.062 = 6.2%).
    /// `None` when the baseline mean is not positive.
    pub fn detectable(&self, alpha: f64) -> Option<f64> {
        if self.mean_x <= 0.0 {
            return None;
        }
        if self.se == 0.0 {
            return Some(0.0);
        }
        let q = super::student_t::quantile(1.0 - alpha / 2.0, self.df)?;
        Some(q * self.se / self.mean_x)
    }

    /// The 1 − `alpha` confidence interval of mean(y) − mean(x): the
    /// difference ± t(1 − α/2, ν) · se (Welch 1947). A point interval for
    /// two constant samples.
    pub fn difference_ci(&self, alpha: f64) -> Option<(f64, f64)> {
        let d = self.mean_y - self.mean_x;
        if self.se == 0.0 {
            return Some((d, d));
        }
        let half = super::student_t::quantile(1.0 - alpha / 2.0, self.df)? * self.se;
        Some((d - half, d + half))
    }

    /// The 1 − `alpha` confidence interval of mean(y) / mean(x) by
    /// Fieller's theorem (Fieller, "Some Problems in Interval Estimation",
    /// J. Royal Statistical Society B 16(2), 1954; the method Kalibera &
    /// Jones 2012 give for a ratio of means): the ratios R with
    /// (ȳ − R·x̄)² ≤ t² (s²ᵧ/nᵧ + R² s²ₓ/nₓ), t = t(1 − α/2, ν) at the
    /// Welch–Satterthwaite ν of the difference. `None` when the interval is
    /// unbounded (the baseline's mean is not significantly above 0:
    /// x̄² ≤ t² s²ₓ/nₓ) or the baseline's mean is not positive.
    pub fn ratio_ci(&self, alpha: f64) -> Option<(f64, f64)> {
        let (mx, my) = (self.mean_x, self.mean_y);
        if mx <= 0.0 {
            return None;
        }
        if self.se == 0.0 {
            return Some((my / mx, my / mx));
        }
        let t = super::student_t::quantile(1.0 - alpha / 2.0, self.df)?;
        let t2 = t * t;
        let a = mx * mx - t2 * self.var_mean_x;
        if a <= 0.0 {
            return None;
        }
        let c = my * my - t2 * self.var_mean_y;
        let root = (mx * mx * my * my - a * c).max(0.0).sqrt();
        Some(((mx * my - root) / a, (mx * my + root) / a))
    }
}

/// The mean and the unbiased variance (n − 1 in the denominator).
fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_closed_forms() {
        // 3 against 3, variances 4 and 1: t = 10 / sqrt(4/3 + 1/3) = 7.7460,
        // df = (5/3)^2 / ((4/3)^2 / 2 + (1/3)^2 / 2) = 50/17.
        let w = welch_t(&[100.0, 102.0, 98.0], &[110.0, 111.0, 109.0]).unwrap();
        assert!((w.t - 10.0 / (5.0f64 / 3.0).sqrt()).abs() < 1e-9, "{w:?}");
        assert!((w.df - 50.0 / 17.0).abs() < 1e-9, "{w:?}");
        assert!(w.p_value < 0.01, "{w:?}");
        // 2 against 2 with equal variances has df = 2, where Student's t
        // has the closed form F(t) = 1/2 + t / (2 sqrt(2 + t^2)), so the
        // two-sided p is 1 - t / sqrt(2 + t^2): t = 10 / sqrt(2), p = 0.019419.
        let w = welch_t(&[99.0, 101.0], &[109.0, 111.0]).unwrap();
        let t = 10.0 / 2.0f64.sqrt();
        assert!((w.df - 2.0).abs() < 1e-12 && (w.t - t).abs() < 1e-12);
        assert!(
            (w.p_value - (1.0 - t / (2.0 + t * t).sqrt())).abs() < 1e-9,
            "{w:?}"
        );
        // The sign follows the candidate: slower is negative.
        assert!(welch_t(&[109.0, 111.0], &[99.0, 101.0]).unwrap().t < 0.0);
    }

    #[test]
    fn overlapping_trials_are_not_significant_and_say_what_could_be_seen() {
        let w = welch_t(&[100.0, 104.0, 96.0], &[101.0, 105.0, 97.0]).unwrap();
        assert!(w.p_value > 0.5, "{w:?}");
        // se = sqrt(16/3 + 16/3) = 3.266, df = 4, t(0.975, 4) = 2.776:
        // 9.07 / 100 = 9.1%.
        let d = w.detectable(0.05).unwrap();
        assert!(
            (d - 2.776445 * (32.0f64 / 3.0).sqrt() / 100.0).abs() < 1e-4,
            "{d}"
        );
    }

    #[test]
    fn fieller_s_interval_solves_its_quadratic_and_reduces_to_welch_s_with_a_fixed_baseline() {
        let w = welch_t(&[100.0, 102.0, 98.0], &[110.0, 111.0, 109.0]).unwrap();
        let (lo, hi) = w.ratio_ci(0.05).unwrap();
        assert!(lo < 1.1 && 1.1 < hi, "{lo} {hi}");
        // Each end satisfies (ȳ − R·x̄)² = t² (s²ᵧ/nᵧ + R² s²ₓ/nₓ).
        let t = crate::analysis::student_t::quantile(0.975, 50.0 / 17.0).unwrap();
        for r in [lo, hi] {
            let lhs = (110.0 - r * 100.0f64).powi(2);
            let rhs = t * t * (1.0 / 3.0 + r * r * 4.0 / 3.0);
            assert!((lhs - rhs).abs() < 1e-6, "{r}: {lhs} vs {rhs}");
        }
        // A baseline without spread: ȳ/x̄ ± t·sᵧ/(√nᵧ·x̄), Welch's own
        // interval of the difference over the baseline (ν = nᵧ − 1 = 2).
        let w = welch_t(&[100.0, 100.0, 100.0], &[110.0, 111.0, 109.0]).unwrap();
        let (lo, hi) = w.ratio_ci(0.05).unwrap();
        let half = crate::analysis::student_t::quantile(0.975, 2.0).unwrap()
            * (1.0f64 / 3.0).sqrt()
            / 100.0;
        assert!(
            (lo - (1.1 - half)).abs() < 1e-9 && (hi - (1.1 + half)).abs() < 1e-9,
            "{lo} {hi}"
        );
        // A baseline mean not clear of zero: unbounded, no interval.
        let w = welch_t(&[1.0, -1.0, 0.5], &[10.0, 11.0, 9.0]).unwrap();
        assert_eq!(w.ratio_ci(0.05), None);
        assert_eq!(
            welch_t(&[0.0, 0.0], &[1.0, 2.0]).unwrap().ratio_ci(0.05),
            None
        );
        // Both constant: the ratio itself.
        let w = welch_t(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
        assert_eq!(w.ratio_ci(0.05), Some((1.2, 1.2)));
    }

    #[test]
    fn constant_and_short_samples() {
        assert_eq!(welch_t(&[5.0, 5.0], &[5.0, 5.0]).unwrap().p_value, 1.0);
        assert_eq!(welch_t(&[5.0, 5.0], &[6.0, 6.0]).unwrap().p_value, 0.0);
        assert!(welch_t(&[5.0], &[6.0, 6.0]).is_none());
        assert!(welch_t(&[5.0, f64::NAN], &[6.0, 6.0]).is_none());
    }
}
