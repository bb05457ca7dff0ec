//! When a cell (one system at one point) is "not comparable": only for its
//! own real errors or because the load generator could not offer the load.
//! The reason is named, and the cell is then in no verdict and no ranking.
//!
//! - Every kind: errors above [`MAX_ERROR_RATE`] of the attempts.
//! - A DNS rate ramp (resperf's method, `max_rate`) drives the server past
//!   what it can answer on purpose, so its lost queries are the measurement
//!   (resperf reports them as "lost at that point"), before the maximum as
//!   after it: they never count as errors. Its point is not comparable only
//!   for other errors (malformed replies, write or read failures, answers
//!   other than NOERROR, NXDOMAIN and SERVFAIL) above [`MAX_ERROR_RATE`],
//!   SERVFAIL answers above [`MAX_SERVFAIL_SHARE`] of the answers, or a
//!   generator that fell behind its schedule below the maximum (the
//!   maximum is then the client's).
//!
//! Stored runs made before this rule kept the losses before the maximum
//! as timeouts; they are read the same way (a ramp's timeouts are its
//! losses).

use crate::analysis::compare::{too_many_errors, MAX_ERROR_RATE};
use crate::load::result::ErrorCounts;
use crate::store::Trial;

/// The share of a ramp's answers that may be SERVFAIL (1%) before its point
/// is not comparable: a resolver answers SERVFAIL when it gives up on a
/// name (its recursion timed out or its client quota is full), so a few
/// under overload are part of the curve, but a resolver that fails many
/// names must not win on the throughput of its failures.
pub const MAX_SERVFAIL_SHARE: f64 = 0.01;

/// The RCODE name a SERVFAIL answer is counted under
/// (`crate::wire::dns::codec::rcode_name`).
const SERVFAIL: &str = "SERVFAIL";

/// Why the cell of these successful trials is not comparable, or `None`.
/// `errors` and `requests` are summed over them.
pub fn reason(ok: &[&Trial], errors: &ErrorCounts, requests: u64) -> Option<String> {
    if !ok.iter().any(|t| is_ramp(t)) {
        return too_many_errors(errors.total(), requests)
            .then(|| format!("{} errors ({})", errors.total(), errors.kinds()));
    }
    ramp_reason(ok, errors, requests)
}

fn is_ramp(t: &Trial) -> bool {
    t.context
        .datagrams
        .as_ref()
        .is_some_and(|d| d.ramp.is_some())
}

fn ramp_reason(ok: &[&Trial], errors: &ErrorCounts, requests: u64) -> Option<String> {
    if let Some(lag) = ok
        .iter()
        .find_map(|t| t.context.datagrams.as_ref()?.fell_behind.clone())
    {
        // The driver keeps the lag only when it came below the maximum; its
        // sentence names where and says the limit was the client's.
        return Some(lag);
    }
    let servfail: u64 = ok
        .iter()
        .filter_map(|t| t.context.datagrams.as_ref()?.codes.get(SERVFAIL).copied())
        .sum();
    if requests > 0 && servfail as f64 > MAX_SERVFAIL_SHARE * requests as f64 {
        return Some(format!(
            "{servfail} SERVFAIL answers ({} of {requests} answers, over the {} a resolver may fail)",
            percent(servfail as f64 / requests as f64),
            percent(MAX_SERVFAIL_SHARE)
        ));
    }
    // Lost queries (timeouts) are the ramp's measurement; SERVFAIL was
    // judged above.
    let other = ErrorCounts {
        timeout: 0,
        status: errors.status.saturating_sub(servfail),
        ..*errors
    };
    too_many_errors(other.total(), requests).then(|| {
        format!(
            "{} errors other than lost queries ({}), over {} of the queries",
            other.total(),
            other.kinds(),
            percent(MAX_ERROR_RATE)
        )
    })
}

/// `0.84%`, `1%`, `0.1%`.
fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    let text = format!("{p:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::result::{Datagrams, Ramp};
    use crate::store::{Measurement, TrialContext};

    /// A ramp trial as the DNS driver stores it: `answered` answers,
    /// `lost` lost queries (stored as timeouts by runs made before the
    /// rule), SERVFAIL among the answers, and the generator's lag.
    fn ramp_trial(
        answered: u64,
        lost: u64,
        servfail: u64,
        fell_behind: Option<&str>,
    ) -> (Trial, ErrorCounts) {
        let mut t = crate::report::test_support::run_data(&["a"])
            .trials
            .remove(0);
        let errors = ErrorCounts {
            timeout: lost,
            status: servfail,
            ..ErrorCounts::default()
        };
        t.measurement = Some(Measurement {
            requests: answered,
            errors,
            ..Measurement::default()
        });
        let mut codes = std::collections::BTreeMap::new();
        codes.insert("NOERROR".to_string(), answered - servfail);
        if servfail > 0 {
            codes.insert(SERVFAIL.to_string(), servfail);
        }
        t.context = TrialContext {
            datagrams: Some(Datagrams {
                sent: answered + lost,
                lost,
                codes,
                fell_behind: fell_behind.map(str::to_string),
                ramp: Some(Ramp {
                    max_throughput: 30_000.0,
                    ..Ramp::default()
                }),
                ..Datagrams::default()
            }),
            ..TrialContext::default()
        };
        (t, errors)
    }

    fn judge(t: &(Trial, ErrorCounts)) -> Option<String> {
        reason(&[&t.0], &t.1, t.0.measurement.as_ref().unwrap().requests)
    }

    #[test]
    fn a_ramps_lost_queries_are_never_errors() {
        // Seed 002 as stored on a busy machine: 330475 of 439065 queries
        // lost, many of them before the maximum.
        assert_eq!(judge(&ramp_trial(108_590, 330_475, 0, None)), None);
        // The same counts outside a ramp are errors.
        let (mut t, errors) = ramp_trial(108_590, 330_475, 0, None);
        t.context = TrialContext::default();
        let why = reason(&[&t], &errors, 108_590).unwrap();
        assert_eq!(why, "330475 errors (330475 timeouts)");
    }

    #[test]
    fn a_ramp_is_not_comparable_for_servfail_other_errors_or_a_late_generator() {
        // 748 SERVFAIL of 88780 answers (0.84%): within the share.
        assert_eq!(judge(&ramp_trial(88_780, 500_000, 748, None)), None);
        let why = judge(&ramp_trial(88_780, 0, 2_000, None)).unwrap();
        assert!(
            why.starts_with("2000 SERVFAIL answers (2.25% of 88780 answers, over the 1%"),
            "{why}"
        );
        let (t, mut errors) = ramp_trial(100_000, 50_000, 0, None);
        errors.protocol = 500;
        let why = reason(&[&t], &errors, 100_000).unwrap();
        assert_eq!(
            why,
            "500 errors other than lost queries (500 protocol), over 0.1% of the queries"
        );
        let lag = "the load generator fell behind its schedule by 3797 queries at 3.8s (offered 28316 qps): the client, not the server, set the limit from there";
        let why = judge(&ramp_trial(100_000, 10, 0, Some(lag))).unwrap();
        assert_eq!(why, lag);
    }
}
