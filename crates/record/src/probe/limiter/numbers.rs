//! The limiter's words and numbers: what limited a trial
//! ([`LimiterKind`]) and the figures behind a verdict ([`LimiterNumbers`]),
//! shared by the checks (`verdict`, `cpu`, `balance`).

use serde::{Deserialize, Serialize};

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
    /// The server's CPUs: its threads together, or its busiest thread at the server's
    /// own parallelism.
    ServerCpu,
    /// The CPUs the server may use were full and its threads waited for one, the load
    /// generator on the same CPUs taking its share.
    CpusShared,
    /// The server's threads waited for a CPU that other processes (or the hypervisor)
    /// took: the CPUs were full, the server itself not busy, and the background passed
    /// `probe::background::BACKGROUND_SHARE` (and the load generator's share).
    BackgroundLoad,
    /// One worker did most of the work (`balance::WORKER_IMBALANCE_FACTOR`).
    WorkerImbalance,
    /// The server's threads blocked on locks or local events.
    LockWaits,
    /// The server's threads sampled on futexes that its own counters do not count as
    /// row locks, in a thread pool: its threads waiting for work or their turn.
    PoolWaits,
    /// The server's threads blocked on storage.
    IoWaits,
    /// The server's CPU went to spinning on a kernel lock: set from the
    /// profile trial at a point whose trials said CPU
    /// (`judging::kernel_lock`), never by a trial's own probe.
    KernelLock,
    /// The server's CPU went to the TLS library's functions (handshakes'
    /// key exchanges and signatures, record encryption): set from the
    /// profile trial at a point whose trials said CPU
    /// (`judging::tls_bound`), never by a trial's own probe.
    TlsCrypto,
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
            LimiterKind::CpusShared => "CPUs full, shared with the load generator",
            LimiterKind::BackgroundLoad => "CPU taken by background load",
            LimiterKind::WorkerImbalance => "workers out of balance",
            LimiterKind::LockWaits => "blocked on locks",
            LimiterKind::PoolWaits => "waiting in the thread pool",
            LimiterKind::IoWaits => "blocked on I/O",
            LimiterKind::KernelLock => "kernel lock",
            LimiterKind::TlsCrypto => "TLS crypto",
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
    /// ... of which on locks or local events, or runnable and not past one
    /// (as PostgreSQL counts a woken backend's wait).
    pub lock_wait_share: Option<f64>,
    /// ... of that, runnable and not past the lock: woken and waiting for
    /// a CPU, or waking only briefly to re-check it (0..1, of all sampled
    /// time). Absent from contexts stored before it was measured, as are
    /// the performance_schema figures below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_woken_share: Option<f64>,
    /// ... on storage.
    pub io_wait_share: Option<f64>,
    /// ... on the network.
    pub network_wait_share: Option<f64>,
    /// Share of the active threads' sampled time runnable but waiting for a CPU, counted
    /// apart from on a CPU and from the waits (0..1).
    pub runqueue_share: Option<f64>,
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
    /// The CPUs the server may use: their busy share, every process counted (0..1).
    pub cpus_busy_share: Option<f64>,
    /// The load generator's CPU time over the CPUs the server may use; `None` when it ran
    /// on other CPUs or another host.
    pub client_cpu_share: Option<f64>,
    /// The busiest server thread seen most of the window: its on-CPU time over the time
    /// it was seen (0..1).
    pub busiest_thread_oncpu_share: Option<f64>,
    /// ... and its on-CPU plus run-queue time over the time it was seen (0..1).
    pub busiest_thread_runnable_share: Option<f64>,
    /// Threads seen most of the window that were saturated: on a CPU at least
    /// `THREAD_ONCPU_SHARE` of it, or runnable that long while waiting less than
    /// `RUNQ_WAIT_SHARE` of their runnable time.
    pub threads_at_full_cpu: Option<u32>,
    /// The server's workers (see `LimiterFigures::workers`).
    pub workers: Option<u32>,
    /// Each worker's share of the server's CPU time, busiest first (the busiest
    /// `threads::THREADS_KEPT` threads' workers).
    pub worker_cpu_shares: Option<Vec<f64>>,
    /// Each worker's requests in the window, in the server's own order
    /// (Unbound's `thread0.num.queries`, ...), where it counts them per
    /// worker; absent from contexts stored before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_requests: Option<Vec<u64>>,
    /// The busiest worker's share of the workers' CPU time (0..1).
    pub busiest_worker_share: Option<f64>,
    /// The busiest worker's on-CPU time over the window (0..1).
    pub busiest_worker_oncpu_share: Option<f64>,
    /// The busiest worker's CPU time over the mean of the other workers'.
    pub worker_imbalance: Option<f64>,
    /// The server's own count of row-lock waits in the window (MariaDB's
    /// `Innodb_row_lock_waits`); `None` where the server keeps none.
    pub row_lock_waits: Option<u64>,
    /// The server's own row-lock wait time (`Innodb_row_lock_time`) over the active
    /// threads' time in the window (0..1), beside `lock_wait_share`.
    pub row_lock_wait_share: Option<f64>,
    /// Completed requests (transactions) per row-lock wait the server counted.
    pub requests_per_row_lock_wait: Option<f64>,
    /// Threads in the server's thread pool at the window's end (`Threadpool_threads`).
    pub pool_threads: Option<u64>,
    /// Of them idle (`Threadpool_idle_threads`).
    pub pool_idle_threads: Option<u64>,
    /// performance_schema (where it is on): threads waiting, on average over
    /// the window, in the thread pool's own conditions
    /// (`wait/synch/cond/threadpool/%`: for work, or their turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_pool_waiting: Option<f64>,
    /// ... on the server's other mutexes, rwlocks and conditions
    /// (`wait/synch/%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_synch_waiting: Option<f64>,
    /// ... on table locks (`wait/lock/%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_lock_waiting: Option<f64>,
    /// InnoDB's row-lock wait time over the window: threads waiting on a
    /// row lock on average, beside the three above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_lock_waiting: Option<f64>,
}

/// "the workers' shares of the requests: 97%, 3%", largest first, with two
/// workers or more and a request in the window.
pub fn request_shares(n: &LimiterNumbers) -> Option<String> {
    let counts = n.worker_requests.as_deref().filter(|c| c.len() >= 2)?;
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let shares: Vec<String> = sorted
        .iter()
        .map(|c| format!("{:.0}%", *c as f64 * 100.0 / total as f64))
        .collect();
    Some(format!(
        "the workers' shares of the requests: {}",
        shares.join(", ")
    ))
}
