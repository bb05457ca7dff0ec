//! When a cell (one system at one point) is "not comparable": only for its
//! own real errors or because the load generator could not offer the load.
//! The reason is named, and the cell is then in no verdict and no ranking.
//!
//! - A load kind with a rule of its own judges its cells by it
//!   ([`crate::record::facts::TrialFacts::not_comparable`]: a DNS rate ramp,
//!   whose lost queries are its measurement).
//! - Every other cell: errors above [`MAX_ERROR_RATE`] of the attempts.
//!
//! [`MAX_ERROR_RATE`]: crate::analysis::compare::MAX_ERROR_RATE

use crate::analysis::compare::too_many_errors;
use crate::record::errors::ErrorCounts;
use crate::record::facts::{KindRule, TrialExtras};
use crate::store::Trial;

/// Why the cell of these successful trials is not comparable, or `None`.
/// `errors` and `requests` are summed over them.
pub fn reason(ok: &[&Trial], errors: &ErrorCounts, requests: u64) -> Option<String> {
    let extras: Vec<&TrialExtras> = ok.iter().map(|t| &t.context.extras).collect();
    match TrialExtras::not_comparable(&extras, errors, requests) {
        KindRule::Decided(why) => why,
        KindRule::Shared => too_many_errors(errors.total(), requests)
            .then(|| format!("{} errors ({})", errors.total(), errors.kinds())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Measurement, TrialContext};

    #[test]
    fn errors_are_judged_by_the_shared_rule_without_a_kinds_own() {
        let mut t = crate::judging::test_support::run_data(&["a"])
            .trials
            .remove(0);
        let errors = ErrorCounts {
            timeout: 330_475,
            ..ErrorCounts::default()
        };
        t.measurement = Some(Measurement {
            requests: 108_590,
            errors,
            ..Measurement::default()
        });
        t.context = TrialContext::default();
        let why = reason(&[&t], &errors, 108_590).unwrap();
        assert_eq!(why, "330475 errors (330475 timeouts)");
        assert_eq!(reason(&[&t], &ErrorCounts::default(), 108_590), None);
    }
}
