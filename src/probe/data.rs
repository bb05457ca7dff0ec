//! What the probe stores: one [`ProbeSample`] per interval and a
//! [`ProbeSummary`] over the whole sampled window. Field names are stable
//! snake_case (stored as JSON, exported as JSON/CSV); each is documented in
//! `docs/probe-metrics.md`. Fractions are 0..1, never percent.

use serde::{Deserialize, Serialize};

/// Where CPU time went, as fractions (0..1) of the elapsed CPU time (for a
/// total over all CPUs: of all CPUs' time). From `/proc/stat` jiffy deltas;
/// `user` includes guest time and `nice` guest_nice, as the kernel counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub irq: f64,
    pub softirq: f64,
    pub iowait: f64,
    pub steal: f64,
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
    pub cpu: u32,
    #[serde(flatten)]
    pub split: CpuSplit,
    /// MHz read at the end of the interval (sample), or the time-weighted
    /// mean (summary); `None` when no source gives it.
    pub freq_mhz: Option<f64>,
}

/// Packet and byte counts of one network interface over an interval.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetDelta {
    pub iface: String,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
}

/// The server's process tree during one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSample {
    /// Live (non-zombie) processes in the tree at the end of the interval.
    pub processes: u32,
    pub threads: u32,
    /// CPU seconds (user + system) the tree used in the interval.
    pub cpu_s: f64,
    /// `cpu_s / interval_s`: fraction of one CPU (2.0 = two CPUs busy).
    pub cpu_util: f64,
    pub rss_bytes: u64,
    pub vsz_bytes: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    /// Mean RSS / VSZ of a worker (see `ProbeSummary::mem_per_worker_rss_bytes`).
    pub worker_rss_bytes: Option<u64>,
    pub worker_vsz_bytes: Option<u64>,
}

/// One interval of the timeline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSample {
    /// Seconds from the start of the window to the end of this interval.
    pub t_s: f64,
    pub interval_s: f64,
    /// All CPUs together.
    pub cpu: CpuSplit,
    pub per_cpu: Vec<PerCpu>,
    /// Mean over CPUs of the MHz read at the end of the interval.
    pub freq_mhz: Option<f64>,
    /// Busy MHz: Σ over CPUs of busy fraction × MHz.
    pub load_x_freq: Option<f64>,
    /// Runnable tasks at the end of the interval (`procs_running`, which
    /// counts the sampler itself).
    pub procs_running: u32,
    pub procs_blocked: u32,
    pub loadavg_1: f64,
    /// `None` when no server PID was given.
    pub server: Option<ServerSample>,
    pub net: Vec<NetDelta>,
    /// CPU seconds of this process minus the sampler thread.
    pub client_cpu_s: f64,
    /// Seconds the client's threads spent runnable but waiting for a CPU.
    pub client_runq_wait_s: f64,
    pub sampler_cpu_s: f64,
}

/// One process of the server's tree over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSummary {
    pub pid: u32,
    pub ppid: u32,
    pub comm: String,
    /// CPU seconds (user + system, all its threads) used within the window.
    pub cpu_s: f64,
    /// Largest RSS seen.
    pub rss_max_bytes: u64,
    /// RSS and VSZ at the last sample that saw it.
    pub rss_bytes: u64,
    pub vsz_bytes: u64,
    pub threads: u32,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
    /// When it was first and last seen, seconds into the window.
    pub first_seen_s: f64,
    pub last_seen_s: f64,
    /// Whether it was gone (or a zombie) by the end of the window.
    pub exited: bool,
}

/// The whole window. See `docs/probe-metrics.md` for every field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSummary {
    pub samples: u32,
    /// Wall-clock seconds from the window's start to its end.
    pub window_s: f64,
    pub interval_s: f64,
    pub online_cpus: u32,

    pub cpu: CpuSplit,
    /// `cpu.busy`: busy fraction of all CPUs together.
    pub cpu_busy: f64,
    pub per_cpu: Vec<PerCpu>,
    pub freq_mhz_mean: Option<f64>,
    /// `cpufreq`, `cpuinfo` or `unavailable`.
    pub freq_source: String,
    /// Busy MHz: Σ over CPUs of busy fraction × MHz, time-averaged; equals
    /// `cpu_busy × freq_mhz_mean × online_cpus` at a constant frequency.
    pub load_x_freq: Option<f64>,
    pub procs_running_mean: f64,
    pub procs_running_max: u32,
    /// Load averages at the end of the window.
    pub loadavg_1: f64,
    pub loadavg_5: f64,
    pub loadavg_15: f64,

    pub server_pid: Option<u32>,
    pub server_cpu_s: Option<f64>,
    /// `server_cpu_s / window_s`: fraction of one CPU.
    pub server_cpu_util: Option<f64>,
    /// Most live processes / threads seen at once.
    pub processes: Option<u32>,
    pub threads: Option<u32>,
    /// Distinct processes seen in the window (including short-lived ones).
    pub processes_seen: Option<u32>,
    pub server_rss_max_bytes: Option<u64>,
    /// Mean RSS / VSZ of a worker: the non-root processes (the root when it
    /// has none), averaged per sample, then over samples.
    pub mem_per_worker_rss_bytes: Option<u64>,
    pub mem_per_worker_vsz_bytes: Option<u64>,
    pub ctx_voluntary: Option<u64>,
    pub ctx_involuntary: Option<u64>,
    /// Whether the server's root process was gone by the end.
    pub server_exited: bool,
    pub server_processes: Vec<ProcessSummary>,

    pub net: Vec<NetDelta>,
    pub net_rx_bytes: u64,
    pub net_tx_bytes: u64,
    pub net_rx_packets: u64,
    pub net_tx_packets: u64,

    pub client_cpu_s: f64,
    pub client_runq_wait_s: f64,
    pub sampler_cpu_s: f64,
    /// `sampler_cpu_s / window_s`: the probe's own cost, fraction of one CPU.
    pub sampler_cpu_util: f64,
    /// Anything that makes a figure above less trustworthy.
    pub warnings: Vec<String>,
}

/// What [`super::Sampler::stop`] returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeData {
    pub timeline: Vec<ProbeSample>,
    pub summary: ProbeSummary,
}
