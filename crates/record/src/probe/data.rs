//! What the probe stores: one [`ProbeSample`] per interval and a
//! [`ProbeSummary`] over the whole sampled window. Field names are stable
//! snake_case (stored as JSON, exported as JSON/CSV); each is documented in
//! `docs/probe-metrics.md`. Fractions are 0..1, never percent.

use serde::{Deserialize, Serialize};

/// Where CPU time went, as fractions (0..1) of the elapsed CPU time (for a
/// total over all CPUs: of all CPUs' time). From `/proc/stat` jiffy deltas;
/// `user` includes guest time and `nice` guest_nice, as the kernel counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuSplit {
    /// User-mode time (guest time included).
    pub user: f64,
    /// User-mode time at a positive nice value (guest_nice included).
    pub nice: f64,
    /// Kernel time, not counting interrupt handlers.
    pub system: f64,
    /// Hard interrupt handlers.
    pub irq: f64,
    /// Soft interrupts (network receive processing shows up here).
    pub softirq: f64,
    /// Idle with I/O outstanding: counted as waiting, not busy.
    pub iowait: f64,
    /// Time the hypervisor gave this vCPU to another guest; large on a busy host, and it makes
    /// everything else look slow.
    pub steal: f64,
    /// Idle time.
    pub idle: f64,
    /// `1 - idle - iowait`.
    pub busy: f64,
}

impl CpuSplit {
    /// The shares that add up to the busy and waiting time, in the order
    /// [`Self::shares`] returns them (the report's columns and chart bands).
    pub const SHARES: [&'static str; 7] = [
        "user", "nice", "system", "irq", "softirq", "iowait", "steal",
    ];

    /// The values of [`Self::SHARES`].
    pub fn shares(&self) -> [f64; 7] {
        [
            self.user,
            self.nice,
            self.system,
            self.irq,
            self.softirq,
            self.iowait,
            self.steal,
        ]
    }

    /// The element-wise mean of `all`; `None` when it is empty.
    pub fn mean(all: &[CpuSplit]) -> Option<CpuSplit> {
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let mean = |f: fn(&CpuSplit) -> f64| all.iter().map(f).sum::<f64>() / n;
        Some(CpuSplit {
            user: mean(|c| c.user),
            nice: mean(|c| c.nice),
            system: mean(|c| c.system),
            irq: mean(|c| c.irq),
            softirq: mean(|c| c.softirq),
            iowait: mean(|c| c.iowait),
            steal: mean(|c| c.steal),
            idle: mean(|c| c.idle),
            busy: mean(|c| c.busy),
        })
    }
}

/// One CPU's split and frequency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerCpu {
    /// The CPU's number, as in `/proc/stat` (`cpuN`).
    pub cpu: u32,
    /// Its split; flattened into this entry when serialized.
    #[serde(flatten)]
    pub split: CpuSplit,
    /// MHz read at the end of the interval (sample), or the time-weighted
    /// mean (summary); `None` when no source gives it.
    pub freq_mhz: Option<f64>,
}

/// Packet and byte counts of one network interface over an interval.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetDelta {
    /// The interface's name (`lo`, `eth0`, a namespace's veth).
    pub iface: String,
    /// Bytes received. Loopback traffic counts once here and once in `tx_bytes`.
    pub rx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
}

/// The server's process tree during one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSample {
    /// Live (non-zombie) processes in the tree at the end of the interval.
    pub processes: u32,
    /// Live threads in the tree at the end of the interval.
    pub threads: u32,
    /// CPU seconds (user + system) the tree used in the interval.
    pub cpu_s: f64,
    /// `cpu_s / interval_s`: fraction of one CPU (2.0 = two CPUs busy).
    pub cpu_util: f64,
    /// Total resident set of the tree at the end of the interval; shared pages count in every
    /// process that touched them.
    pub rss_bytes: u64,
    /// Total virtual size of the tree at the end of the interval.
    pub vsz_bytes: u64,
    /// Voluntary context switches (the thread blocked) in the interval, summed over every
    /// thread of the tree.
    pub ctx_voluntary: u64,
    /// Involuntary context switches (the thread was preempted) in the interval, summed over
    /// every thread of the tree.
    pub ctx_involuntary: u64,
    /// Mean RSS / VSZ of a worker (see `ProbeSummary::mem_per_worker_rss_bytes`).
    pub worker_rss_bytes: Option<u64>,
    /// Mean VSZ of a worker, as `worker_rss_bytes`; `None` when the tree had no live process.
    pub worker_vsz_bytes: Option<u64>,
}

