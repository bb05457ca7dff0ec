//! A rate ramp's second-by-second view (resperf's), which DNS's facts hold
//! and its own chart draws (`load::dns::chart`).

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
