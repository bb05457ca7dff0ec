//! The mergeable result of a load run.

use super::histogram::{encode_histogram, new_histogram};
use crate::units::{Bytes, CpuSeconds, Micros, PerSecond, Seconds};
use hdrhistogram::Histogram;
use std::time::Duration;

pub use scalelab_record::errors::{ErrorCounts, ErrorKind};
pub use scalelab_record::measurement::{LatencySummary, Measurement};

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
