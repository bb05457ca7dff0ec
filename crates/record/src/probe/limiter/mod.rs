//! The limiter's figures as a trial's probe summary stores them and the
//! report reads them: the samples by state ([`WaitCounts`]), the busiest
//! threads, the kernel counters ([`counters`]) and the verdict
//! ([`Limiter`], [`numbers`]). The lab's `probe::limiter` measures them
//! and judges; this is only what it hands up.

pub mod counters;
pub mod numbers;

use serde::{Deserialize, Serialize};

pub use counters::Counters;
pub use numbers::{LimiterKind, LimiterNumbers};

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

/// How many samples of the server's active threads found them in each
/// state (see `waits::WaitClass`).
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
