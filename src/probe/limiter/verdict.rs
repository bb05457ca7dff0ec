//! The verdict: which limiter a trial's figures name, checked against
//! named thresholds (each documented in `docs/limiter.md`), in the USE
//! method's spirit: errors first, then saturation, then utilisation
//! (Brendan Gregg, <https://www.brendangregg.com/usemethod.html>).
//!
//! Order: a client-bound trial describes the client, so nothing else is
//! named first. Then the counters that only move when a resource overflows
//! (listen queue, UDP receive buffer, memory: the USE method's errors,
//! per resource). Then, between the server's CPU and its threads' blocked
//! time, the one that passes its threshold by the larger factor. The
//! load's own errors (timeouts, refused connections) come last: they are
//! usually the symptom of a limit named above, and are named only when no
//! resource explains them. "no limiter found" when nothing passes.

use super::LimiterFigures;
use crate::probe::background::Background;
use serde::{Deserialize, Serialize};

/// The server used at least this share of the CPUs it may use: CPU saturated.
pub const SERVER_CPU_SHARE: f64 = 0.85;
/// The server's active threads were sampled waiting on a lock (or a local
/// event) at least this share of the time: blocked on locks.
pub const LOCK_WAIT_SHARE: f64 = 0.30;
/// The server's threads waited in the run queue at least this share of
/// their runnable time (wait over wait plus on-CPU): CPU saturated, even
/// when other work on the machine kept the server's own CPU share low.
pub const RUNQ_WAIT_SHARE: f64 = 0.50;
/// ... waiting on storage at least this share of the time: blocked on I/O.
pub const IO_WAIT_SHARE: f64 = 0.20;
/// At least this many connections dropped or overflowed at the listen
/// queue (`ListenOverflows`, `ListenDrops`, `TCPBacklogDrop`) in the window.
pub const LISTEN_DROPS_MIN: u64 = 1;
/// UDP datagrams dropped for a full receive buffer (`RcvbufErrors`) at
/// least this share of those that arrived.
pub const UDP_RCVBUF_ERROR_SHARE: f64 = 0.001;
/// The server's tree took at least this many major page faults a second.
pub const MAJOR_FAULTS_PER_S: f64 = 10.0;
/// The machine swapped in or out at least this many pages a second.
pub const SWAP_PAGES_PER_S: f64 = 1.0;

/// What limited a trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimiterKind {
    /// The load generator, not the server.
    ClientBound,
    /// Connections dropped at the server's listen queue.
    ListenOverflow,
    /// Datagrams dropped at the server's full UDP receive buffer.
    UdpReceiveErrors,
    /// Major faults or swapping.
    MemoryPressure,
    /// The load's errors (above `analysis::compare::MAX_ERROR_RATE`).
    Errors,
    /// The server's CPUs.
    ServerCpu,
    /// The server's threads waited for a CPU that other processes (or the hypervisor)
    /// took: the run queue was long, the server itself not busy, and the background
    /// passed `probe::background::BACKGROUND_SHARE`.
    BackgroundLoad,
    /// The server's threads blocked on locks or local events.
    LockWaits,
    /// The server's threads blocked on storage.
    IoWaits,
    /// Nothing passed its threshold.
    None,
}

impl LimiterKind {
    /// The words the table, the chart and the verdict use.
    pub fn label(self) -> &'static str {
        match self {
            LimiterKind::ClientBound => "client-bound",
            LimiterKind::ListenOverflow => "listen-queue overflow",
            LimiterKind::UdpReceiveErrors => "UDP receive errors",
            LimiterKind::MemoryPressure => "memory pressure",
            LimiterKind::Errors => "errors",
            LimiterKind::ServerCpu => "server CPU saturated",
            LimiterKind::BackgroundLoad => "CPU taken by background load",
            LimiterKind::LockWaits => "blocked on locks",
            LimiterKind::IoWaits => "blocked on I/O",
            LimiterKind::None => "no limiter found",
        }
    }
}

