//! A claim needs its interval beyond the noise floor: a minimum-effect
//! test on the effect-size interval.
//!
//! Kalibera & Jones ("Quantifying Performance Changes with Effect Size
//! Confidence Intervals", University of Kent Technical Report 4-12, 2012)
//! report a change as the ratio of the two systems with its confidence
//! interval, never as a p-value alone. Lakens ("Equivalence Tests: A
//! Practical Primer for t Tests, Correlations, and Meta-Analyses", Social
//! Psychological and Personality Science 8(4), 2017; Lakens, Scheel &
//! Isager, "Equivalence Testing for Psychological Research: A Tutorial",
//! AMPPS 1(2), 2018) tests against a smallest effect of interest instead of
//! against zero: a *minimum-effect test* rejects "the change is no larger
//! than ±δ" when the whole interval lies beyond δ on one side. Here δ is
//! the recipe's noise floor, the band the tool itself calls noise, and the
//! interval is the comparison's 95% CI of the ratio, so each side is a
//! one-sided test at 2.5% and the two together keep the 5% of the
//! two-sided test they sharpen.
//!
//! So a ratio is called faster only when its interval's lower end is above
//! 1 + δ, slower only when its upper end is below 1 − δ, and anything else
//! (an interval straddling 1, or reaching into the band) is no claim,
//! whatever the p-value: "within the 2% floor: CI 0.3..4.0%".

/// Which side of the noise floor an interval lies on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The whole interval is above 1 + floor: faster.
    Above,
    /// The whole interval is below 1 − floor: slower.
    Below,
    /// Some of the interval lies within ±floor (or it is not a number): no
    /// claim.
    Within,
}

/// Where the ratio interval `(lo, hi)` (candidate / baseline; `lo ≤ hi`,
/// either may be infinite) lies against a noise floor of `floor` (0.02 =
/// 2%; a negative or non-finite floor counts as 0). Strict: an interval
/// that touches 1 ± floor is [`Side::Within`], so with a floor of 0 an
/// interval ending at 1 claims nothing. A ratio against a zero baseline is
/// the interval `(∞, ∞)`: above any floor.
pub fn side(interval: (f64, f64), floor: f64) -> Side {
    let floor = if floor.is_finite() {
        floor.max(0.0)
    } else {
        0.0
    };
    let (lo, hi) = interval;
    if lo.is_nan() || hi.is_nan() || lo > hi {
        Side::Within
    } else if lo > 1.0 + floor {
        Side::Above
    } else if hi < 1.0 - floor {
        Side::Below
    } else {
        Side::Within
    }
}

/// `within the 2% floor: CI 0.3..4.0%`: the sentence of an interval that
/// did not clear the floor, the interval as changes of the candidate.
pub fn within_sentence(interval: (f64, f64), floor: f64) -> String {
    format!(
        "within the {} floor: CI {}",
        percent(floor),
        interval_text(interval)
    )
}

/// `0.3..4.0%`, `-4.0..-0.3%`: a ratio interval as relative changes.
pub fn interval_text((lo, hi): (f64, f64)) -> String {
    let change = |r: f64| {
        if r.is_infinite() {
            "∞".to_string()
        } else {
            format!("{:.1}", (r - 1.0) * 100.0)
        }
    };
    format!("{}..{}%", change(lo), change(hi))
}

/// `2%`, `2.5%`: a floor as the recipes write it.
fn percent(floor: f64) -> String {
    let p = floor * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: f64 = 0.02;

    #[test]
    fn an_interval_wholly_above_the_floor_is_faster_and_below_it_slower() {
        assert_eq!(side((1.05, 1.12), FLOOR), Side::Above);
        assert_eq!(side((0.85, 0.95), FLOOR), Side::Below);
        assert_eq!(side((1.0201, 1.03), FLOOR), Side::Above);
    }

    #[test]
    fn an_interval_reaching_into_the_floor_or_straddling_one_is_within() {
        // The case: +2.1% with a CI of 0.3..4.0%, p = 0.034.
        assert_eq!(side((1.003, 1.040), FLOOR), Side::Within);
        assert_eq!(side((0.97, 1.04), FLOOR), Side::Within);
        assert_eq!(side((0.95, 0.985), FLOOR), Side::Within);
        // Touching the floor is not beyond it.
        assert_eq!(side((1.02, 1.1), FLOOR), Side::Within);
        assert_eq!(side((0.9, 0.98), FLOOR), Side::Within);
        assert_eq!(
            within_sentence((1.003, 1.040), FLOOR),
            "within the 2% floor: CI 0.3..4.0%"
        );
        assert_eq!(interval_text((0.96, 0.997)), "-4.0..-0.3%");
        assert_eq!(
            within_sentence((0.99, 1.01), 0.025),
            "within the 2.5% floor: CI -1.0..1.0%"
        );
    }

    #[test]
    fn with_no_floor_the_interval_must_still_exclude_one() {
        assert_eq!(side((1.0, 1.1), 0.0), Side::Within);
        assert_eq!(side((1.001, 1.1), 0.0), Side::Above);
        assert_eq!(side((1.001, 1.1), -0.5), Side::Above);
        assert_eq!(side((1.001, 1.1), f64::NAN), Side::Above);
    }

    #[test]
    fn a_zero_baseline_is_an_unbounded_rise_and_nan_claims_nothing() {
        assert_eq!(side((f64::INFINITY, f64::INFINITY), FLOOR), Side::Above);
        assert_eq!(interval_text((f64::INFINITY, f64::INFINITY)), "∞..∞%");
        assert_eq!(side((f64::NAN, 1.2), FLOOR), Side::Within);
        assert_eq!(side((1.2, 1.1), FLOOR), Side::Within);
    }
}
