//! What the DNS driver records with each trial ([`Datagrams`], stored
//! under `datagrams`) and the rules only DNS has: a rate ramp's
//! comparability and a generator that fell behind its schedule.
//!
//! A DNS rate ramp (resperf's method, `max_rate`) drives the server past
//! what it can answer on purpose, so its lost queries are the measurement
//! (resperf reports them as "lost at that point"), before the maximum as
//! after it: they never count as errors. Its point is not comparable only
//! for other errors (malformed replies, write or read failures, answers
//! other than NOERROR, NXDOMAIN and SERVFAIL) above
//! [`MAX_ERROR_RATE`] of the queries, SERVFAIL answers above
//! [`MAX_SERVFAIL_SHARE`] of the answers, or a generator that fell behind
//! its schedule below the maximum (the maximum is then the client's), or
//! a ramp that lost no query (it ended below the server's limit, so its
//! highest answer rate is a floor: `≥ 28366 qps`, never a maximum).
//!
//! Stored runs made before this rule kept the losses before the maximum
//! as timeouts; they are read the same way (a ramp's timeouts are its
//! losses).

use super::chart::{ramp_chart, RampCell};
use super::ramp::Ramp;
use crate::analysis::compare::{too_many_errors, MAX_ERROR_RATE};
use crate::load::facts::{
    KindChart, KindChartCell, KindRule, StoredFacts, TrialExtras, TrialFacts,
};
use crate::load::result::ErrorCounts;
use serde::{Deserialize, Serialize};

/// The share of a ramp's answers that may be SERVFAIL (1%) before its point
/// is not comparable: a resolver answers SERVFAIL when it gives up on a
/// name (its recursion timed out or its client quota is full), so a few
/// under overload are part of the curve, but a resolver that fails many
/// names must not win on the throughput of its failures.
pub const MAX_SERVFAIL_SHARE: f64 = 0.01;

/// The RCODE name a SERVFAIL answer is counted under
/// (`crate::wire::dns::codec::rcode_name`).
const SERVFAIL: &str = "SERVFAIL";

/// What datagram drivers (DNS) add to a run: queries sent and lost, answers
/// by protocol code, the schedule lag and, for a rate ramp, resperf's view.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Datagrams {
    /// Queries sent.
    pub sent: u64,
    /// Queries that got no answer within the timeout.
    pub lost: u64,
    /// Datagrams that matched no query in flight (late or wrong question).
    pub mismatched: u64,
    /// Answers by protocol code (DNS RCODE name).
    pub codes: std::collections::BTreeMap<String, u64>,
    /// Answers the kernel dropped at the generator's own sockets because
    /// their receive buffers were full (`SO_MEMINFO`): lost queries the
    /// client, not the server, lost. They are inside `lost`.
    #[serde(default)]
    pub dropped_at_client: u64,
    /// Set when the generator could not keep up (it fell behind its
    /// schedule, as resperf says, or its own sockets dropped answers) below
    /// a ramp's maximum, or at all in a flat or fixed-rate run: the run then
    /// describes the client, not the server.
    pub fell_behind: Option<String>,
    /// Resperf's per-second view, for a rate ramp; `None` for a flat run.
    pub ramp: Option<Ramp>,
    /// Set when a paced run fell behind because every query ID of its
    /// clients was in flight: the ID space, not the server, capped the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids_ran_out: Option<IdsRanOut>,
    /// What carried the queries (`udp`, `tcp`, `dot`); runs stored before
    /// it was kept were UDP or TCP and say nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<super::DnsTransport>,
    /// DoT and DoH: what the handshake settled, and whether the server's
    /// certificate was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<DnsTlsFacts>,
}

/// A DoT or DoH run's TLS, for the fingerprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DnsTlsFacts {
    /// The first connection's handshake.
    pub negotiated: crate::tls::client::Negotiated,
    /// Whether the certificate was checked (`tls_verify`).
    pub verified: bool,
    /// The client's TLS library ([`crate::tls::client::LIBRARY`]).
    pub client_library: String,
}

/// A paced run's query IDs ran out: every one of the clients' IDs was
/// waiting for its answer (or its timeout), so no more queries could go.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IdsRanOut {
    /// When, in seconds from the start.
    pub at_s: f64,
    /// Query IDs over all clients (65536 each, less one batch kept free).
    pub ids: u64,
    /// The clients (sockets, or XDP source ports).
    pub clients: u32,
    /// How long each query held its ID at most, seconds.
    pub timeout_s: f64,
    /// The rate those IDs allow when no answer comes: `ids / timeout_s`.
    pub max_rate: f64,
    /// What to do: more clients, or a shorter timeout.
    pub fix: String,
}

impl StoredFacts for Datagrams {
    const KEY: &'static str = "datagrams";
    fn legend() -> Option<String> {
        Some(format!(
            " (a DNS ramp's lost queries are its measurement, not errors), SERVFAIL \
             above {}% of a ramp's answers",
            MAX_SERVFAIL_SHARE * 100.0
        ))
    }
}