/// One interval of the timeline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSample {
    /// Seconds from the start of the window to the end of this interval.
    pub t_s: f64,
    /// This interval's length in seconds; the last one is usually shorter than the configured
    /// interval, because it ends at `stop`.
    pub interval_s: f64,
    /// All CPUs together.
    pub cpu: CpuSplit,
    /// Each online CPU, with the MHz read at the end of the interval.
    pub per_cpu: Vec<PerCpu>,
    /// Mean over CPUs of the MHz read at the end of the interval.
    pub freq_mhz: Option<f64>,
    /// Busy MHz: Σ over CPUs of busy fraction × MHz.
    pub load_x_freq: Option<f64>,
    /// Runnable tasks at the end of the interval (`procs_running`, which
    /// counts the sampler itself).
    pub procs_running: u32,
    /// Tasks blocked on I/O at the end of the interval (`procs_blocked`).
    pub procs_blocked: u32,
    /// The 1-minute load average at the end of the interval.
    pub loadavg_1: f64,
    /// `None` when no server PID was given.
    pub server: Option<ServerSample>,
    /// Per-interface counter deltas over the interval, in first-seen order.
    pub net: Vec<NetDelta>,
    /// CPU seconds of this process minus the sampler thread.
    pub client_cpu_s: f64,
    /// Seconds the client's threads spent runnable but waiting for a CPU.
    pub client_runq_wait_s: f64,
    /// CPU seconds of the sampler thread itself in the interval.
    pub sampler_cpu_s: f64,
    /// Mean watts of the interval from the energy source; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
}

/// One process of the server's tree over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSummary {
    /// Its process ID.
    pub pid: u32,
    /// Its parent's process ID, read when the PID first appeared.
    pub ppid: u32,
    /// Its command name (`comm`, at most 15 bytes).
    pub comm: String,
    /// CPU seconds (user + system, all its threads) used within the window.
    pub cpu_s: f64,
    /// Largest RSS seen.
    pub rss_max_bytes: u64,
    /// RSS and VSZ at the last sample that saw it.
    pub rss_bytes: u64,
    /// Virtual size at the last sample that saw it.
    pub vsz_bytes: u64,
    /// Threads at the last sample that saw it.
    pub threads: u32,
    /// Voluntary context switches in the window, summed over its threads.
    pub ctx_voluntary: u64,
    /// Involuntary context switches in the window, summed over its threads.
    pub ctx_involuntary: u64,
    /// When it was first and last seen, seconds into the window.
    pub first_seen_s: f64,
    /// Seconds into the window of the last sample that saw it.
    pub last_seen_s: f64,
    /// Whether it was gone (or a zombie) by the end of the window.
    pub exited: bool,
}

