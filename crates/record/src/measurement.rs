//! What one trial measured, as the store keeps it and the report reads
//! it: the [`Measurement`] a load run is summarised into, and its
//! [`LatencySummary`].

use crate::errors::ErrorCounts;
use crate::units::{CpuSeconds, Micros, PerSecond, Seconds};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// What one load run measured, summarised: what the store keeps per trial
/// and what `scalelab load --json` prints. Built from a `LoadResult` in
/// one place (`From<&LoadResult>` in `scalelab_lab::load::result`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    /// Completed requests (or transactions, queries, frames).
    pub requests: u64,
    /// Wall-clock seconds of the measured run.
    pub duration_s: Seconds,
    /// The headline throughput (`LoadResult::throughput`): completed requests per second, or
    /// a ramp's maximum answer rate.
    pub rps: PerSecond,
    /// Bytes received (`LoadResult::bytes`).
    pub bytes: u64,
    /// `bytes` as gigabits per second of `duration_s`.
    pub gbit_s: f64,
    /// Failures by kind.
    pub errors: ErrorCounts,
    /// Retried transactions (`LoadResult::retries`).
    pub retries: u64,
    /// Percentiles of the completed requests' latency.
    pub latency_us: LatencySummary,
    /// CPU seconds the load generator used during the run.
    pub client_cpu_s: CpuSeconds,
    /// The offered rate of an open-loop run (requests per second); `None` for a closed loop.
    pub target_rate: Option<PerSecond>,
    /// Connections the generator opened (more than its concurrency when connections are
    /// replaced).
    pub connections_opened: u64,
    /// Plain-words warnings about the run.
    pub notes: Vec<String>,
}

/// The latency fields, one set for every use: what the store keeps of a
/// trial (`measurements.latency_*_us`), what the export shows, and what
/// every `scalelab load` kind reports in its JSON (`latency_us`, and
/// `schedule_lag_us` in rate mode) and its text, read from one HDR
/// histogram ([`LatencySummary::of`]). Microseconds.
///
/// The stored form is versioned by the store's schema: `p75` joined it in
/// version 9, so a trial stored before has none (`None`, left out of its
/// JSON, which therefore reads as it did).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    /// Median.
    pub p50: Micros,
    /// 75th percentile; `None` for a trial stored before schema version 9.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p75: Option<Micros>,
    /// 90th percentile.
    pub p90: Micros,
    /// 99th percentile.
    pub p99: Micros,
    /// 99.9th percentile.
    pub p999: Micros,
    /// The largest latency recorded.
    pub max: Micros,
    /// Mean, in microseconds.
    pub mean: f64,
    /// Standard deviation, in microseconds.
    pub stdev: f64,
}

impl LatencySummary {
    /// Every field of `h`; all zero when `h` is empty.
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary {
                p75: Some(Micros(0)),
                ..LatencySummary::default()
            };
        }
        let at = |q| Micros(h.value_at_quantile(q));
        LatencySummary {
            p50: at(0.50),
            p75: Some(at(0.75)),
            p90: at(0.90),
            p99: at(0.99),
            p999: at(0.999),
            max: Micros(h.max()),
            mean: h.mean(),
            stdev: h.stdev(),
        }
    }

    /// One line of text: `p50 1.2ms, p75 ..., p99.9 ..., max ..., mean
    /// ..., stdev ...`, each value with its unit (`p75` only when known).
    pub fn describe(&self) -> String {
        let us = |v: f64| Micros(v.round() as u64);
        let p75 = self.p75.map(|p| format!(", p75 {p}")).unwrap_or_default();
        format!(
            "p50 {}{p75}, p90 {}, p99 {}, p99.9 {}, max {}, mean {}, stdev {}",
            self.p50,
            self.p90,
            self.p99,
            self.p999,
            self.max,
            us(self.mean),
            us(self.stdev)
        )
    }
}