impl TrialFacts for Datagrams {
    /// A generator that fell behind (its sentence says where) describes
    /// the client; otherwise the shared CPU rule judges.
    fn client_bound(&self) -> KindRule {
        match &self.fell_behind {
            Some(lag) => KindRule::Decided(Some(lag.clone())),
            None => KindRule::Shared,
        }
    }

    /// A ramp's rule (the module's doc); a flat or fixed-rate run's
    /// errors are judged by the shared rule.
    fn not_comparable(
        &self,
        cell: &[&TrialExtras],
        errors: &ErrorCounts,
        requests: u64,
    ) -> KindRule {
        if self.ramp.is_none() {
            return KindRule::Shared;
        }
        let cell: Vec<&Datagrams> = cell.iter().filter_map(|e| e.get()).collect();
        KindRule::Decided(ramp_reason(&cell, errors, requests))
    }

    fn notes(&self) -> Vec<String> {
        self.ramp
            .as_ref()
            .map(|r| r.notes.clone())
            .unwrap_or_default()
    }

    fn throughput(&self) -> Option<f64> {
        Some(self.ramp.as_ref()?.max_throughput)
    }

    /// A ramp's answered against offered rate (seed 002), one curve per
    /// cell that ramped (`load::dns::chart`).
    fn charts(&self, system: &str, cells: &[KindChartCell]) -> Vec<KindChart> {
        let ramps: Vec<RampCell> = cells
            .iter()
            .filter_map(|c| {
                Some(RampCell {
                    label: &c.label,
                    point: &c.point,
                    ramp: c.extras.get::<Datagrams>()?.ramp.as_ref()?,
                })
            })
            .collect();
        ramp_chart(system, &ramps).into_iter().collect()
    }

    /// A rate ramp rises over its window: that is its measurement.
    fn rises_by_design(&self) -> bool {
        self.ramp.is_some()
    }
}

