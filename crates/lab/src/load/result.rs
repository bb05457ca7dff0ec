//! The mergeable result of a load run.

use super::histogram::{encode_histogram, new_histogram};
use crate::units::{Bytes, CpuSeconds, Micros, PerSecond, Seconds};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use super::errors::{ErrorCounts, ErrorKind};

/// What one load run measured, summarised: what the store keeps per trial
/// and what `scalelab load --json` prints. Built from a [`LoadResult`] in
/// one place (`From<&LoadResult>`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    /// Completed requests (or transactions, queries, frames).
    pub requests: u64,
    /// Wall-clock seconds of the measured run.
    pub duration_s: Seconds,
    /// The headline throughput ([`LoadResult::throughput`]): completed requests per second, or
    /// a ramp's maximum answer rate.
    pub rps: PerSecond,
    /// Bytes received ([`LoadResult::bytes`]).
    pub bytes: u64,
    /// `bytes` as gigabits per second of `duration_s`.
    pub gbit_s: f64,
    /// Failures by kind.
    pub errors: ErrorCounts,
    /// Retried transactions ([`LoadResult::retries`]).
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

impl From<&LoadResult> for Measurement {
    fn from(r: &LoadResult) -> Self {
        let secs = r.elapsed.as_secs_f64();
        Measurement {
            requests: r.requests,
            duration_s: Seconds(secs),
            rps: PerSecond(r.throughput()),
            bytes: r.bytes.0,
            gbit_s: r.bytes.gbit_per_s(secs),
            errors: r.errors,
            retries: r.retries,
            latency_us: r.latency_summary(),
            client_cpu_s: r.client_cpu,
            target_rate: r.target_rate.map(PerSecond),
            connections_opened: r.connections_opened,
            notes: r.notes_with_lag(),
        }
    }
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

/// What one load run measured. Threads each build one and [`merge`] them.
///
/// [`merge`]: LoadResult::merge
#[derive(Clone, Debug)]
pub struct LoadResult {
    /// Completed requests or transactions (any HTTP status; failed ones are
    /// in `errors`).
    pub requests: u64,
    /// Bytes received from the server (for `forward`: frames received times their size).
    pub bytes: Bytes,
    /// Failures by kind; they are not in `requests`, except non-2xx
    /// statuses.
    pub errors: ErrorCounts,
    /// Retried transactions (serialization/deadlock) that later succeeded or
    /// gave up.
    pub retries: u64,
    /// Rate mode with a latency limit (pgbench `-R` with `-L`): scheduled
    /// transactions never sent because they were already later than the
    /// limit against their schedule, and so could not have met it.
    pub skipped: u64,
    /// Latency of completed requests, in microseconds. Auto-resizing, so
    /// values past the timeout are kept, not clamped.
    pub latency: Histogram<u64>,
    /// Completed requests per [`super::timeline::BUCKET`] (100 ms) since
    /// the run started; they sum to `requests`.
    pub timeline: Vec<u64>,
    /// Wall time of the measured run.
    pub elapsed: Duration,
    /// The longest stretch of the run in which the load generator's own
    /// process was held still (stopped by SIGSTOP or Ctrl-Z, frozen,
    /// suspended), as a watcher thread saw it (`load::held`); zero when it
    /// never was.
    pub held: Duration,
    /// CPU the load generator used during the run (user + system).
    pub client_cpu: CpuSeconds,
    /// Connections opened, replacements included.
    pub connections_opened: u64,
    /// The requested rate in open-loop mode.
    pub target_rate: Option<f64>,
    /// Plain-words warnings, such as ephemeral port exhaustion.
    pub notes: Vec<String>,
    /// What the kind records beyond these (DNS's datagram counts, a
    /// forwarding search); empty for most kinds.
    pub extras: super::facts::TrialExtras,
    /// Rate mode: how late the generator sent each request against its
    /// schedule (its own wake-up lag, in microseconds), which the latency
    /// of an open loop includes; empty in a closed loop.
    pub schedule_lag: Histogram<u64>,
}

impl Default for LoadResult {
    fn default() -> Self {
        Self::new()
    }
}

impl LoadResult {
    /// An empty result, ready for a worker to record into.
    pub fn new() -> Self {
        LoadResult {
            requests: 0,
            bytes: Bytes(0),
            errors: ErrorCounts::default(),
            retries: 0,
            skipped: 0,
            latency: new_histogram(),
            timeline: Vec::new(),
            elapsed: Duration::ZERO,
            held: Duration::ZERO,
            client_cpu: CpuSeconds(0.0),
            connections_opened: 0,
            target_rate: None,
            notes: Vec::new(),
            extras: super::facts::TrialExtras::default(),
            schedule_lag: new_histogram(),
        }
    }

