//! The limiter's side of the sampler: at every probe sample, each server
//! thread's on-CPU time and run-queue wait (`/proc/PID/task/TID/schedstat`),
//! the tree's major faults and storage reads ([`super::tree_counters`]),
//! and the kernel counters; at
//! every tick (several per sample, [`TICKS_PER_SAMPLE`]) each thread's
//! current system call (`running` when it is on a CPU or runnable),
//! classified by [`super::waits`].
//!
//! Only active threads count in the wait shares: those that ran at least
//! [`ACTIVE_THREAD_SHARE`] of the time they were seen. A server's idle
//! helpers (PostgreSQL's checkpointer, InnoDB's timers) would otherwise
//! drown what its working threads wait on.

use super::counters::Counters;
use super::tree_counters::{self, TreeTotal};
use super::waits::{classify, FdKind, FdLookup, WaitClass};
use super::woken::{LockSleepers, LOOKBACK};
use super::{LimiterFigures, ThreadFigures, WaitCounts};
use std::collections::HashMap;

/// A thread on a CPU for less than this share of the time it was seen is
/// not active: its waits are not counted.
pub const ACTIVE_THREAD_SHARE: f64 = 0.01;

/// The busiest threads kept with the figures (their on-CPU and run-queue
/// time each), so a reader can check them against `pidstat -t`.
pub const THREADS_KEPT: usize = 16;

/// A thread seen for at least this share of the window can be a worker
/// (see [`LimiterFigures::workers`]) and can name the server's CPU
/// saturated at its parallelism.
pub const WORKER_SEEN_SHARE: f64 = 0.9;

/// Wait-state samples per probe interval (the sampler ticks in between).
pub const TICKS_PER_SAMPLE: u32 = 4;

/// The shortest time between wait-state samples: at a short probe interval
/// the ticks thin out (at 100 ms or less, only the sample itself reads the
/// states), keeping the limiter within the probe's budget.
pub const MIN_TICK: std::time::Duration = std::time::Duration::from_millis(250);

/// The kernel's network and swap counters are read at the window's ends
/// and at most this often in between.
pub const COUNTERS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// One process of the server's tree at a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its PID.
    pub pid: u32,
    /// Its threads.
    pub threads: u32,
    /// It has exited and is not reaped yet: no thread to sample, but its
    /// reads and faults are not in its parent's yet.
    pub zombie: bool,
}

#[derive(Debug, Default)]
struct Track {
    pid: u32,
    /// `(on-CPU ns, run-queue ns)` at the last sample.
    last: Option<(u64, u64)>,
    cpu_ns: u64,
    runq_ns: u64,
    seen_s: f64,
    waits: WaitCounts,
    /// Samples that found it runnable and not past a lock
    /// ([`LockSleepers::not_past`]): in none of `waits` until
    /// [`runqueue_apart`] splits them.
    not_past: u64,
}

/// The limiter's sampling state for one window.
#[derive(Debug)]
pub struct LimiterSampler {
    root: u32,
    threads: HashMap<u32, Track>,
    faults: TreeTotal,
    reads: TreeTotal,
    reads_readable: bool,
    first: Counters,
    last: Counters,
    fds: HashMap<(u32, u64), FdKind>,
    /// When the wait states were last read.
    last_tick: Option<std::time::Instant>,
    /// When the kernel's counters were last read.
    counters_at: std::time::Instant,
}

impl LimiterSampler {
    /// Takes the baseline of the tree rooted at `root`.
    pub fn begin(root: u32, members: &[Member]) -> Self {
        let first = Counters::read(root);
        let mut s = LimiterSampler {
            root,
            threads: HashMap::new(),
            faults: TreeTotal::default(),
            reads: TreeTotal::default(),
            reads_readable: true,
            first,
            last: first,
            fds: HashMap::new(),
            last_tick: None,
            counters_at: std::time::Instant::now(),
        };
        s.read_sample(members, 0.0, true);
        s
    }

    /// One probe sample, `interval_s` after the previous one.
    /// The wait states are read with it only when [`MIN_TICK`] has passed
    /// since they last were: at a 100 ms interval, every third sample or so.
    pub fn sample(&mut self, members: &[Member], interval_s: f64) {
        self.read_sample(members, interval_s, false);
        if self.last_tick.map_or(true, |t| t.elapsed() >= MIN_TICK) {
            self.tick(members);
        }
    }

