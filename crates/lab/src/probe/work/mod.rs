//! The kernel's counts of the server's work over the window: system
//! calls (`raw_syscalls:sys_enter`, and `syscalls:sys_enter_NAME` for
//! each call of [`NAMED_SYSCALLS`]), context switches, CPU migrations and
//! page faults (software events), the hardware counters where a PMU
//! exists, all with `perf_event_open(2)` in counting mode for the
//! server's own cgroup on every CPU; and CPU time by mode from the
//! cgroup's `cpu.stat`. Nothing is sampled: the kernel adds one to a
//! counter per event, and the window reads each counter once.
//!
//! The server's cgroup is its tracking cgroup (`sys::lifecycle`), found
//! from its root process's `/proc/PID/cgroup` line of the unified (v2)
//! hierarchy, where perf's cgroup events live when no v1 `perf_event`
//! hierarchy is mounted. A server in the root cgroup, a v1 `perf_event`
//! hierarchy, or a kernel that refuses an event makes that figure
//! "unavailable" with the reason, never 0.

mod cgroup;
pub mod io_calls;
pub mod perf;
#[cfg(any(test, feature = "test-support"))]
pub mod perf_stat_fixture;
mod tracefs;

/// Whether the server's system calls are counted (`[probe] syscalls`).
///
/// A syscall tracepoint costs every system call on the machine while one
/// of its perf events exists, not only the server's: the kernel takes
/// every task's slow entry path. On this project's 2-CPU VM
/// (`bench/work-cost.sh`, `dd bs=1` pinned): +180 ns a call for the
/// counted cgroup's calls on `raw_syscalls:sys_enter`, +150 ns more for
/// each named call's event, and +75-82 ns for every other process's calls
/// (an event opened but disabled costs the same). At nginx's rate under
/// wrk that is 7.9-9.4% of a CPU and 1.8-4.7% of the throughput, so the trial's
/// headline would measure the counting. The other counts (context
/// switches, migrations, faults, CPU by mode) cost nothing measurable
/// and are always taken; the system calls are counted when a recipe asks.
/// Counting them in slices of the window was tried twice
/// (`docs/probe-metrics.md`): scaled by time, the totals came out 5-23%
/// low (the slices' own cost slows the server while they count); divided
/// by the operations of the slices, the named calls' events took 1.2-1.5 s
/// to close (an RCU grace period each, one after another) and the total
/// alone came out 2-5.5% off the whole window's count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyscallMode {
    /// Not counted (the default).
    #[default]
    Off,
    /// Every call of the window, exactly (`[probe] syscalls = "exact"`).
    Exact,
}

use perf::{Counter, Event, Reading};
use scalelab_record::probe::work::{HardwareCounts, NamedCount, WorkCounts};
use std::time::Instant;