/// The numbers behind a verdict (exported with it). `None`: not measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LimiterNumbers {
    /// The server's CPU time over the CPUs it may use (0..1).
    pub server_cpu_share: Option<f64>,
    /// The CPUs the server may use.
    pub server_cpus: u32,
    /// Seconds the server's threads waited in the run queue.
    pub runq_wait_s: Option<f64>,
    /// Run-queue wait over run-queue wait plus on-CPU time (0..1).
    pub runq_wait_share: Option<f64>,
    /// Active server threads (see `LimiterFigures::threads_active`).
    pub threads_active: Option<u32>,
    /// Share of the active threads' sampled time off-CPU and not runnable (0..1).
    pub blocked_share: Option<f64>,
    /// ... of which on locks or local events.
    pub lock_wait_share: Option<f64>,
    /// ... on storage.
    pub io_wait_share: Option<f64>,
    /// ... on the network.
    pub network_wait_share: Option<f64>,
    /// Listen-queue drops: the larger of `ListenOverflows` and `ListenDrops`, plus
    /// `TCPBacklogDrop`.
    pub listen_drops: Option<u64>,
    /// `RcvbufErrors` over datagrams that arrived (received plus dropped).
    pub udp_rcvbuf_error_share: Option<f64>,
    /// `RcvbufErrors` in the window.
    pub udp_rcvbuf_errors: Option<u64>,
    /// The server's major faults a second.
    pub major_faults_per_s: Option<f64>,
    /// Pages swapped in plus out a second (the machine).
    pub swap_pages_per_s: Option<f64>,
    /// Bytes the server read from storage a second.
    pub read_bytes_per_s: Option<f64>,
    /// The load's errors over its attempts.
    pub error_share: Option<f64>,
    /// The background's share of all CPUs (`probe::background`).
    pub background_share: Option<f64>,
}

/// A trial's limiter: the verdict and the numbers behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limiter {
    /// What limited the trial.
    pub kind: LimiterKind,
    /// One sentence: the limiter and the figure that names it.
    pub verdict: String,
    /// Every limiter whose threshold was passed, in the order of precedence (the first is
    /// `kind`); empty for "no limiter found".
    pub crossed: Vec<LimiterKind>,
    /// The figures.
    pub figures: LimiterNumbers,
}

/// What [`judge`] reads.
#[derive(Clone, Copy, Debug)]
pub struct LimiterInputs<'a> {
    /// The probe's limiter figures (`None`: no local probe of the server).
    pub figures: Option<&'a LimiterFigures>,
    /// What the rest of the machine used.
    pub background: Option<Background>,
    /// The measured window, seconds.
    pub window_s: f64,
    /// The server's CPU-seconds.
    pub server_cpu_s: Option<f64>,
    /// CPUs the server may use.
    pub server_cpus: u32,
    /// Why the trial is client-bound, if it is.
    pub client_bound: Option<&'a str>,
    /// The load's errors and completed requests.
    pub errors: u64,
    /// Completed requests.
    pub requests: u64,
}

/// The trial's limiter.
pub fn judge(i: &LimiterInputs) -> Limiter {
    let n = numbers(i);
    let mut crossed: Vec<(LimiterKind, String)> = Vec::new();
    // The kernel's own drop counters come first: a listen queue or a socket
    // buffer that overflowed is the server not keeping up, whether or not
    // the load generator was also short of CPU (it then offered less, so
    // the overflow is if anything understated).
    overflow_checks(&n, &mut crossed);
    if let Some(why) = i.client_bound {
        crossed.push((LimiterKind::ClientBound, why.to_string()));
    }
    crossed.extend(server_checks(&n));
    if let Some(e) = n
        .error_share
        .filter(|e| *e > crate::analysis::compare::MAX_ERROR_RATE)
    {
        crossed.push((
            LimiterKind::Errors,
            format!("{} errors, {:.2}% of attempts", i.errors, e * 100.0),
        ));
    }
    let (kind, why) = crossed
        .first()
        .cloned()
        .unwrap_or((LimiterKind::None, no_limiter(&n)));
    let noise = i
        .background
        .filter(|b| b.noisy)
        .map(|b| format!(" (background load: {})", b.describe()))
        .unwrap_or_default();
    Limiter {
        kind,
        verdict: format!("{}: {why}{noise}", kind.label()),
        crossed: crossed.iter().map(|(k, _)| *k).collect(),
        figures: n,
    }
}