    fn read_sample(&mut self, members: &[Member], interval_s: f64, baseline: bool) {
        for m in members.iter().filter(|m| !m.zombie) {
            for tid in tids(m) {
                let Some(now) = crate::procfs::pid::task_schedstat(m.pid, tid) else {
                    continue;
                };
                let t = self.threads.entry(tid).or_default();
                t.pid = m.pid;
                let before = match t.last {
                    Some(b) => Some(b),
                    None if baseline => None,
                    None => Some((0, 0)),
                };
                if let Some((cpu, runq)) = before {
                    t.cpu_ns += now.0.saturating_sub(cpu);
                    t.runq_ns += now.1.saturating_sub(runq);
                    t.seen_s += interval_s;
                }
                t.last = Some(now);
            }
        }
        let pids: Vec<u32> = members.iter().map(|m| m.pid).collect();
        if let Some(tree) = tree_counters::read(&pids) {
            self.faults.observe(tree.major_faults);
            self.reads_readable &= tree.read_bytes.is_some();
            self.reads.observe(tree.read_bytes.unwrap_or(0));
        }
        // The counters only grow: the window needs its two ends, and a read
        // a second keeps a last value should the server be gone at the end
        // (each read of /proc/PID/net/netstat costs the kernel a table walk).
        if baseline || self.counters_at.elapsed() >= COUNTERS_EVERY {
            self.last = Counters::read(self.root);
            self.counters_at = std::time::Instant::now();
        }
    }

    /// Samples every thread's state and, when it sleeps, its system call;
    /// a runnable thread asleep on a lock at the look [`LOOKBACK`] before
    /// and not past it since is counted as the lock (see [`super::woken`]).
    /// The look is itself a sample: when no thread sleeps on a lock (nginx,
    /// a resolver) it is the one sample, with no second read and no wait.
    pub fn tick(&mut self, members: &[Member]) {
        self.last_tick = Some(std::time::Instant::now());
        let look = self.look(members);
        let mut sleepers = LockSleepers::default();
        for (pid, tid, class) in &look {
            if *class == WaitClass::Lock {
                sleepers.note(*pid, *tid);
            }
        }
        let sample = if sleepers.is_empty() {
            look
        } else {
            std::thread::sleep(LOOKBACK);
            self.look(members)
        };
        for (pid, tid, class) in sample {
            let t = self.threads.entry(tid).or_default();
            if class == WaitClass::Running && sleepers.not_past(pid, tid) {
                t.not_past += 1;
            } else {
                count(&mut t.waits, class);
            }
        }
    }

    /// Every live member's threads and what each does now: (pid, tid, class).
    fn look(&mut self, members: &[Member]) -> Vec<(u32, u32, WaitClass)> {
        let mut all = Vec::new();
        for m in members.iter().filter(|m| !m.zombie) {
            all.extend(self.classes(m).into_iter().map(|(tid, c)| (m.pid, tid, c)));
        }
        all
    }

    /// Each thread of `m` and what it does now.
    fn classes(&mut self, m: &Member) -> Vec<(u32, WaitClass)> {
        let mut fds = ProcFds {
            pid: m.pid,
            cache: &mut self.fds,
        };
        let mut classes = Vec::new();
        for tid in tids(m) {
            // One read a thread: `running` for a thread on a CPU or
            // runnable, else the call it sleeps in (the state letter
            // adds nothing the call does not say, at twice the reads).
            let Some(call) = crate::procfs::pid::task_syscall(m.pid, tid)
                .ok()
                .and_then(|t| crate::procfs::pid::parse_syscall(&t))
            else {
                continue;
            };
            classes.push((tid, classify('S', Some(call), &mut fds)));
        }
        classes
    }