/// The calls counted by name: those a network or database server makes
/// per request (reading, writing, polling, accepting, locking, mapping).
/// The rest are counted together as the total less these.
pub const NAMED_SYSCALLS: [&str; 40] = [
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "sendfile64",
    "accept",
    "accept4",
    "connect",
    "close",
    "shutdown",
    "setsockopt",
    "getsockopt",
    "epoll_wait",
    "epoll_pwait",
    "epoll_ctl",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "io_uring_enter",
    "futex",
    "openat",
    "newfstatat",
    "newfstat",
    "lseek",
    "fcntl",
    "ioctl",
    "mmap",
    "munmap",
    "madvise",
    "fsync",
    "getrandom",
];

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Figure {
    Syscalls,
    Syscall(&'static str),
    ContextSwitches,
    Migrations,
    MinorFaults,
    MajorFaults,
    Cycles,
    Instructions,
    LlcMisses,
    BranchMisses,
}

impl Figure {
    fn is_hardware(self) -> bool {
        matches!(
            self,
            Figure::Cycles | Figure::Instructions | Figure::LlcMisses | Figure::BranchMisses
        )
    }

    fn name(self) -> String {
        match self {
            Figure::Syscalls => "system calls (raw_syscalls:sys_enter)".into(),
            Figure::Syscall(n) => format!("{n}(2) calls"),
            Figure::ContextSwitches => "context switches".into(),
            Figure::Migrations => "CPU migrations".into(),
            Figure::MinorFaults => "minor page faults".into(),
            Figure::MajorFaults => "major page faults".into(),
            Figure::Cycles => "hardware counters".into(),
            Figure::Instructions => "instructions".into(),
            Figure::LlcMisses => "LLC misses".into(),
            Figure::BranchMisses => "branch misses".into(),
        }
    }
}

/// The software and hardware events, in the order they are opened.
const FIXED: [(Figure, Event); 8] = [
    (Figure::ContextSwitches, sw(perf::SW_CONTEXT_SWITCHES)),
    (Figure::Migrations, sw(perf::SW_CPU_MIGRATIONS)),
    (Figure::MinorFaults, sw(perf::SW_PAGE_FAULTS_MIN)),
    (Figure::MajorFaults, sw(perf::SW_PAGE_FAULTS_MAJ)),
    (Figure::Cycles, hw(perf::TYPE_HARDWARE, perf::HW_CPU_CYCLES)),
    (
        Figure::Instructions,
        hw(perf::TYPE_HARDWARE, perf::HW_INSTRUCTIONS),
    ),
    (
        Figure::LlcMisses,
        hw(perf::TYPE_HW_CACHE, perf::HW_CACHE_LL_READ_MISS),
    ),
    (
        Figure::BranchMisses,
        hw(perf::TYPE_HARDWARE, perf::HW_BRANCH_MISSES),
    ),
];

const fn sw(config: u64) -> Event {
    Event {
        kind: perf::TYPE_SOFTWARE,
        config,
    }
}

const fn hw(kind: u32, config: u64) -> Event {
    Event { kind, config }
}

/// The counters of one server's cgroup, enabled from [`WorkCounter::start`]
/// to [`WorkCounter::finish`].
#[derive(Debug)]
pub struct WorkCounter {
    cgroup: cgroup::ServerCgroup,
    counters: Vec<(Figure, Vec<Counter>)>,
    mode: SyscallMode,
    cpu_at_start: Option<cgroup::CpuStat>,
    io_at_start: Result<io_calls::IoSnapshot, String>,
    started: Instant,
    unavailable: Vec<String>,
}

impl WorkCounter {
    /// Opens and enables the counters for the cgroup of `root_pid` on
    /// `cpus`, the system calls as `mode` says. The error says why nothing
    /// can be counted.
    pub fn start(root_pid: u32, cpus: &[u32], mode: SyscallMode) -> Result<WorkCounter, String> {
        let cgroup = cgroup::ServerCgroup::of(root_pid)?;
        let dir = std::fs::File::open(&cgroup.dir).map_err(|e| {
            format!(
                "cannot open the server's cgroup {}: {e}",
                cgroup.dir.display()
            )
        })?;
        let mut unavailable = Vec::new();
        let calls = match mode {
            SyscallMode::Off => {
                unavailable.push(
                    "system calls: not counted ([probe] syscalls = \"exact\" counts them, at a cost: docs/probe-metrics.md)"
                        .into(),
                );
                Vec::new()
            }
            SyscallMode::Exact => syscall_events(&mut unavailable),
        };
        let whole: Vec<(Figure, Event)> = calls.into_iter().chain(FIXED).collect();
        let mut counters = Vec::new();
        for (figure, event) in whole {
            if figure.is_hardware() && unavailable.iter().any(|u| u.starts_with("hardware")) {
                continue;
            }
            match open_on_cpus(event, &dir, cpus) {
                Ok(c) => counters.push((figure, c)),
                Err(e) => unavailable.push(unavailable_reason(figure, &e)),
            }
        }
        if counters.is_empty() {
            return Err(unavailable.join("; "));
        }
        let cpu_at_start = cgroup.cpu_stat();
        let io_at_start = io_calls::snapshot(&cgroup.dir);
        for (_, cs) in &counters {
            for c in cs {
                c.enable()
                    .map_err(|e| format!("cannot enable a perf counter: {e}"))?;
            }
        }
        Ok(WorkCounter {
            cgroup,
            counters,
            mode,
            cpu_at_start,
            io_at_start,
            started: Instant::now(),
            unavailable,
        })
    }

    /// Stops every counter and returns the window's counts.
    pub fn finish(self) -> WorkCounts {
        for (_, cs) in &self.counters {
            for c in cs {
                let _ = c.disable();
            }
        }
        let counted_s = self.started.elapsed().as_secs_f64();
        let io = self
            .io_at_start
            .and_then(|start| io_calls::since(&io_calls::snapshot(&self.cgroup.dir)?, &start));
        let mut unavailable = self.unavailable;
        let totals: Vec<(Figure, Option<u64>)> = self
            .counters
            .iter()
            .map(|(f, cs)| (*f, total(cs)))
            .collect();
        let calls_counted_s = (self.mode == SyscallMode::Exact).then_some(counted_s);
        let cpu = self
            .cgroup
            .cpu_stat()
            .zip(self.cpu_at_start)
            .map(|(end, start)| end.since(start));
        if cpu.is_none() {
            unavailable.push(format!(
                "CPU time by mode: unavailable: no cpu.stat in {}",
                self.cgroup.dir.display()
            ));
        }
        let io_calls = io.map_err(|e| unavailable.push(e)).ok();
        let mut w = counts(self.cgroup.path, counted_s, &totals, cpu, unavailable);
        w.syscalls_counted_s = calls_counted_s.filter(|_| w.syscalls.is_some());
        w.io_calls = io_calls;
        w
    }
}

/// The system call events: the total, then each named call that
/// tracefs knows. A kernel without them is said.
fn syscall_events(unavailable: &mut Vec<String>) -> Vec<(Figure, Event)> {
    let mut out = Vec::new();
    match tracefs::tracepoint_id("raw_syscalls", "sys_enter") {
        Ok(id) => out.push((Figure::Syscalls, tracepoint(id))),
        Err(e) => {
            unavailable.push(format!("system calls: unavailable: {e}"));
            return out;
        }
    }
    for name in NAMED_SYSCALLS {
        if let Ok(id) = tracefs::tracepoint_id("syscalls", &format!("sys_enter_{name}")) {
            out.push((Figure::Syscall(name), tracepoint(id)));
        }
    }
    out
}

fn tracepoint(id: u64) -> Event {
    Event {
        kind: perf::TYPE_TRACEPOINT,
        config: id,
    }
}

fn open_on_cpus(event: Event, dir: &std::fs::File, cpus: &[u32]) -> std::io::Result<Vec<Counter>> {
    cpus.iter()
        .map(|&cpu| Counter::open(event, dir, cpu))
        .collect()
}

/// Why a figure is not counted. No PMU shows as `ENOENT` (no such event
/// type) or `EOPNOTSUPP` on the hardware events.
fn unavailable_reason(figure: Figure, e: &std::io::Error) -> String {
    let no_pmu = matches!(
        e.raw_os_error(),
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV)
    );
    if figure.is_hardware() && no_pmu {
        format!("hardware counters: unavailable: no PMU (perf_event_open: {e})")
    } else {
        format!("{}: unavailable: perf_event_open: {e}", figure.name())
    }
}

