//! resperf's summary of a rate ramp, as a pure function of the per-second
//! counts: the answer rate against the offered rate, the maximum throughput
//! and the loss at that point (Nominum/Akamai resperf(1), "Maximum
//! throughput" and "Lost at that point").
//!
//! resperf ramps past the server's capacity on purpose: the queries lost at
//! offered rates above the maximum throughput are how the maximum shows,
//! not failures of the trial. Neither are the losses before it: resperf
//! reports every loss as "lost at that point", and the DNS driver leaves
//! all of a ramp's losses out of its error counts ([`lost_past_max`] still
//! says how many came past the maximum).
//!
//! [`Ramp`] and [`RampSecond`] are the summary DNS's facts hold
//! (`Datagrams::ramp`, stored under `datagrams.ramp`), which its own chart
//! draws (`load::dns::chart`).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A linear rate ramp, second by second, summarised as resperf does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ramp {
    /// Every second of the ramp, in order.
    pub seconds: Vec<RampSecond>,
    /// The highest answer rate of any second (resperf "maximum throughput").
    pub max_throughput: f64,
    /// Share of the queries sent in that second that were lost, 0 to 1.
    pub loss_at_max: f64,
    /// The second (from the ramp's start) of `max_throughput`.
    pub max_at_second: u32,
    /// The first second whose offered rate reached half the maximum
    /// throughput: latency at 50% load.
    pub at_half_max: Option<RampSecond>,
    /// Queries lost in seconds whose offered rate exceeded the maximum
    /// throughput: the ramp drove the server past what it can answer on
    /// purpose. These, like every loss of a ramp, are the measurement, not
    /// errors: all of a ramp's losses are left out of the trial's error
    /// counts (and so of the verdicts' "not comparable" test);
    /// `Datagrams::lost` still counts them.
    #[serde(default)]
    pub lost_past_max: u64,
    /// The ramp lost nothing and the generator kept its schedule: it ended
    /// below the server's limit, so `max_throughput` is only the ramp's
    /// last rate, not the server's maximum (`load::dns::ramp::below_limit`).
    #[serde(default)]
    pub below_limit: bool,
    /// What the reader of this ramp must know: that it stopped early, or
    /// that the generator fell behind (or dropped answers) past the
    /// maximum, which therefore stands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One second of a ramp: offered and answered rates, losses among the
/// queries sent that second, and their latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RampSecond {
    /// Seconds since the ramp started.
    pub second: u32,
    /// Queries sent in this second.
    pub offered: u64,
    /// Answers to them.
    pub answered: u64,
    /// Queries of this second that got no answer within the timeout.
    pub lost: u64,
    /// Median latency of this second's answers, in microseconds.
    pub p50_us: u64,
    /// 99th-percentile latency of this second's answers, in microseconds.
    pub p99_us: u64,
}

/// Per-second series of one ramp: queries sent, answers received, queries
/// lost (by send second) and latency (by send second).
pub struct Series<'a> {
    pub sent: &'a [u64],
    pub answered: &'a [u64],
    pub lost: &'a [u64],
    pub latency: &'a [Histogram<u64>],
}

