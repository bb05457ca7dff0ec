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

pub use super::numbers::{LimiterKind, LimiterNumbers};
use super::LimiterFigures;
use crate::probe::background::Background;
pub use scalelab_record::probe::limiter::Limiter;

pub use super::balance::{IMBALANCE_MIN_ONCPU, WORKER_IMBALANCE_FACTOR};
pub use super::cpu::{
    CPUS_FULL_SHARE, LOADGEN_CPU_SHARE, RUNQ_CONTENDED_SHARE, RUNQ_WAIT_SHARE, SERVER_CPU_SHARE,
    THREAD_ONCPU_SHARE,
};

/// The server's active threads were sampled waiting on a lock (or a local
/// event) at least this share of the time: blocked on locks.
pub const LOCK_WAIT_SHARE: f64 = 0.30;
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
    /// The server's own wait counters over the window, where it keeps them.
    pub server_waits: Option<super::server_waits::ServerWaits>,
    /// Each worker's requests in the window, where the server counts them
    /// per worker (`balance::worker_requests_between`).
    pub worker_requests: Option<&'a [u64]>,
    /// Why the trial is client-bound, if it is.
    pub client_bound: Option<&'a str>,
    /// The busy share of the CPUs the server may use, every process counted.
    pub cpus_busy_share: Option<f64>,
    /// The load generator's CPU-seconds when it ran on the server's CPUs (`None`: it
    /// ran apart, or on another host).
    pub client_cpu_s: Option<f64>,
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
    // Said once: a starved client's reason already names the background.
    let noise = match i.background {
        Some(b) if b.server_unknown => format!(" (background {})", b.describe()),
        Some(b) if b.noisy && !why.contains(&b.describe()) => {
            format!(" (background load: {})", b.describe())
        }
        Some(_) | None => String::new(),
    };
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
    let schema = |c: fn(&super::server_waits::SchemaWaitSeconds) -> f64| {
        let w = i.server_waits?.schema?;
        per_s(c(&w))
    };
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
        lock_woken_share: share(|w| w.lock_woken),
        io_wait_share: share(|w| w.io),
        network_wait_share: share(|w| w.network),
        runqueue_share: share(|w| w.runqueue),
        listen_drops: f.and_then(|f| {
            let c = &f.counters;
            let drops = c.listen_overflows.max(c.listen_drops)?;
            Some(drops + c.tcp_backlog_drops.unwrap_or(0))
        }),
        udp_rcvbuf_errors: f.and_then(|f| f.counters.udp_rcvbuf_errors),
        udp_rcvbuf_error_share: f.and_then(|f| {
            let (err, got) = (f.counters.udp_rcvbuf_errors?, f.counters.udp_in_datagrams?);
            (err + got > 0).then(|| err as f64 / (err + got) as f64)
        }),
        major_faults_per_s: f.and_then(|f| per_s(f.major_faults as f64)),
        swap_pages_per_s: f.and_then(|f| {
            let c = &f.counters;
            per_s((c.swap_in_pages.unwrap_or(0) + c.swap_out_pages.unwrap_or(0)) as f64)
        }),
        read_bytes_per_s: f.and_then(|f| per_s(f.read_bytes? as f64)),
        error_share: (attempts > 0).then(|| i.errors as f64 / attempts as f64),
        background_share: i.background.and_then(|b| b.known_share()),
        cpus_busy_share: i.cpus_busy_share,
        client_cpu_share: i
            .client_cpu_s
            .filter(|_| i.window_s > 0.0 && i.server_cpus > 0)
            .map(|c| c / (i.window_s * i.server_cpus as f64)),
        row_lock_waits: i.server_waits.map(|w| w.row_lock_waits),
        row_lock_wait_share: i.server_waits.zip(f).and_then(|(w, f)| {
            let thread_s = f.threads_active as f64 * i.window_s;
            (thread_s > 0.0).then(|| w.row_lock_wait_s / thread_s)
        }),
        requests_per_row_lock_wait: i
            .server_waits
            .filter(|w| w.row_lock_waits > 0)
            .map(|w| i.requests as f64 / w.row_lock_waits as f64),
        pool_threads: i.server_waits.and_then(|w| w.pool_threads),
        pool_idle_threads: i.server_waits.and_then(|w| w.pool_idle_threads),
        schema_pool_waiting: schema(|w| w.pool_s),
        schema_synch_waiting: schema(|w| w.synch_s),
        schema_lock_waiting: schema(|w| w.lock_s),
        row_lock_waiting: i.server_waits.and_then(|w| per_s(w.row_lock_wait_s)),
        worker_requests: i.worker_requests.map(<[u64]>::to_vec),
        ..per_thread(f)
    }
}