fn numbers(i: &LimiterInputs) -> LimiterNumbers {
    let per_s = |v: f64| (i.window_s > 0.0).then(|| v / i.window_s);
    let f = i.figures;
    let w = f.map(|f| f.waits);
    let share = |c: fn(&super::WaitCounts) -> u64| w.and_then(|w| w.share(c(&w)));
    let attempts = i.requests + i.errors;
    LimiterNumbers {
        server_cpu_share: i
            .server_cpu_s
            .filter(|_| i.window_s > 0.0 && i.server_cpus > 0)
            .map(|c| c / (i.window_s * i.server_cpus as f64)),
        server_cpus: i.server_cpus,
        runq_wait_s: f.map(|f| f.runq_wait_s),
        runq_wait_share: f
            .filter(|f| f.runq_wait_s + f.oncpu_s > 0.0)
            .map(|f| f.runq_wait_s / (f.runq_wait_s + f.oncpu_s)),
        threads_active: f.map(|f| f.threads_active),
        blocked_share: share(|w| w.lock + w.io + w.network + w.other),
        lock_wait_share: share(|w| w.lock),
        io_wait_share: share(|w| w.io),
        network_wait_share: share(|w| w.network),
        listen_drops: f.and_then(|f| {
            let drops = f.listen_overflows.max(f.listen_drops)?;
            Some(drops + f.tcp_backlog_drops.unwrap_or(0))
        }),
        udp_rcvbuf_errors: f.and_then(|f| f.udp_rcvbuf_errors),
        udp_rcvbuf_error_share: f.and_then(|f| {
            let (err, got) = (f.udp_rcvbuf_errors?, f.udp_in_datagrams?);
            (err + got > 0).then(|| err as f64 / (err + got) as f64)
        }),
        major_faults_per_s: f.and_then(|f| per_s(f.major_faults as f64)),
        swap_pages_per_s: f.and_then(|f| {
            per_s((f.swap_in_pages.unwrap_or(0) + f.swap_out_pages.unwrap_or(0)) as f64)
        }),
        read_bytes_per_s: f.and_then(|f| per_s(f.read_bytes? as f64)),
        error_share: (attempts > 0).then(|| i.errors as f64 / attempts as f64),
        background_share: i.background.map(|b| b.share),
    }
}

/// The counters that move only when something overflows.
fn overflow_checks(n: &LimiterNumbers, out: &mut Vec<(LimiterKind, String)>) {
    if let Some(d) = n.listen_drops.filter(|d| *d >= LISTEN_DROPS_MIN) {
        out.push((
            LimiterKind::ListenOverflow,
            format!("{d} connections dropped at the listen queue (ListenOverflows/ListenDrops/TCPBacklogDrop)"),
        ));
    }
    if let (Some(s), Some(e)) = (n.udp_rcvbuf_error_share, n.udp_rcvbuf_errors) {
        if s >= UDP_RCVBUF_ERROR_SHARE {
            out.push((
                LimiterKind::UdpReceiveErrors,
                format!("{e} datagrams dropped for a full receive buffer (RcvbufErrors), {:.1}% of those that arrived", s * 100.0),
            ));
        }
    }
    let faults = n.major_faults_per_s.unwrap_or(0.0);
    let swap = n.swap_pages_per_s.unwrap_or(0.0);
    if faults >= MAJOR_FAULTS_PER_S || swap >= SWAP_PAGES_PER_S {
        out.push((
            LimiterKind::MemoryPressure,
            format!("{faults:.0} major faults/s in the server, {swap:.0} pages/s swapped"),
        ));
    }
}

