//! What limited a trial: a short, measured verdict at every point.
//!
//! After Brendan Gregg's USE method ("for every resource, check
//! utilization, saturation and errors",
//! <https://www.brendangregg.com/usemethod.html>) and his off-CPU analysis
//! (<https://www.brendangregg.com/offcpuanalysis.html>): the probe adds to
//! its samples the figures that name a limiter, and [`verdict::judge`]
//! checks each against a named threshold (documented in
//! `docs/limiter.md`):
//!
//! - CPU: the server's busy share of the CPUs it may use (utilisation) and
//!   its threads' run-queue wait from `/proc/PID/task/TID/schedstat`
//!   (saturation);
//! - the server's threads off-CPU and not runnable, split by what they
//!   wait on (lock or event, I/O, network), sampled from each thread's
//!   state and current system call ([`waits`]);
//! - the listen queue (`ListenOverflows`, `ListenDrops`, `TCPBacklogDrop`
//!   of `/proc/PID/net/netstat`, in the server's network namespace) and UDP
//!   receive errors (`RcvbufErrors` of `/proc/PID/net/snmp`) ([`counters`]);
//! - memory: the server's major faults and the machine's swap-in/out
//!   (`/proc/vmstat`), and its storage reads (`/proc/PID/io`), each
//!   counted once over the tree ([`tree_counters`]);
//! - errors and client-bound trials, judged by the runner.
//!
//! [`threads`] holds the sampler's side; its cost is in the probe's own
//! (`sampler_cpu_s`), measured by `bench/limiter-cost.sh`.

pub mod balance;
pub mod counters;
pub mod cpu;
pub mod numbers;
pub mod server_waits;
pub mod threads;
pub mod tree_counters;
pub mod verdict;
pub mod waits;
pub mod woken;

use serde::{Deserialize, Serialize};

pub use counters::Counters;
pub use verdict::{judge, Limiter, LimiterInputs, LimiterKind, LimiterNumbers};

/// How many samples of the server's active threads found them in each
/// state (see [`waits::WaitClass`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(default)]
pub struct WaitCounts {
    /// On a CPU: the samples that found the thread runnable, less its
    /// [`Self::runqueue`] share.
    pub running: u64,
    /// Runnable but waiting for a CPU, other than after a lock
    /// (`lock_woken`): the thread's runnable samples (`running` and
    /// `lock_woken`) times its run-queue wait over its runnable time
    /// (schedstat), less `lock_woken`. Counted apart from `running`.
    pub runqueue: u64,
    /// Blocked on a lock or an event another thread of the server must signal: a futex, a
    /// System V semaphore, or an untimed wait on descriptors none of which is a socket;
    /// and runnable after such a wait, not past it (`lock_woken`).
    pub lock: u64,
    /// Of `lock`: runnable, asleep on a lock at the look before the sample
    /// and not past it since: woken and waiting for a CPU, or only waking
    /// briefly to re-check it (`woken::LockSleepers`). In `total` only as
    /// part of `lock`.
    pub lock_woken: u64,
    /// Blocked on storage: uninterruptible sleep (`D`) or a file read, write or sync.
    pub io: u64,
    /// Blocked on the network: a wait whose descriptors include a socket (a read, an
    /// accept, epoll on a socket, poll or select).
    pub network: u64,
    /// Asleep on a timer or a timed wait with no socket: a background thread's rest.
    pub idle: u64,
    /// Blocked in any other way.
    pub other: u64,
}

impl WaitCounts {
    /// All samples.
    pub fn total(&self) -> u64 {
        self.running + self.runqueue + self.lock + self.io + self.network + self.idle + self.other
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, o: &WaitCounts) {
        self.running += o.running;
        self.runqueue += o.runqueue;
        self.lock += o.lock;
        self.lock_woken += o.lock_woken;
        self.io += o.io;
        self.network += o.network;
        self.idle += o.idle;
        self.other += o.other;
    }

    /// `count / total`, or `None` without samples.
    pub fn share(&self, count: u64) -> Option<f64> {
        let t = self.total();
        (t > 0).then(|| count as f64 / t as f64)
    }
}

/// One thread's figures over the window (schedstat).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ThreadFigures {
    /// Its process.
    pub pid: u32,
    /// Its thread ID.
    pub tid: u32,
    /// Seconds of the window it was seen.
    pub seen_s: f64,
    /// Seconds it ran on a CPU.
    pub oncpu_s: f64,
    /// Seconds it was runnable but waited for a CPU.
    pub runq_wait_s: f64,
    /// Whether it is a worker (see `LimiterFigures::workers`).
    pub worker: bool,
}

/// The limiter's raw figures over one window (stored in the probe summary).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LimiterFigures {
    /// Server threads seen; and of them the active ones: those on a CPU at least
    /// `threads::ACTIVE_THREAD_SHARE` of the time they were seen.
    pub threads_seen: u32,
    /// Active threads (see `threads_seen`); only they count in `waits`.
    pub threads_active: u32,
    /// Seconds the server's threads existed in the window, summed over threads.
    pub thread_s: f64,
    /// Seconds the server's threads ran (schedstat).
    pub oncpu_s: f64,
    /// Seconds the server's threads were runnable but waited for a CPU (schedstat).
    pub runq_wait_s: f64,
    /// The active threads' sampled states.
    pub waits: WaitCounts,
    /// Major page faults of the server's tree (own and reaped children's).
    pub major_faults: u64,
    /// The kernel counters' growth over the window (flattened: stored and
    /// exported as fields of their own).
    #[serde(flatten)]
    pub counters: Counters,
    /// Bytes the server's tree read from storage (`read_bytes` of `/proc/PID/io`).
    pub read_bytes: Option<u64>,
    /// The longest any server thread was seen: the window as its threads saw it.
    pub window_s: f64,
    /// The server's workers: threads seen for most of the window
    /// (`threads::WORKER_SEEN_SHARE`) and sampled on a CPU or waiting on the
    /// network at least half the time (nginx's workers, a resolver's threads,
    /// a database's backends, not their background helpers).
    pub workers: u32,
    /// Seconds the workers ran, together.
    pub workers_cpu_s: f64,
    /// The busiest threads, busiest first (at most `threads::THREADS_KEPT`).
    pub busiest_threads: Vec<ThreadFigures>,
}