    /// The figures over the window.
    pub fn finish(&self) -> LimiterFigures {
        let end = Counters::read(self.root);
        // The server's namespace unreadable (it has exited): its last read.
        let end = if end.listen_overflows.is_some() {
            end
        } else {
            self.last
        };
        let active: Vec<&Track> = self
            .threads
            .values()
            .filter(|t| t.seen_s > 0.0 && t.cpu_ns as f64 / 1e9 >= ACTIVE_THREAD_SHARE * t.seen_s)
            .collect();
        let mut waits = WaitCounts::default();
        active.iter().for_each(|t| waits.add(&runqueue_apart(t)));
        let per_thread = self.per_thread();
        LimiterFigures {
            window_s: self.longest_seen_s(),
            workers: per_thread.workers,
            workers_cpu_s: per_thread.workers_cpu_s,
            busiest_threads: per_thread.busiest,
            threads_seen: self.threads.len() as u32,
            threads_active: active.len() as u32,
            thread_s: self.threads.values().map(|t| t.seen_s).sum(),
            oncpu_s: self.threads.values().map(|t| t.cpu_ns).sum::<u64>() as f64 / 1e9,
            runq_wait_s: self.threads.values().map(|t| t.runq_ns).sum::<u64>() as f64 / 1e9,
            waits,
            major_faults: self.faults.total().unwrap_or(0),
            counters: end.since(&self.first),
            read_bytes: self.reads.total().filter(|_| self.reads_readable),
        }
    }
}

/// The thread's samples with those that found it runnable split into on a
/// CPU and in the run queue, in the proportion schedstat measured (its
/// run-queue wait over its runnable time). Of those not past a lock, the
/// queued share is the lock, as the server counts it (`lock_woken`), the
/// rest on a CPU: the thread re-checking its lock runs, and PostgreSQL
/// shows `CPU` then.
fn runqueue_apart(t: &Track) -> WaitCounts {
    let runnable_ns = t.cpu_ns + t.runq_ns;
    let share = if runnable_ns > 0 {
        t.runq_ns as f64 / runnable_ns as f64
    } else {
        0.0
    };
    let queued_of = |n: u64| (n as f64 * share).round() as u64;
    let queued = queued_of(t.waits.running);
    let woken = queued_of(t.not_past);
    WaitCounts {
        running: t.waits.running - queued + (t.not_past - woken),
        runqueue: queued,
        lock: t.waits.lock + woken,
        lock_woken: woken,
        ..t.waits
    }
}

/// The threads' own figures: the busiest, and the workers.
struct PerThread {
    busiest: Vec<ThreadFigures>,
    workers: u32,
    workers_cpu_s: f64,
}

impl LimiterSampler {
    /// The longest any thread was seen: the window as the threads saw it
    /// (a backend of the load's connections is gone at the last sample,
    /// when the load has closed them).
    fn longest_seen_s(&self) -> f64 {
        self.threads.values().map(|t| t.seen_s).fold(0.0, f64::max)
    }

    fn per_thread(&self) -> PerThread {
        let window_s = self.longest_seen_s();
        let all: Vec<ThreadFigures> = self
            .threads
            .iter()
            .filter(|(_, t)| t.seen_s > 0.0)
            .map(|(tid, t)| ThreadFigures {
                pid: t.pid,
                tid: *tid,
                seen_s: t.seen_s,
                oncpu_s: t.cpu_ns as f64 / 1e9,
                runq_wait_s: t.runq_ns as f64 / 1e9,
                worker: is_worker(t, window_s),
            })
            .collect();
        let workers: Vec<&ThreadFigures> = all.iter().filter(|t| t.worker).collect();
        let workers_cpu_s = workers.iter().map(|t| t.oncpu_s).sum();
        let n_workers = workers.len() as u32;
        let mut busiest = all;
        busiest.sort_by(|a, b| b.oncpu_s.total_cmp(&a.oncpu_s).then(a.tid.cmp(&b.tid)));
        busiest.truncate(THREADS_KEPT);
        PerThread {
            busiest,
            workers: n_workers,
            workers_cpu_s,
        }
    }
}

/// A worker: seen for [`WORKER_SEEN_SHARE`] of the window, and sampled on
/// a CPU or waiting on the network at least half of the times it was
/// sampled (a thread that serves clients, not a background helper asleep
/// on a timer or a lock).
fn is_worker(t: &Track, window_s: f64) -> bool {
    let w = &t.waits;
    let serving = w.running + t.not_past + w.network;
    let sampled = w.total() + t.not_past;
    window_s > 0.0
        && t.seen_s >= WORKER_SEEN_SHARE * window_s
        && sampled > 0
        && 2 * serving >= sampled
}