pub fn summarise(s: &Series) -> Ramp {
    let n = s.sent.len().max(s.answered.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let seconds: Vec<RampSecond> = (0..n)
        .map(|i| {
            let (p50_us, p99_us) = s
                .latency
                .get(i)
                .filter(|h| !h.is_empty())
                .map_or((0, 0), |h| {
                    (h.value_at_quantile(0.5), h.value_at_quantile(0.99))
                });
            RampSecond {
                second: i as u32,
                offered: at(s.sent, i),
                answered: at(s.answered, i),
                lost: at(s.lost, i),
                p50_us,
                p99_us,
            }
        })
        .collect();
    let best = seconds
        .iter()
        .max_by_key(|r| (r.answered, std::cmp::Reverse(r.second)))
        .copied()
        .unwrap_or_default();
    let max_throughput = best.answered as f64;
    let loss_at_max = if best.offered > 0 {
        best.lost as f64 / best.offered as f64
    } else {
        0.0
    };
    let at_half_max = seconds
        .iter()
        .find(|r| max_throughput > 0.0 && r.offered as f64 >= max_throughput / 2.0)
        .copied();
    Ramp {
        lost_past_max: lost_past_max(&seconds, max_throughput),
        below_limit: false,
        seconds,
        max_throughput,
        loss_at_max,
        max_at_second: best.second,
        at_half_max,
        notes: Vec::new(),
    }
}

/// How far above its maximum a server must really have been offered load,
/// in some second, for that maximum to be its own: 5%, well above the
/// answers of one second that arrive in the next.
pub const SATURATION_MARGIN: f64 = 1.05;

/// Whether a ramp's maximum throughput is the server's although the
/// generator could not keep up: in some second the server was really sent
/// (not merely scheduled) more than [`SATURATION_MARGIN`] times the most it
/// ever answered in one, so it, not the generator, set the maximum. A
/// generator that fell behind before the server was ever sent more than
/// it answered set the maximum itself (resperf warns of falling behind for
/// the same reason).
pub fn maximum_stands(seconds: &[RampSecond], max_throughput: f64) -> bool {
    max_throughput > 0.0
        && seconds
            .iter()
            .any(|s| s.offered as f64 > SATURATION_MARGIN * max_throughput)
}

/// Whether a ramp ended below the server's limit: it lost no query, so
/// the server never fell behind. Such a ramp has no maximum: its highest
/// answer rate is only where the ramp ended (its last offered rate, or
/// where the generator fell behind), and a resperf user would read it as
/// the server's capacity. The server's maximum is at least that rate.
/// Answers that arrive a second after they were sent (a slow client, a
/// queue) are not a limit: as for resperf, a query counts against the
/// server only once its timeout passes unanswered.
pub fn below_limit(seconds: &[RampSecond]) -> bool {
    seconds.iter().all(|s| s.lost == 0)
}

/// `≥ 28366 qps: the ramp ended before the server fell behind; raise
/// --max-rate`: the figure of a ramp that ended `below_limit`, for the
/// terminal, `--json` and the report alike. `fell_behind`: the generator,
/// not the ramp's end, stopped it.
pub fn at_least(max_throughput: f64, fell_behind: bool) -> String {
    let why = if fell_behind {
        "the load generator fell behind its schedule before the server lost a query; give it more \
         threads (-T) or sockets (-c)"
    } else {
        "the ramp ended before the server fell behind; raise --max-rate (resperf -m, a recipe's \
         max_rate)"
    };
    format!("≥ {max_throughput:.0} qps: {why}")
}

/// The note of a ramp that ended [`below_limit`].
pub fn below_limit_note(max_rate: f64, max_throughput: f64, fell_behind: bool) -> String {
    format!(
        "the ramp lost nothing up to {max_rate:.0} qps, so the server's maximum was not reached: \
         {}; its highest answer rate is a floor, not a maximum",
        at_least(max_throughput, fell_behind)
    )
}

/// Queries lost in the seconds whose offered rate exceeded `max_throughput`
/// (the most the server answered in any second). A loss at a rate at or
/// under that maximum is a real error: the server showed it could carry
/// that load.
pub fn lost_past_max(seconds: &[RampSecond], max_throughput: f64) -> u64 {
    seconds
        .iter()
        .filter(|s| s.offered as f64 > max_throughput)
        .map(|s| s.lost)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::histogram::new_histogram;

    #[test]
    fn maximum_loss_and_half_load_come_from_the_right_seconds() {
        let mut h = vec![new_histogram(), new_histogram(), new_histogram()];
        h[1].record(250).unwrap();
        let ramp = summarise(&Series {
            sent: &[100, 200, 300, 400],
            answered: &[100, 200, 240, 150],
            lost: &[0, 0, 60, 250],
            latency: &h,
        });
        assert_eq!(ramp.max_throughput, 240.0);
        assert_eq!(ramp.max_at_second, 2);
        assert!((ramp.loss_at_max - 0.2).abs() < 1e-12);
        let half = ramp.at_half_max.unwrap();
        assert_eq!((half.second, half.p50_us), (1, 250));
        assert_eq!(ramp.seconds.len(), 4);
        // Offered 300 and 400 exceed the 240 maximum: those losses are the
        // measurement.
        assert_eq!(ramp.lost_past_max, 60 + 250);
    }

    #[test]
    fn losses_under_the_maximum_stay_errors() {
        let ramp = summarise(&Series {
            sent: &[100, 200, 300],
            answered: &[90, 200, 290],
            lost: &[10, 0, 10],
            latency: &[],
        });
        assert_eq!(ramp.max_throughput, 290.0);
        assert_eq!(ramp.lost_past_max, 10, "only second 2 offered above 290");
    }

    #[test]
    fn a_ramp_that_lost_nothing_is_below_the_limit() {
        let second = |offered, answered, lost| RampSecond {
            offered,
            answered,
            lost,
            ..RampSecond::default()
        };
        let kept = [
            second(100, 100, 0),
            second(200, 200, 0),
            second(300, 300, 0),
        ];
        assert!(below_limit(&kept));
        let lost = [second(100, 100, 0), second(300, 290, 10)];
        assert!(!below_limit(&lost));
        // Answers of one second arriving in the next (a loaded client):
        // nothing was lost, so nothing showed the server's limit.
        let late = [second(100, 80, 0), second(240, 200, 0), second(0, 60, 0)];
        assert!(below_limit(&late));
        let note = below_limit_note(400.0, 398.0, false);
        assert!(
            note.contains(
                "≥ 398 qps: the ramp ended before the server fell behind; raise --max-rate"
            ),
            "{note}"
        );
        // Issue 46 item 2.6: a generator that fell behind without a loss
        // ended the ramp below the server's limit too (it printed
        // "Maximum throughput: 28366 qps").
        assert!(at_least(28366.0, true).starts_with("≥ 28366 qps: the load generator fell behind"));
    }
}