    /// Rate mode: records that a request went out `lag` after its
    /// scheduled time.
    pub fn record_lag(&mut self, lag: Micros) {
        // Auto-resize histograms only fail for values past u64 range.
        let _ = self.schedule_lag.record(lag.0.max(1));
    }

    /// Rate mode: the schedule lag's fields; `None` when no request was
    /// scheduled (a closed loop).
    pub fn schedule_lag(&self) -> Option<LatencySummary> {
        (!self.schedule_lag.is_empty()).then(|| LatencySummary::of(&self.schedule_lag))
    }

    /// Records one completed request that took `latency` and finished
    /// `since_start` after the run began.
    pub fn record(&mut self, latency: Micros, since_start: Duration) {
        self.requests += 1;
        // Auto-resize histograms only fail for values past u64 range.
        let _ = self.latency.record(latency.0.max(1));
        let at = super::timeline::bucket_of(since_start);
        if self.timeline.len() <= at {
            self.timeline.resize(at + 1, 0);
        }
        self.timeline[at] += 1;
    }

    /// Folds another worker's result into this one. Elapsed and CPU are
    /// whole-run quantities: the longer elapsed and the larger CPU win.
    pub fn merge(&mut self, o: &LoadResult) {
        self.requests += o.requests;
        self.bytes = Bytes(self.bytes.0 + o.bytes.0);
        self.errors.merge(&o.errors);
        self.retries += o.retries;
        self.skipped += o.skipped;
        // Both histograms auto-resize, so adding cannot fail on range.
        let _ = self.latency.add(&o.latency);
        let _ = self.schedule_lag.add(&o.schedule_lag);
        if self.timeline.len() < o.timeline.len() {
            self.timeline.resize(o.timeline.len(), 0);
        }
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            *a += b;
        }
        self.elapsed = self.elapsed.max(o.elapsed);
        self.held = self.held.max(o.held);
        self.client_cpu = CpuSeconds(self.client_cpu.0.max(o.client_cpu.0));
        self.connections_opened += o.connections_opened;
        self.target_rate = self.target_rate.or(o.target_rate);
        if self.extras.is_none() {
            self.extras.clone_from(&o.extras);
        }
        for n in &o.notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
    }

    /// The run's headline throughput: the kind's own (a ramp's maximum
    /// answer rate), else completed requests per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.extras.throughput().unwrap_or_else(|| self.rps())
    }

    /// Completed requests per second of wall time.
    pub fn rps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.requests as f64 / s
        } else {
            0.0
        }
    }

    /// The latency fields of [`Self::latency`]; all zero when nothing
    /// completed.
    pub fn latency_summary(&self) -> LatencySummary {
        LatencySummary::of(&self.latency)
    }

    /// The run's notes, with the schedule lag's as the last one in rate
    /// mode (what a stored trial keeps of it).
    pub fn notes_with_lag(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if let Some(lag) = self.schedule_lag() {
            notes.push(format!("schedule lag (rate mode): {}", lag.describe()));
        }
        notes
    }

    /// The histogram in HdrHistogram's portable V2 encoding.
    pub fn histogram_bytes(&self) -> Vec<u8> {
        encode_histogram(&self.latency)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::histogram::decode_histogram;

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = LoadResult::new();
        let mut b = LoadResult::new();
        a.record(Micros(100), Duration::from_millis(10));
        b.record(Micros(300), Duration::from_millis(150));
        b.errors.add(ErrorKind::Timeout);
        b.elapsed = Duration::from_secs(2);
        a.merge(&b);
        assert_eq!(a.requests, 2);
        assert_eq!(a.timeline, vec![1, 1], "100 ms buckets");
        assert_eq!(a.errors.timeout, 1);
        assert_eq!(a.latency.len(), 2);
        assert_eq!(a.rps(), 1.0);
    }

    #[test]
    fn histogram_survives_encoding() {
        let mut r = LoadResult::new();
        for v in [5, 50, 500, 5_000_000] {
            r.record(Micros(v), Duration::ZERO);
        }
        let h = decode_histogram(&r.histogram_bytes()).unwrap();
        assert_eq!(h.len(), 4);
        assert!(h.max() >= 4_990_000, "values past any timeout are kept");
    }
}
