//! Percentile bootstrap CI of a ratio of medians (Efron & Tibshirani, "An
//! Introduction to the Bootstrap", 1993, ch. 13): resample each sample with
//! replacement, independently; take the 2.5% and 97.5% quantiles of the
//! resampled ratios.
//!
//! The generator is a fixed-seed SplitMix64 (Steele, Lea & Flood, OOPSLA
//! 2014), written out in [`crate::rng`] so the same data always gives the same interval,
//! on every platform and with every version of the `rand` crate.

use super::summary::median_of_sorted;
use crate::rng::SplitMix64;

/// Resamples used by [`ratio_of_medians_ci`].
pub const RESAMPLES: usize = 10_000;
const SEED: u64 = 0x5CA1_AB1E_0000_0001;

/// 95% percentile-bootstrap CI of median(candidate) / median(baseline).
/// `None` when either sample has fewer than 2 values (no resampling
/// spread), or the baseline holds a value that is not positive (a resampled
/// median could then be 0 and the ratio undefined), or any value is not
/// finite.
pub fn ratio_of_medians_ci(baseline: &[f64], candidate: &[f64]) -> Option<(f64, f64)> {
    if baseline.len() < 2 || candidate.len() < 2 {
        return None;
    }
    if baseline.iter().any(|v| !(v.is_finite() && *v > 0.0))
        || candidate.iter().any(|v| !v.is_finite())
    {
        return None;
    }
    let mut rng = SplitMix64(SEED);
    let mut scratch_b = vec![0.0; baseline.len()];
    let mut scratch_c = vec![0.0; candidate.len()];
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let b = resampled_median(baseline, &mut scratch_b, &mut rng);
            let c = resampled_median(candidate, &mut scratch_c, &mut rng);
            c / b
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    Some((quantile(&ratios, 0.025), quantile(&ratios, 0.975)))
}

fn resampled_median(sample: &[f64], scratch: &mut [f64], rng: &mut SplitMix64) -> f64 {
    for slot in scratch.iter_mut() {
        *slot = sample[rng.below(sample.len())];
    }
    scratch.sort_by(f64::total_cmp);
    median_of_sorted(scratch)
}

/// Linear interpolation between order statistics (Hyndman & Fan type 7,
/// the default of R's `quantile` and NumPy's `percentile`).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_brackets_the_ratio_and_is_reproducible() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let b = [110.0, 112.0, 108.0, 111.0, 109.0, 110.5];
        let (lo, hi) = ratio_of_medians_ci(&a, &b).unwrap();
        let ratio = 110.25 / 100.25;
        assert!(lo <= ratio && ratio <= hi, "{lo} {ratio} {hi}");
        // The extreme ratios possible are 108/102 and 112/98.
        assert!(lo >= 108.0 / 102.0 && hi <= 112.0 / 98.0, "{lo} {hi}");
        assert_eq!(ratio_of_medians_ci(&a, &b), Some((lo, hi)));
    }

    #[test]
    fn identical_constant_samples_give_a_point_interval() {
        assert_eq!(ratio_of_medians_ci(&[5.0; 4], &[10.0; 3]), Some((2.0, 2.0)));
    }

    #[test]
    fn degenerate_inputs_give_none() {
        assert_eq!(ratio_of_medians_ci(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(ratio_of_medians_ci(&[0.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(ratio_of_medians_ci(&[1.0, 1.0], &[f64::NAN, 2.0]), None);
    }

    #[test]
    fn quantile_type_7() {
        // numpy.percentile([1, 2, 3, 4], 25) = 1.75
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), 1.75);
    }
}