/// The sum over CPUs, scaled for multiplexing; `None` when a read failed
/// or the counter never ran.
fn total(counters: &[Counter]) -> Option<u64> {
    let mut sum = Reading::default();
    for c in counters {
        sum = sum.plus(c.read().ok()?);
    }
    sum.scaled()
}

/// The window's counts from each figure's total.
fn counts(
    cgroup: String,
    counted_s: f64,
    totals: &[(Figure, Option<u64>)],
    cpu: Option<cgroup::CpuStat>,
    unavailable: Vec<String>,
) -> WorkCounts {
    let get = |f: Figure| totals.iter().find(|(g, _)| *g == f).and_then(|(_, v)| *v);
    let mut top: Vec<NamedCount> = totals
        .iter()
        .filter_map(|(f, v)| match f {
            Figure::Syscall(name) => Some(NamedCount {
                name: (*name).to_string(),
                count: (*v)?,
            }),
            _ => None,
        })
        .collect();
    top.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    let hardware = HardwareCounts {
        cycles: get(Figure::Cycles),
        instructions: get(Figure::Instructions),
        llc_misses: get(Figure::LlcMisses),
        branch_misses: get(Figure::BranchMisses),
    };
    let any_hardware = hardware != HardwareCounts::default();
    WorkCounts {
        cgroup,
        counted_s,
        syscalls: get(Figure::Syscalls),
        syscalls_counted_s: None,
        io_calls: None,
        top_syscalls: top,
        context_switches: get(Figure::ContextSwitches),
        cpu_migrations: get(Figure::Migrations),
        minor_faults: get(Figure::MinorFaults),
        major_faults: get(Figure::MajorFaults),
        user_s: cpu.map(|c| c.user_s()),
        system_s: cpu.map(|c| c.system_s()),
        hardware: any_hardware.then_some(hardware),
        unavailable,
    }
}

/// The work per request for a CPU verdict: `per request: 4.02 system
/// calls (writev 1.00, recvfrom 1.00, epoll_wait 0.95), 0.51 context
/// switches, 11.2 µs in the kernel`; `None` without a count or requests.
pub fn per_request_clause(w: &WorkCounts, requests: u64) -> Option<String> {
    let calls = w.syscalls?;
    if requests == 0 {
        return None;
    }
    let per = |v: u64| v as f64 / requests as f64;
    let top: Vec<String> = (w.top_syscalls.iter().take(3))
        .map(|c| format!("{} {:.2}", c.name, per(c.count)))
        .collect();
    let mut out = format!(
        "per request: {:.2} system calls ({})",
        per(calls),
        top.join(", ")
    );
    if let Some(cs) = w.context_switches {
        out += &format!(", {:.2} context switches", per(cs));
    }
    if let Some(sys) = w.system_s {
        out += &format!(", {:.1} µs in the kernel", sys * 1e6 / requests as f64);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