/// The whole window. See `docs/probe-metrics.md` for every field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSummary {
    /// Intervals in the timeline.
    pub samples: u32,
    /// Wall-clock seconds from the window's start to its end.
    pub window_s: f64,
    /// The configured sampling interval, in seconds.
    pub interval_s: f64,
    /// CPUs in `/proc/stat` at the start.
    pub online_cpus: u32,

    /// All CPUs together over the window, from the first and last readings of the `cpu` line.
    pub cpu: CpuSplit,
    /// `cpu.busy`: busy fraction of all CPUs together.
    pub cpu_busy: f64,
    /// Each CPU over the window, with its time-weighted mean MHz.
    pub per_cpu: Vec<PerCpu>,
    /// Mean over CPUs of the MHz read at each sample, time-weighted; `None` when there is no
    /// frequency source (`freq_source` is `unavailable`).
    pub freq_mhz_mean: Option<f64>,
    /// `cpufreq`, `cpuinfo` or `unavailable`.
    pub freq_source: String,
    /// Busy MHz: Σ over CPUs of busy fraction × MHz, time-averaged; equals
    /// `cpu_busy × freq_mhz_mean × online_cpus` at a constant frequency.
    pub load_x_freq: Option<f64>,
    /// Mean of `procs_running` over the samples; it counts the sampler, so it is at least 1.
    pub procs_running_mean: f64,
    /// Largest `procs_running` seen at a sample.
    pub procs_running_max: u32,
    /// Load averages at the end of the window.
    pub loadavg_1: f64,
    /// The 5-minute load average at the end of the window.
    pub loadavg_5: f64,
    /// The 15-minute load average at the end of the window.
    pub loadavg_15: f64,

    /// The server's root PID; `None` when no server was probed, and then the
    /// server fields below are `None` (or empty).
    pub server_pid: Option<u32>,
    /// CPU seconds (user + system) the server's tree used in the window, exact across reaped
    /// children; whole 10 ms ticks.
    pub server_cpu_s: Option<f64>,
    /// `server_cpu_s / window_s`: fraction of one CPU.
    pub server_cpu_util: Option<f64>,
    /// Most live processes / threads seen at once.
    pub processes: Option<u32>,
    /// Most live threads of the tree seen at once.
    pub threads: Option<u32>,
    /// Distinct processes seen in the window (including short-lived ones).
    pub processes_seen: Option<u32>,
    /// Largest total RSS of the tree at one sample.
    pub server_rss_max_bytes: Option<u64>,
    /// Mean RSS / VSZ of a worker: the non-root processes (the root when it
    /// has none), averaged per sample, then over samples.
    pub mem_per_worker_rss_bytes: Option<u64>,
    /// Mean VSZ of a worker, computed as `mem_per_worker_rss_bytes`.
    pub mem_per_worker_vsz_bytes: Option<u64>,
    /// Voluntary context switches of the tree in the window, summed over all threads.
    pub ctx_voluntary: Option<u64>,
    /// Involuntary context switches of the tree in the window, summed over all threads.
    pub ctx_involuntary: Option<u64>,
    /// Whether the server's root process was gone by the end.
    pub server_exited: bool,
    /// Every process of the tree seen, in first-seen order, root first.
    pub server_processes: Vec<ProcessSummary>,

    /// Per-interface counter deltas over the window (the sampler's network namespace, `lo`
    /// included).
    pub net: Vec<NetDelta>,
    /// Bytes received, summed over all interfaces.
    pub net_rx_bytes: u64,
    /// Bytes sent, summed over all interfaces.
    pub net_tx_bytes: u64,
    /// Packets received, summed over all interfaces.
    pub net_rx_packets: u64,
    /// Packets sent, summed over all interfaces.
    pub net_tx_packets: u64,

    /// CPU seconds of the scalelab process (the load generator and the runner) minus the
    /// sampler thread's.
    pub client_cpu_s: f64,
    /// Seconds the process's threads, the sampler apart, were runnable but waiting for a CPU
    /// (schedstat; 0 without `CONFIG_SCHED_INFO`).
    pub client_runq_wait_s: f64,
    /// CPU seconds of the sampler thread in the window.
    pub sampler_cpu_s: f64,
    /// `sampler_cpu_s / window_s`: the probe's own cost, fraction of one CPU.
    pub sampler_cpu_util: f64,
    /// Anything that makes a figure above less trustworthy.
    pub warnings: Vec<String>,
    /// What the rest of the machine used: steal and other processes' CPU
    /// (`probe::background`); `None` for an empty window and in runs stored
    /// before it was measured.
    #[serde(default)]
    pub background: Option<super::background::Background>,
    /// The figures the limiter is judged from (`probe::limiter`): the server's threads'
    /// run-queue wait and blocked time by cause, the listen-queue and UDP counters of its
    /// network namespace, major faults and swap; `None` without a server.
    #[serde(default)]
    pub limiter: Option<super::limiter::LimiterFigures>,
    /// The kernel's counts of the server's work over the window (system
    /// calls, context switches, migrations, faults, CPU by mode, hardware
    /// counters): `None` without a server, on a host without an agent and
    /// in runs stored before they were counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<super::work::WorkCounts>,

    /// Mean watts over the window (`energy.joules / energy.measured_s`);
    /// absent (not null) without an energy source, as are the two below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
    /// The trial's throughput over `watts`: operations per joule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_joule: Option<f64>,
    /// What measured the energy, its domains, joules and seconds covered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<super::energy::EnergySummary>,
}

impl ProbeSummary {
    /// Sets `ops_per_joule` from the trial's `throughput` (operations per
    /// second) and records whether the load generator ran on the measured
    /// hardware. Without an energy figure, nothing changes.
    pub fn set_energy_per_op(&mut self, throughput: f64, client_shares_meter: bool) {
        let Some(energy) = self.energy.as_mut() else {
            return;
        };
        energy.client_shares_meter = client_shares_meter;
        self.ops_per_joule = self
            .watts
            .filter(|w| *w > 0.0 && throughput.is_finite())
            .map(|w| throughput / w);
    }
}

/// What `probe::Sampler::stop` (the lab's) returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeData {
    /// One sample per interval, in time order.
    pub timeline: Vec<ProbeSample>,
    /// The whole window.
    pub summary: ProbeSummary,
}