/// CPU against blocked time: whichever passes its threshold by more first.
fn server_checks(n: &LimiterNumbers) -> Vec<(LimiterKind, String)> {
    let mut found: Vec<(f64, LimiterKind, String)> = Vec::new();
    let cpu = n.server_cpu_share.unwrap_or(0.0);
    let runq = n.runq_wait_share.unwrap_or(0.0);
    if cpu >= SERVER_CPU_SHARE || runq >= RUNQ_WAIT_SHARE {
        // Saturated by the run queue alone, beside background load: the CPU
        // went to other processes, not to the server.
        let noisy = n
            .background_share
            .is_some_and(|b| b >= crate::probe::background::BACKGROUND_SHARE);
        let kind = if cpu < SERVER_CPU_SHARE && noisy {
            LimiterKind::BackgroundLoad
        } else {
            LimiterKind::ServerCpu
        };
        found.push((
            (cpu / SERVER_CPU_SHARE).max(runq / RUNQ_WAIT_SHARE),
            kind,
            format!(
                "server busy {:.0}% of its {} CPU(s); its threads waited {:.2} s for a CPU, {:.0}% of their runnable time",
                cpu * 100.0,
                n.server_cpus,
                n.runq_wait_s.unwrap_or(0.0),
                runq * 100.0
            ),
        ));
    }
    let blocked = |share: f64| {
        format!(
            "{} active thread(s) sampled {:.0}% of the time waiting on locks/events, {:.0}% on I/O, {:.0}% on the network",
            n.threads_active.unwrap_or(0),
            n.lock_wait_share.unwrap_or(0.0) * 100.0,
            n.io_wait_share.unwrap_or(0.0) * 100.0,
            share * 100.0
        )
    };
    let net = n.network_wait_share.unwrap_or(0.0);
    if let Some(l) = n.lock_wait_share.filter(|l| *l >= LOCK_WAIT_SHARE) {
        found.push((l / LOCK_WAIT_SHARE, LimiterKind::LockWaits, blocked(net)));
    }
    if let Some(io) = n.io_wait_share.filter(|s| *s >= IO_WAIT_SHARE) {
        let read = n
            .read_bytes_per_s
            .map(|r| format!("; read {:.1} MB/s from storage", r / 1e6))
            .unwrap_or_default();
        found.push((
            io / IO_WAIT_SHARE,
            LimiterKind::IoWaits,
            blocked(net) + &read,
        ));
    }
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    found.into_iter().map(|(_, k, w)| (k, w)).collect()
}