fn ramp_reason(cell: &[&Datagrams], errors: &ErrorCounts, requests: u64) -> Option<String> {
    if let Some(lag) = cell.iter().find_map(|d| d.fell_behind.clone()) {
        // The driver keeps the lag only when it came below the maximum; its
        // sentence names where and says the limit was the client's.
        return Some(lag);
    }
    if let Some(r) = (cell.iter()).find_map(|d| d.ramp.as_ref().filter(|r| r.below_limit)) {
        // Nothing lost: the highest answer rate is a floor, never a
        // measured maximum to rank or compare.
        return Some(format!(
            "the ramp lost no query, so its maximum was not measured: {}",
            super::ramp::at_least(r.max_throughput, false)
        ));
    }
    let servfail: u64 = cell
        .iter()
        .filter_map(|d| d.codes.get(SERVFAIL).copied())
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

/// Extras holding a DNS ramp alone, for the shared layers' tests: one
/// second per `(offered, answered)`, the rest of each lost, and the
/// ramp's `notes`.
#[cfg(any(test, feature = "test-support"))]
pub fn ramp_extras(seconds: impl IntoIterator<Item = (u64, u64)>, notes: &[&str]) -> TrialExtras {
    let seconds = (0..)
        .zip(seconds)
        .map(|(second, (offered, answered))| super::ramp::RampSecond {
            second,
            offered,
            answered,
            lost: offered.saturating_sub(answered),
            ..Default::default()
        })
        .collect();
    TrialExtras::new(Datagrams {
        ramp: Some(Ramp {
            seconds,
            notes: notes.iter().map(|n| n.to_string()).collect(),
            ..Ramp::default()
        }),
        ..Datagrams::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ramp trial as the DNS driver stores it: `answered` answers,
    /// `lost` lost queries (stored as timeouts by runs made before the
    /// rule), SERVFAIL among the answers, and the generator's lag.
    fn ramp_trial(
        answered: u64,
        lost: u64,
        servfail: u64,
        fell_behind: Option<&str>,
    ) -> (TrialExtras, ErrorCounts) {
        let errors = ErrorCounts {
            timeout: lost,
            status: servfail,
            ..ErrorCounts::default()
        };
        let mut codes = std::collections::BTreeMap::new();
        codes.insert("NOERROR".to_string(), answered - servfail);
        if servfail > 0 {
            codes.insert(SERVFAIL.to_string(), servfail);
        }
        let facts = Datagrams {
            sent: answered + lost,
            lost,
            codes,
            fell_behind: fell_behind.map(str::to_string),
            ramp: Some(Ramp {
                max_throughput: 30_000.0,
                ..Ramp::default()
            }),
            ..Datagrams::default()
        };
        (TrialExtras::new(facts), errors)
    }

    fn judge(t: &(TrialExtras, ErrorCounts), answered: u64) -> KindRule {
        TrialExtras::not_comparable(&[&t.0], &t.1, answered)
    }

    #[test]
    fn a_ramps_lost_queries_are_never_errors() {
        // Seed 002 as stored on a busy machine: 330475 of 439065 queries
        // lost, many of them before the maximum.
        let t = ramp_trial(108_590, 330_475, 0, None);
        assert_eq!(judge(&t, 108_590), KindRule::Decided(None));
        // Outside a ramp the shared rule judges them (as errors:
        // `report::comparable`).
        let flat = TrialExtras::new(Datagrams::default());
        let rule = TrialExtras::not_comparable(&[&flat], &t.1, 108_590);
        assert_eq!(rule, KindRule::Shared);
        assert_eq!(
            TrialExtras::not_comparable(&[], &t.1, 108_590),
            KindRule::Shared
        );
    }

    #[test]
    fn a_ramp_is_not_comparable_for_servfail_other_errors_or_a_late_generator() {
        let why = |r: KindRule| match r {
            KindRule::Decided(why) => why,
            KindRule::Shared => panic!("a ramp decides by its own rule"),
        };
        // 748 SERVFAIL of 88780 answers (0.84%): within the share.
        assert_eq!(
            why(judge(&ramp_trial(88_780, 500_000, 748, None), 88_780)),
            None
        );
        let w = why(judge(&ramp_trial(88_780, 0, 2_000, None), 88_780)).unwrap();
        assert!(
            w.starts_with("2000 SERVFAIL answers (2.25% of 88780 answers, over the 1%"),
            "{w}"
        );
        let (t, mut errors) = ramp_trial(100_000, 50_000, 0, None);
        errors.protocol = 500;
        let w = why(TrialExtras::not_comparable(&[&t], &errors, 100_000)).unwrap();
        assert_eq!(
            w,
            "500 errors other than lost queries (500 protocol), over 0.1% of the queries"
        );
        let lag = "the load generator fell behind its schedule by 3797 queries at 3.8s (offered 28316 qps): the client, not the server, set the limit from there";
        let t = ramp_trial(100_000, 10, 0, Some(lag));
        assert_eq!(why(judge(&t, 100_000)).as_deref(), Some(lag));
        assert_eq!(t.0.client_bound(), KindRule::Decided(Some(lag.to_string())));
        assert_eq!(ramp_trial(1, 0, 0, None).0.client_bound(), KindRule::Shared);
    }

    /// Issue 46 item 2.6: a ramp that never lost a query (to 30000 qps,
    /// highest answer rate 28366) measured no maximum; its point is not
    /// ranked or compared on it, and the reason gives the floor.
    #[test]
    fn a_ramp_that_lost_nothing_gives_a_floor_not_a_maximum() {
        let (mut t, errors) = ramp_trial(100_000, 0, 0, None);
        let mut facts: Datagrams = t.get::<Datagrams>().cloned().unwrap();
        let ramp = facts.ramp.as_mut().unwrap();
        (ramp.below_limit, ramp.max_throughput) = (true, 28_366.0);
        t = TrialExtras::new(facts);
        let KindRule::Decided(Some(why)) = TrialExtras::not_comparable(&[&t], &errors, 100_000)
        else {
            panic!("a ramp below the limit is not comparable");
        };
        assert_eq!(
            why,
            "the ramp lost no query, so its maximum was not measured: ≥ 28366 qps: the ramp \
             ended before the server fell behind; raise --max-rate (resperf -m, a recipe's max_rate)"
        );
    }

    #[test]
    fn datagrams_are_stored_under_their_old_key_and_read_back() {
        let (t, _) = ramp_trial(10, 2, 1, Some("late"));
        let (key, json) = t.stored().unwrap();
        assert_eq!(key, "datagrams");
        let unread: TrialExtras = serde_json::from_value(serde_json::json!({ key: json })).unwrap();
        assert!(unread.is_none(), "read only through the registry's readers");
        let back = unread.resolved(&crate::load::facts::readers()).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.get::<Datagrams>().unwrap().lost, 2);
        assert_eq!(back.throughput(), Some(30_000.0));
        assert!(back.rises_by_design(), "a ramp rises over its window");
        assert!(!TrialExtras::new(Datagrams::default()).rises_by_design());
    }

    #[test]
    fn a_ramp_draws_its_chart_and_a_flat_run_none() {
        let ramp = ramp_extras([(10, 9)], &[]);
        let flat = TrialExtras::new(Datagrams::default());
        let cell = |extras| KindChartCell {
            label: "a".into(),
            point: "a".into(),
            extras,
        };
        assert!(TrialExtras::charts("nsd", &[cell(&flat)]).is_empty());
        let both = TrialExtras::charts("nsd", &[cell(&flat), cell(&ramp)]);
        assert_eq!(both.len(), 1, "the ramp's chart, asked of the first facts");
        assert_eq!(both[0].curves.len(), 1);
    }
}
