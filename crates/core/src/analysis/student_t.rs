//! Student's t quantiles, from statrs: the one place a t quantile is
//! computed (Welch's interval, the between-runs interval and plan, the USL
//! fit's confidence intervals). No t table is typed by hand anywhere.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Student's t quantile at probability `p` with `df` degrees of freedom
/// (statrs' inverse CDF); `None` for a df that is not positive.
pub fn quantile(p: f64, df: f64) -> Option<f64> {
    Some(StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_closed_forms_for_one_and_two_degrees_of_freedom() {
        // df 1 is the Cauchy distribution: t = tan(π(p − ½)); df 2 has
        // t = (2p − 1) / sqrt(2p(1 − p)). Exact, so no table is needed.
        for p in [0.9, 0.95, 0.975, 0.995] {
            let cauchy = (std::f64::consts::PI * (p - 0.5)).tan();
            let two = (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt();
            assert!(
                (quantile(p, 1.0).unwrap() / cauchy - 1.0).abs() < 1e-6,
                "p {p}"
            );
            assert!(
                (quantile(p, 2.0).unwrap() / two - 1.0).abs() < 1e-6,
                "p {p}"
            );
        }
        assert_eq!(quantile(0.975, 0.0), None);
    }
}