/// The figures of single threads: the busiest, and the workers.
fn per_thread(f: Option<&LimiterFigures>) -> LimiterNumbers {
    let Some(f) = f else {
        return LimiterNumbers::default();
    };
    let (busiest, at_full) = super::cpu::busiest_thread(f);
    let w = super::balance::workers(f);
    LimiterNumbers {
        busiest_thread_oncpu_share: busiest.map(|b| b.0),
        busiest_thread_runnable_share: busiest.map(|b| b.1),
        threads_at_full_cpu: busiest.map(|_| at_full),
        workers: Some(f.workers),
        worker_cpu_shares: w.shares,
        busiest_worker_share: w.busiest_share,
        busiest_worker_oncpu_share: w.busiest_oncpu,
        worker_imbalance: w.imbalance,
        ..LimiterNumbers::default()
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
/// An imbalance comes before the CPU (the server's, shared, or taken by
/// the background): a saturated worker beside idle ones is its symptom.
fn server_checks(n: &LimiterNumbers) -> Vec<(LimiterKind, String)> {
    let mut found: Vec<(f64, LimiterKind, String)> = Vec::new();
    found.extend(super::cpu::check(n));
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
        let (kind, why) = checked_by_the_server(n, blocked(net));
        found.push((l / LOCK_WAIT_SHARE, kind, why));
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
    if let Some(imbalance) = super::balance::check(n) {
        let cpu_first = !found.first().is_some_and(|f| {
            !matches!(
                f.1,
                LimiterKind::ServerCpu | LimiterKind::CpusShared | LimiterKind::BackgroundLoad
            )
        });
        found.insert(if cpu_first { 0 } else { found.len() }, imbalance);
    }
    found.into_iter().map(|(_, k, w)| (k, w)).collect()
}

/// A lock verdict against the server's own row-lock count, where it keeps
/// one: the futex waits the limiter sampled are row locks only as far as
/// the server counted them; in a thread pool, the rest are its threads
/// waiting for work or for their turn.
fn checked_by_the_server(n: &LimiterNumbers, why: String) -> (LimiterKind, String) {
    let (Some(waits), Some(share)) = (n.row_lock_waits, n.row_lock_wait_share) else {
        return (LimiterKind::LockWaits, why);
    };
    let per = n
        .requests_per_row_lock_wait
        .map(|r| format!(", 1 per {r:.0} requests"))
        .unwrap_or_default();
    let counted = format!(
        "the server counted {waits} row-lock waits (Innodb_row_lock_waits{per}), {:.0}% of the threads' time (Innodb_row_lock_time)",
        share * 100.0
    );
    let counted = counted + &schema_counted(n);
    // performance_schema, where it is on, says which waits the threads
    // were in: the pool's own conditions, or the server's locks.
    let schema_says_pool = n
        .schema_pool_waiting
        .zip(n.schema_synch_waiting)
        .map(|(pool, synch)| pool > synch + n.schema_lock_waiting.unwrap_or(0.0));
    let pooled = n.pool_threads.is_some_and(|t| t > 0);
    if share >= LOCK_WAIT_SHARE || !pooled || schema_says_pool == Some(false) {
        return (LimiterKind::LockWaits, format!("{why}; {counted}"));
    }
    (
        LimiterKind::PoolWaits,
        format!(
            "{why}, but {counted}: the thread pool's {} threads ({} idle at the end) waiting for work or their turn, not row locks",
            n.pool_threads.unwrap_or(0),
            n.pool_idle_threads.unwrap_or(0)
        ),
    )
}

/// performance_schema's figures for the verdict's words, where it is on.
fn schema_counted(n: &LimiterNumbers) -> String {
    let (Some(pool), Some(synch)) = (n.schema_pool_waiting, n.schema_synch_waiting) else {
        return String::new();
    };
    format!(
        "; performance_schema: on average {pool:.1} threads waited in the thread pool \
         (wait/synch/cond/threadpool), {synch:.2} on the server's mutexes and conditions \
         (wait/synch), {:.2} on table locks (wait/lock), {:.2} on row locks",
        n.schema_lock_waiting.unwrap_or(0.0),
        n.row_lock_waiting.unwrap_or(0.0)
    )
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
    use crate::probe::limiter::Counters;
    use crate::probe::limiter::WaitCounts;

    fn inputs(f: &LimiterFigures) -> LimiterInputs<'_> {
        LimiterInputs {
            figures: Some(f),
            background: None,
            window_s: 10.0,
            server_cpu_s: Some(5.0),
            server_cpus: 2,
            client_bound: None,
            server_waits: None,
            worker_requests: None,
            cpus_busy_share: Some(0.6),
            client_cpu_s: Some(2.0),
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
            ..f.clone()
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
            ..f.clone()
        };
        let starved = LimiterInputs {
            figures: Some(&f),
            server_cpu_s: Some(2.0),
            cpus_busy_share: Some(1.0),
            client_cpu_s: Some(3.0),
            background: crate::probe::background::measure(
                crate::probe::background::BackgroundInputs {
                    busy_share: 1.0,
                    steal_share: 0.0,
                    window_s: 10.0,
                    online_cpus: 2,
                    server_cpu_s: Some(2.0),
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
            counters: Counters {
                listen_overflows: Some(40),
                listen_drops: Some(41),
                tcp_backlog_drops: Some(0),
                udp_rcvbuf_errors: Some(5),
                udp_in_datagrams: Some(995),
                ..Counters::default()
            },
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
            server_waits: None,
            worker_requests: None,
            cpus_busy_share: None,
            client_cpu_s: None,
            errors: 0,
            requests: 10,
        });
        assert_eq!(l.kind, LimiterKind::None);
        assert!(l.verdict.contains("no server CPU figure"));
        assert_eq!(LimiterKind::IoWaits.label(), "blocked on I/O");
    }
    /// Threads for [`LimiterFigures::busiest_threads`]: `(on-CPU s, worker)`
    /// over a 10 s window.
    fn threads(list: &[(f64, bool)]) -> Vec<crate::probe::limiter::ThreadFigures> {
        list.iter()
            .enumerate()
            .map(|(i, (cpu, worker))| crate::probe::limiter::ThreadFigures {
                pid: 100 + i as u32,
                tid: 100 + i as u32,
                seen_s: 10.0,
                oncpu_s: *cpu,
                runq_wait_s: 0.1,
                worker: *worker,
            })
            .collect()
    }

    #[test]
    fn one_worker_thread_on_a_cpu_all_the_window_is_saturated_though_the_host_has_an_idle_cpu() {
        // The quickstart's 1 worker: 49% of 2 CPUs, its one thread on a CPU 97%.
        let f = LimiterFigures {
            waits: waits(90, 0, 10),
            window_s: 10.0,
            oncpu_s: 9.7,
            runq_wait_s: 0.3,
            workers: 1,
            workers_cpu_s: 9.7,
            busiest_threads: threads(&[(9.7, true), (0.0, false)]),
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.server_cpu_s = Some(9.8);
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::ServerCpu, "{}", l.verdict);
        assert_eq!(l.figures.busiest_thread_oncpu_share, Some(0.97));
        assert!(
            l.verdict.starts_with(
                "server CPU saturated: 1 of 1 worker thread(s) saturated, wanting a CPU at least 90% of the window: the busiest on a CPU 97% of it (runnable 98%); server busy 49% of its 2 CPU(s)"
            ),
            "{}",
            l.verdict
        );
        // At 80% it is not saturated, and nothing else is named.
        let f = LimiterFigures {
            busiest_threads: threads(&[(8.0, true)]),
            ..f.clone()
        };
        assert_eq!(
            judge(&LimiterInputs {
                figures: Some(&f),
                ..i
            })
            .kind,
            LimiterKind::None
        );
        // On a CPU 85%, in the run queue 8%: it wanted a CPU all along and
        // mostly had one.
        let mut busy = threads(&[(8.5, true)]);
        busy[0].runq_wait_s = 0.8;
        let f = LimiterFigures {
            busiest_threads: busy,
            ..f.clone()
        };
        let kind = |f: &LimiterFigures| {
            judge(&LimiterInputs {
                figures: Some(f),
                ..i
            })
            .kind
        };
        assert_eq!(kind(&f), LimiterKind::ServerCpu);
        // On a CPU 32%, in the run queue 65%: it wanted a CPU, others had it.
        let mut starved = threads(&[(3.2, true)]);
        starved[0].runq_wait_s = 6.5;
        let f = LimiterFigures {
            busiest_threads: starved,
            ..f.clone()
        };
        assert_eq!(kind(&f), LimiterKind::None);
    }

    #[test]
    fn full_cpus_are_shared_with_the_load_generator_or_taken_by_the_background() {
        // The quickstart's 2 workers: 55% of 2 CPUs, the load generator 42%,
        // the workers waiting 45% of their runnable time.
        let f = LimiterFigures {
            waits: waits(90, 0, 10),
            window_s: 10.0,
            oncpu_s: 11.0,
            runq_wait_s: 9.0,
            workers: 2,
            workers_cpu_s: 11.0,
            busiest_threads: threads(&[(5.6, true), (5.4, true)]),
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.server_cpu_s = Some(11.0);
        i.client_cpu_s = Some(8.4);
        i.cpus_busy_share = Some(0.99);
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::CpusShared, "{}", l.verdict);
        assert!(
            l.verdict.starts_with(
                "CPUs full, shared with the load generator: server 55%, load generator 42% of the 2 CPU(s) busy 99%; its threads waited 9.00 s for a CPU, 45%"
            ),
            "{}",
            l.verdict
        );
        assert_eq!(l.figures.worker_imbalance, Some(5.6 / 5.4));
        // CPUs not full: the wait is not named.
        i.cpus_busy_share = Some(0.8);
        assert_eq!(judge(&i).kind, LimiterKind::None);
        // Unless the threads waited as long as they ran: then the CPUs were
        // contended whatever their sampled busy share (the pinned
        // select-only test once read 73% busy with 60% waiting).
        let waited = LimiterFigures {
            runq_wait_s: 11.0,
            ..f.clone()
        };
        let mut w = inputs(&waited);
        w.server_cpu_s = Some(11.0);
        w.client_cpu_s = Some(8.4);
        w.cpus_busy_share = Some(0.8);
        assert_eq!(judge(&w).kind, LimiterKind::CpusShared);
        w.client_cpu_s = None;
        assert_eq!(judge(&w).kind, LimiterKind::ServerCpu);
        // The load generator on other CPUs: the server's own threads queue.
        i.cpus_busy_share = Some(0.99);
        i.client_cpu_s = None;
        assert_eq!(judge(&i).kind, LimiterKind::ServerCpu);
    }

    #[test]
    fn one_worker_runnable_all_the_window_and_queued_names_the_shared_cpus_under_90_busy() {
        // The pidstat test's 1 worker at 64 connections: on a CPU 71%,
        // queued 28% (pidstat 71% and 28%), the CPUs read 89.5% busy.
        let worker = crate::probe::limiter::ThreadFigures {
            pid: 100,
            tid: 100,
            seen_s: 10.0,
            oncpu_s: 7.1,
            runq_wait_s: 2.8,
            worker: true,
        };
        let f = LimiterFigures {
            waits: waits(99, 0, 1),
            window_s: 10.0,
            oncpu_s: 7.1,
            runq_wait_s: 2.8,
            workers: 1,
            workers_cpu_s: 7.1,
            busiest_threads: vec![worker.clone()],
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.server_cpu_s = Some(7.1);
        i.client_cpu_s = Some(10.3);
        i.cpus_busy_share = Some(0.895);
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::CpusShared, "{}", l.verdict);
        // Runnable only 80% of the window: the busy share decides, and
        // 89.5% is not full.
        let part = LimiterFigures {
            busiest_threads: vec![crate::probe::limiter::ThreadFigures {
                oncpu_s: 5.5,
                runq_wait_s: 2.5,
                ..worker
            }],
            oncpu_s: 5.5,
            runq_wait_s: 2.5,
            workers_cpu_s: 5.5,
            ..f.clone()
        };
        let mut p = inputs(&part);
        p.server_cpu_s = Some(5.5);
        p.client_cpu_s = Some(10.3);
        p.cpus_busy_share = Some(0.895);
        assert_eq!(judge(&p).kind, LimiterKind::None, "{}", judge(&p).verdict);
    }

    #[test]
    fn one_worker_doing_the_work_is_named_before_its_cpu() {
        let f = LimiterFigures {
            waits: waits(60, 0, 40),
            window_s: 10.0,
            oncpu_s: 9.6,
            workers: 2,
            workers_cpu_s: 9.6,
            busiest_threads: threads(&[(9.5, true), (0.1, true), (0.0, false)]),
            ..LimiterFigures::default()
        };
        let mut i = inputs(&f);
        i.server_cpu_s = Some(9.6);
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::WorkerImbalance, "{}", l.verdict);
        assert_eq!(
            l.crossed,
            vec![LimiterKind::WorkerImbalance, LimiterKind::ServerCpu]
        );
        assert!(
            l.verdict.starts_with("workers out of balance: one of 2 workers did 99% of the work (on a CPU 95% of the window); the workers' shares of the server's CPU time: 99%, 1%"),
            "{}",
            l.verdict
        );
        // A server that counts each worker's requests: quoted beside.
        let counted = [30, 970];
        i.worker_requests = Some(&counted);
        let l = judge(&i);
        assert!(
            l.verdict
                .ends_with("99%, 1%; the workers' shares of the requests: 97%, 3%"),
            "{}",
            l.verdict
        );
        assert_eq!(l.figures.worker_requests, Some(vec![30, 970]));
        // Two workers that share the work: no imbalance.
        let f = LimiterFigures {
            busiest_threads: threads(&[(5.0, true), (4.6, true)]),
            ..f.clone()
        };
        let l = judge(&LimiterInputs {
            figures: Some(&f),
            ..i
        });
        assert!(
            !l.crossed.contains(&LimiterKind::WorkerImbalance),
            "{}",
            l.verdict
        );
    }
    /// The verdict on `i`: the thread pool, in these words.
    fn named_the_pool(i: &LimiterInputs, words: &str) -> Limiter {
        let l = judge(i);
        assert_eq!(l.kind, LimiterKind::PoolWaits, "{}", l.verdict);
        assert!(l.verdict.contains(words), "{}", l.verdict);
        l
    }

    /// MariaDB's pool-of-threads at 16 clients: 70% of the samples on
    /// futexes.
    fn pool_on_futexes() -> LimiterFigures {
        LimiterFigures {
            waits: waits(20, 70, 10),
            threads_active: 8,
            ..LimiterFigures::default()
        }
    }

    #[test]
    fn futex_waits_the_server_does_not_count_as_row_locks_are_the_thread_pool() {
        // MariaDB's pool-of-threads at 16 clients: 70% of the samples on
        // futexes, 3 row-lock waits of 12 ms in a 10 s window.
        let f = pool_on_futexes();
        let waits = crate::probe::limiter::server_waits::ServerWaits {
            row_lock_waits: 3,
            row_lock_wait_s: 0.012,
            pool_threads: Some(9),
            pool_idle_threads: Some(6),
            schema: None,
        };
        let mut i = inputs(&f);
        i.server_waits = Some(waits);
        let l = named_the_pool(&i, "but the server counted 3 row-lock waits (Innodb_row_lock_waits, 1 per 333 requests), 0% of the threads' time (Innodb_row_lock_time): the thread pool's 9 threads (6 idle at the end)");
        assert_eq!(l.figures.row_lock_waits, Some(3));
        // Row locks the server counted itself: blocked on locks.
        i.server_waits = Some(crate::probe::limiter::server_waits::ServerWaits {
            row_lock_wait_s: 40.0,
            ..waits
        });
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::LockWaits, "{}", l.verdict);
        assert!(
            l.verdict.contains("50% of the threads' time"),
            "{}",
            l.verdict
        );
        // One thread per connection: still locks, with the server's count beside.
        i.server_waits = Some(crate::probe::limiter::server_waits::ServerWaits {
            pool_threads: Some(0),
            ..waits
        });
        assert_eq!(judge(&i).kind, LimiterKind::LockWaits);
    }

    #[test]
    fn performance_schema_names_what_the_pools_threads_wait_in() {
        use crate::probe::limiter::server_waits::{SchemaWaitSeconds, ServerWaits};
        let f = pool_on_futexes();
        let mut i = inputs(&f);
        let pool = ServerWaits {
            row_lock_waits: 3,
            row_lock_wait_s: 0.012,
            pool_threads: Some(9),
            pool_idle_threads: Some(6),
            // Measured: 33.6 s in worker_cond over 5 s of oltp_read_write.
            schema: Some(SchemaWaitSeconds {
                pool_s: 67.0,
                synch_s: 0.1,
                lock_s: 0.02,
            }),
        };
        i.server_waits = Some(pool);
        let l = named_the_pool(&i, "performance_schema: on average 6.7 threads waited in the thread pool (wait/synch/cond/threadpool), 0.01 on the server's mutexes and conditions (wait/synch), 0.00 on table locks (wait/lock), 0.00 on row locks");
        assert_eq!(l.figures.schema_pool_waiting, Some(6.7));
        // The threads waited on the server's mutexes: a lock, pool or not.
        i.server_waits = Some(ServerWaits {
            schema: Some(SchemaWaitSeconds {
                pool_s: 1.0,
                synch_s: 30.0,
                lock_s: 0.0,
            }),
            ..pool
        });
        assert_eq!(judge(&i).kind, LimiterKind::LockWaits);
    }

    #[test]
    fn a_starved_clients_reason_names_the_background_once() {
        let f = LimiterFigures::default();
        let background =
            crate::probe::background::measure(crate::probe::background::BackgroundInputs {
                busy_share: 1.0,
                steal_share: 0.0,
                window_s: 10.0,
                online_cpus: 2,
                server_cpu_s: Some(2.0),
                own_cpu_s: 3.0,
            });
        let why = format!(
            "the load generator was starved; background load: {}",
            background.unwrap().describe()
        );
        let mut i = inputs(&f);
        i.background = background;
        i.client_bound = Some(&why);
        let l = judge(&i);
        assert_eq!(l.kind, LimiterKind::ClientBound);
        assert_eq!(
            l.verdict.matches("other processes used").count(),
            1,
            "{}",
            l.verdict
        );
    }

    #[test]
    fn a_server_that_cannot_be_told_apart_makes_the_background_unknown_never_the_limiter() {
        let f = LimiterFigures::default();
        let mut i = inputs(&f);
        // The whole machine busy, all of it counted as "other" (the
        // server's CPU among it): not background load, but unknown.
        i.background =
            crate::probe::background::measure(crate::probe::background::BackgroundInputs {
                busy_share: 1.0,
                steal_share: 0.0,
                window_s: 10.0,
                online_cpus: 2,
                server_cpu_s: None,
                own_cpu_s: 3.0,
            });
        let l = judge(&i);
        assert_ne!(l.kind, LimiterKind::BackgroundLoad, "{}", l.verdict);
        assert_eq!(l.figures.background_share, None);
        assert!(
            l.verdict
                .contains("(background unknown: the server cannot be told apart"),
            "{}",
            l.verdict
        );
        assert!(
            l.verdict.contains("`pid` or `pid_command`"),
            "{}",
            l.verdict
        );
    }
}