fn no_limiter(n: &LimiterNumbers) -> String {
    let cpu = n
        .server_cpu_share
        .map(|c| format!("server busy {:.0}% of its CPUs", c * 100.0))
        .unwrap_or_else(|| "no server CPU figure".into());
    format!("{cpu}, under every threshold")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::limiter::WaitCounts;

    fn inputs(f: &LimiterFigures) -> LimiterInputs<'_> {
        LimiterInputs {
            figures: Some(f),
            background: None,
            window_s: 10.0,
            server_cpu_s: Some(5.0),
            server_cpus: 2,
            client_bound: None,
            errors: 0,
            requests: 1000,
        }
    }

    fn waits(running: u64, lock: u64, network: u64) -> WaitCounts {
        WaitCounts {
            running,
            lock,
            network,
            ..WaitCounts::default()
        }
    }

    #[test]
    fn nothing_crossing_is_no_limiter_found() {
        let f = LimiterFigures {
            waits: waits(50, 5, 45),
            threads_active: 4,
            ..LimiterFigures::default()
        };
        let l = judge(&inputs(&f));
        assert_eq!(l.kind, LimiterKind::None);
        assert!(l.crossed.is_empty());
        assert!(
            l.verdict.starts_with("no limiter found: server busy 25%"),
            "{}",
            l.verdict
        );
    }

    #[test]
    fn cpu_and_locks_the_larger_factor_wins() {
        let f = LimiterFigures {
            waits: waits(20, 70, 10),
            runq_wait_s: 1.5,
            oncpu_s: 9.0,
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.server_cpu_s = Some(18.0); // 90% of 2 CPUs: 1.06x its threshold; locks 70%: 2.3x
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::LockWaits, "{}", l.verdict);
        assert_eq!(
            l.crossed,
            vec![LimiterKind::LockWaits, LimiterKind::ServerCpu]
        );
        assert!(
            l.verdict.contains("70% of the time waiting on locks"),
            "{}",
            l.verdict
        );
        let f = LimiterFigures {
            waits: waits(90, 5, 5),
            ..f
        };
        let l = judge(&LimiterInputs {
            figures: Some(&f),
            ..i
        });
        assert_eq!(l.kind, LimiterKind::ServerCpu);
        assert!(
            l.verdict
                .contains("busy 90% of its 2 CPU(s); its threads waited 1.50 s"),
            "{}",
            l.verdict
        );
        // A server starved by other work: low CPU share, long run-queue waits.
        let f = LimiterFigures {
            runq_wait_s: 6.0,
            oncpu_s: 2.0,
            ..f
        };
        let starved = LimiterInputs {
            figures: Some(&f),
            server_cpu_s: Some(2.0),
            background: crate::probe::background::measure(
                crate::probe::background::BackgroundInputs {
                    busy_share: 1.0,
                    steal_share: 0.0,
                    window_s: 10.0,
                    online_cpus: 2,
                    server_cpu_s: 2.0,
                    own_cpu_s: 3.0,
                },
            ),
            ..i
        };
        let l = judge(&starved);
        assert_eq!(l.kind, LimiterKind::BackgroundLoad);
        assert!(
            l.verdict
                .starts_with("CPU taken by background load: server busy 10%"),
            "{}",
            l.verdict
        );
        assert!(
            l.verdict.contains("75% of their runnable time"),
            "{}",
            l.verdict
        );
        assert!(
            l.verdict
                .contains("background load: other processes used 15.00 CPU-s"),
            "{}",
            l.verdict
        );
    }

    #[test]
    fn overflow_counters_come_before_the_cpu_and_client_bound_before_all() {
        let f = LimiterFigures {
            listen_overflows: Some(40),
            listen_drops: Some(41),
            tcp_backlog_drops: Some(0),
            udp_rcvbuf_errors: Some(5),
            udp_in_datagrams: Some(995),
            major_faults: 200,
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.server_cpu_s = Some(19.0);
        let l = judge(&i);
        assert_eq!(
            l.crossed,
            vec![
                LimiterKind::ListenOverflow,
                LimiterKind::UdpReceiveErrors,
                LimiterKind::MemoryPressure,
                LimiterKind::ServerCpu
            ]
        );
        assert!(
            l.verdict
                .starts_with("listen-queue overflow: 41 connections"),
            "{}",
            l.verdict
        );
        assert_eq!(l.figures.udp_rcvbuf_error_share, Some(0.005));
        assert_eq!(l.figures.major_faults_per_s, Some(20.0));
        i.client_bound = Some("the load generator used 1.9 CPU-s");
        i.errors = 2;
        let l = judge(&i);
        assert_eq!(
            l.kind,
            LimiterKind::ListenOverflow,
            "the kernel's drops first"
        );
        assert!(l.crossed.contains(&LimiterKind::ClientBound));
        assert!(l.crossed.contains(&LimiterKind::Errors));
    }

    #[test]
    fn the_loads_errors_are_named_only_when_no_resource_explains_them() {
        let f = LimiterFigures {
            waits: waits(20, 70, 10),
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.errors = 1;
        i.requests = 229;
        let l = judge(&i);
        assert_eq!(l.crossed, vec![LimiterKind::LockWaits, LimiterKind::Errors]);
        let quiet = LimiterFigures::default();
        let l = judge(&LimiterInputs {
            figures: Some(&quiet),
            ..i
        });
        assert_eq!(l.kind, LimiterKind::Errors);
        assert!(
            l.verdict.starts_with("errors: 1 errors, 0.43% of attempts"),
            "{}",
            l.verdict
        );
    }

    #[test]
    fn without_a_probe_only_the_load_speaks() {
        let l = judge(&LimiterInputs {
            figures: None,
            background: None,
            window_s: 1.0,
            server_cpu_s: None,
            server_cpus: 1,
            client_bound: None,
            errors: 0,
            requests: 10,
        });
        assert_eq!(l.kind, LimiterKind::None);
        assert!(l.verdict.contains("no server CPU figure"));
        assert_eq!(LimiterKind::IoWaits.label(), "blocked on I/O");
    }
}
