//! The mergeable result of a load run.

use super::histogram::{encode_histogram, new_histogram};
use crate::units::{Bytes, CpuSeconds, Micros};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Failure counts by kind. Per-request failures never abort a run; they are
/// counted here (wrk's "Socket errors: connect, read, write, timeout" plus
/// non-2xx statuses; pgbench's failures by SQLSTATE class).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(deny_unknown_fields)]
pub struct ErrorCounts {
    /// Connections that could not be opened (refused, unreachable, or no free local port).
    pub connect: u64,
    /// Failed reads: the connection was reset or closed before a whole response arrived.
    pub read: u64,
    /// Failed writes of a request.
    pub write: u64,
    /// Requests that got no complete response within the timeout.
    pub timeout: u64,
    /// Responses with a non-2xx HTTP status (they still count as requests).
    pub status: u64,
    /// Malformed responses or protocol violations.
    pub protocol: u64,
    /// SQL serialization failures (SQLSTATE 40001), after retries ran out.
    pub serialization: u64,
    /// SQL deadlocks (SQLSTATE 40P01), after retries ran out.
    pub deadlock: u64,
    /// Any other server-reported error.
    pub other: u64,
}

/// One kind of per-request failure: the one list every report, CSV column
/// and JSON export iterates ([`ErrorKind::ALL`]); each load kind declares
/// the subset its driver counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A connection could not be opened ([`ErrorCounts::connect`]).
    Connect,
    /// A read failed ([`ErrorCounts::read`]).
    Read,
    /// A write failed ([`ErrorCounts::write`]).
    Write,
    /// No response in time ([`ErrorCounts::timeout`]).
    Timeout,
    /// A non-2xx HTTP status ([`ErrorCounts::status`]).
    Status,
    /// A malformed response ([`ErrorCounts::protocol`]).
    Protocol,
    /// SQLSTATE 40001 after retries ([`ErrorCounts::serialization`]).
    Serialization,
    /// SQLSTATE 40P01 after retries ([`ErrorCounts::deadlock`]).
    Deadlock,
    /// Any other server-reported error ([`ErrorCounts::other`]).
    Other,
}

impl ErrorKind {
    /// Every kind, in report and CSV column order.
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Status,
        ErrorKind::Protocol,
        ErrorKind::Serialization,
        ErrorKind::Deadlock,
        ErrorKind::Other,
    ];

    /// Failures of the socket or the protocol on it (everything the server
    /// did not report itself): what `socket errors` lines count.
    pub const SOCKET: [ErrorKind; 5] = [
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
    ];

    /// What a request/reply protocol counts (HTTP, DNS): the socket's
    /// failures and replies with an error status.
    pub const REQUEST_REPLY: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Status,
        ErrorKind::Protocol,
    ];

    /// What a serializable SQL server's transactions count (PostgreSQL):
    /// the socket's failures, serialization failures, deadlocks and other
    /// SQL errors.
    pub const SQL_SERIALIZABLE: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Serialization,
        ErrorKind::Deadlock,
        ErrorKind::Other,
    ];

    /// What a locking SQL server's transactions count (MySQL/MariaDB):
    /// as [`ErrorKind::SQL_SERIALIZABLE`] without serialization failures.
    pub const SQL_LOCKING: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::Timeout,
        ErrorKind::Protocol,
        ErrorKind::Deadlock,
        ErrorKind::Other,
    ];

    /// After a count in prose: `12 timeouts`, `3 connect`.
    pub fn counted(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeouts",
            ErrorKind::Connect
            | ErrorKind::Read
            | ErrorKind::Write
            | ErrorKind::Status
            | ErrorKind::Protocol
            | ErrorKind::Serialization
            | ErrorKind::Deadlock
            | ErrorKind::Other => self.name(),
        }
    }

    /// The name in reports, CSV columns (`errors_<name>`) and JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Read => "read",
            ErrorKind::Write => "write",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Status => "status",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Serialization => "serialization",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Other => "other",
        }
    }
}

impl ErrorCounts {
    fn slot(&mut self, kind: ErrorKind) -> &mut u64 {
        match kind {
            ErrorKind::Connect => &mut self.connect,
            ErrorKind::Read => &mut self.read,
            ErrorKind::Write => &mut self.write,
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::Status => &mut self.status,
            ErrorKind::Protocol => &mut self.protocol,
            ErrorKind::Serialization => &mut self.serialization,
            ErrorKind::Deadlock => &mut self.deadlock,
            ErrorKind::Other => &mut self.other,
        }
    }

    /// The count of one kind.
    pub fn get(&self, kind: ErrorKind) -> u64 {
        let mut copy = *self;
        *copy.slot(kind)
    }

    /// Counts one failure.
    pub fn add(&mut self, kind: ErrorKind) {
        *self.slot(kind) += 1;
    }

    /// Adds another worker's counts.
    pub fn merge(&mut self, o: &ErrorCounts) {
        for k in ErrorKind::ALL {
            *self.slot(k) += o.get(k);
        }
    }

    /// `(kind, count)` for every kind with failures, in [`ErrorKind::ALL`]
    /// order.
    pub fn nonzero(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        ErrorKind::ALL
            .into_iter()
            .map(|k| (k, self.get(k)))
            .filter(|(_, n)| *n > 0)
    }

    /// Socket-level and protocol failures ([`ErrorKind::SOCKET`]).
    pub fn socket_errors(&self) -> u64 {
        ErrorKind::SOCKET.into_iter().map(|k| self.get(k)).sum()
    }