fn count(w: &mut WaitCounts, class: WaitClass) {
    match class {
        WaitClass::Running => w.running += 1,
        WaitClass::Lock => w.lock += 1,
        WaitClass::Io => w.io += 1,
        WaitClass::Network => w.network += 1,
        WaitClass::Idle => w.idle += 1,
        WaitClass::Other => w.other += 1,
    }
}

/// The thread IDs of a process (its PID alone when single-threaded).
fn tids(m: &Member) -> Vec<u32> {
    if m.threads <= 1 {
        return vec![m.pid];
    }
    (crate::procfs::pid::tasks(m.pid)
        .unwrap_or_default()
        .into_iter())
    .map(|(tid, _)| tid)
    .collect()
}

/// Descriptors of one process, looked up in `/proc/PID/fd` and cached for
/// the window (a server keeps its sockets and wait sets).
struct ProcFds<'a> {
    pid: u32,
    cache: &'a mut HashMap<(u32, u64), FdKind>,
}

impl FdLookup for ProcFds<'_> {
    fn kind(&mut self, fd: u64) -> Option<FdKind> {
        if let Some(k) = self.cache.get(&(self.pid, fd)) {
            return Some(*k);
        }
        let kind = fd_kind(self.pid, fd)?;
        self.cache.insert((self.pid, fd), kind);
        Some(kind)
    }
}

fn fd_kind(pid: u32, fd: u64) -> Option<FdKind> {
    let target = crate::procfs::pid::fd_link(pid, fd).ok()?;
    let target = target.to_string_lossy();
    Some(if target.starts_with("socket:") {
        FdKind::Socket
    } else if target == "anon_inode:[eventpoll]" {
        let info = crate::procfs::pid::fdinfo(pid, fd).ok()?;
        let watched = crate::procfs::pid::epoll_targets(&info);
        let socket = |t: &u64| {
            crate::procfs::pid::fd_link(pid, *t)
                .is_ok_and(|p| p.to_string_lossy().starts_with("socket:"))
        };
        FdKind::Epoll {
            watches_socket: watched.iter().any(socket),
        }
    } else if target.starts_with('/') && !target.starts_with("/dev/") {
        FdKind::File
    } else {
        FdKind::Event
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_reaped_between_the_scan_and_the_read_leaves_the_reads_readable() {
        // The tree scan saw the child; it exits and is reaped before its
        // files are read (a PostgreSQL backend of the warmup's connections,
        // closing as the window begins).
        let me = Member {
            pid: std::process::id(),
            threads: 1,
            zombie: false,
        };
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let gone = Member {
            pid: child.id(),
            threads: 1,
            zombie: false,
        };
        let mut s = LimiterSampler::begin(me.pid, &[me, gone]);
        child.kill().unwrap();
        child.wait().unwrap();
        s.sample(&[me, gone], 1.0);
        let f = s.finish();
        assert!(f.read_bytes.is_some(), "{f:?}");
    }

    #[test]
    fn a_thread_asleep_on_a_pipe_is_a_lock_wait_and_a_spinning_one_runs() {
        use std::io::Read;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let (mut r, w) = std::io::pipe().unwrap();
        let sleeper = std::thread::spawn(move || {
            let mut b = [0u8; 1];
            let _ = r.read(&mut b);
        });
        let stop = Arc::new(AtomicBool::new(false));
        let spin = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        let me = Member {
            pid: std::process::id(),
            threads: 3,
            zombie: false,
        };
        let mut s = LimiterSampler::begin(me.pid, &[me]);
        s.tick(&[me]);
        drop(w);
        stop.store(true, Ordering::Relaxed);
        sleeper.join().unwrap();
        spin.join().unwrap();
        let all: WaitCounts = s.threads.values().fold(WaitCounts::default(), |mut a, t| {
            a.add(&t.waits);
            a
        });
        assert!(all.lock >= 1, "the pipe reader: {all:?}");
        assert!(all.running >= 1, "the spinning thread: {all:?}");
    }
}