    /// The counts of `kinds`, in their order: `connect 0, read 2, timeout 1`.
    pub fn listed(&self, kinds: &[ErrorKind]) -> String {
        kinds
            .iter()
            .map(|&k| format!("{} {}", k.name(), self.get(k)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every failure, of every kind.
    pub fn total(&self) -> u64 {
        self.socket_errors() + self.status + self.serialization + self.deadlock + self.other
    }

    /// The non-zero kinds, largest first (ties in [`ErrorKind::ALL`]
    /// order): `31042 timeouts, 1906 connect`.
    pub fn kinds(&self) -> String {
        let mut kinds: Vec<(ErrorKind, u64)> = self.nonzero().collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        kinds
            .iter()
            .map(|(k, n)| format!("{n} {}", k.counted()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The errors of a table cell: `0`, `12 timeouts` (one kind), or
    /// `32948: 31042 timeouts, 1906 connect` (the total, then each kind).
    pub fn describe(&self) -> String {
        match self.nonzero().count() {
            0 => "0".into(),
            1 => self.kinds(),
            _ => format!("{}: {}", self.total(), self.kinds()),
        }
    }
}

/// What one load run measured, summarised: what the store keeps per trial
/// and what `scalelab load --json` prints. Built from a [`LoadResult`] in
/// one place (`From<&LoadResult>`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measurement {
    /// Completed requests (or transactions, queries, frames).
    pub requests: u64,
    /// Wall-clock seconds of the measured run.
    pub duration_s: f64,
    /// The headline throughput ([`LoadResult::throughput`]): completed requests per second, or
    /// a ramp's maximum answer rate.
    pub rps: f64,
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
    pub client_cpu_s: f64,
    /// The offered rate of an open-loop run (requests per second); `None` for a closed loop.
    pub target_rate: Option<f64>,
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
            duration_s: secs,
            rps: r.throughput(),
            bytes: r.bytes.0,
            gbit_s: r.bytes.gbit_per_s(secs),
            errors: r.errors,
            retries: r.retries,
            latency_us: r.latency_summary(),
            client_cpu_s: r.client_cpu.0,
            target_rate: r.target_rate,
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
}

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
    /// Completed requests per whole second since the run started.
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
    /// Datagram drivers' extra counts (`None` for connection protocols).
    pub datagrams: Option<Datagrams>,
    /// The forwarding search's steps and kernel counters (`forward` load).
    pub forward: Option<Box<crate::load::forward::ForwardReport>>,
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
            datagrams: None,
            forward: None,
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
        let sec = since_start.as_secs() as usize;
        if self.timeline.len() <= sec {
            self.timeline.resize(sec + 1, 0);
        }
        self.timeline[sec] += 1;
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
        if self.forward.is_none() {
            self.forward.clone_from(&o.forward);
        }
        for n in &o.notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
    }

    /// The run's headline throughput: a ramp's maximum answer rate, else
    /// completed requests per second of wall time.
    pub fn throughput(&self) -> f64 {
        match self.datagrams.as_ref().and_then(|d| d.ramp.as_ref()) {
            Some(r) => r.max_throughput,
            None => self.rps(),
        }
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
    fn error_lines_list_the_named_sets_in_order() {
        let mut e = ErrorCounts::default();
        e.add(ErrorKind::Timeout);
        e.add(ErrorKind::Timeout);
        e.add(ErrorKind::Connect);
        e.add(ErrorKind::Deadlock);
        assert_eq!(
            e.listed(&ErrorKind::SOCKET),
            "connect 1, read 0, write 0, timeout 2, protocol 0"
        );
        assert_eq!(e.socket_errors(), 3);
        assert_eq!(
            e.listed(ErrorKind::SQL_LOCKING),
            "connect 1, read 0, write 0, timeout 2, protocol 0, deadlock 1, other 0"
        );
        // Each set is in report order, and the SQL sets differ only by
        // serialization failures.
        for set in [
            ErrorKind::REQUEST_REPLY,
            ErrorKind::SQL_SERIALIZABLE,
            ErrorKind::SQL_LOCKING,
        ] {
            let order: Vec<usize> = set
                .iter()
                .map(|k| ErrorKind::ALL.iter().position(|a| a == k).unwrap())
                .collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{set:?}");
        }
        let without: Vec<_> = ErrorKind::SQL_SERIALIZABLE
            .iter()
            .filter(|k| **k != ErrorKind::Serialization)
            .copied()
            .collect();
        assert_eq!(without, ErrorKind::SQL_LOCKING);
    }

    #[test]
    fn errors_are_described_by_kind_largest_first() {
        let mut e = ErrorCounts::default();
        assert_eq!(e.describe(), "0");
        for _ in 0..3 {
            e.add(ErrorKind::Timeout);
        }
        assert_eq!(e.describe(), "3 timeouts");
        for _ in 0..5 {
            e.add(ErrorKind::Status);
        }
        e.add(ErrorKind::Connect);
        assert_eq!(e.describe(), "9: 5 status, 3 timeouts, 1 connect");
    }

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = LoadResult::new();
        let mut b = LoadResult::new();
        a.record(Micros(100), Duration::from_millis(10));
        b.record(Micros(300), Duration::from_millis(1500));
        b.errors.add(ErrorKind::Timeout);
        b.elapsed = Duration::from_secs(2);
        a.merge(&b);
        assert_eq!(a.requests, 2);
        assert_eq!(a.timeline, vec![1, 1]);
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
