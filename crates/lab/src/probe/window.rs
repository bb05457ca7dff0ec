//! The sampled window: readings of every source, the deltas between
//! consecutive readings (the timeline), and the summary at the end.

use super::cpu::{split, ProcStat};
use super::data::{PerCpu, ProbeData, ProbeSample, ServerSample};
use super::energy::{EnergyWorker, Meter};
use super::freq::{FreqReader, FreqSource};
use super::limiter::threads::{LimiterSampler, Member};
use super::netdev::{delta, parse_net_dev, NetCounters};
use super::own::{self, RunqTracker};
use super::summary::{summarize, SummaryInputs};
use super::tracker::{Interval, Tracker};
use super::tree::{self, TreeScanner, TreeTotals};
use super::work::WorkCounter;
use crate::procfs::loadavg::LoadAvg;
use std::time::{Duration, Instant};

/// One reading of every source.
#[derive(Debug, Clone)]
struct Snapshot {
    at: Instant,
    stat: ProcStat,
    freq: Vec<(u32, f64)>,
    load: LoadAvg,
    net: Vec<NetCounters>,
    tree: Option<TreeTotals>,
    process_cpu_ns: u64,
    sampler_cpu_ns: u64,
}

pub(super) struct State {
    interval: Duration,
    root: Option<u32>,
    start: Instant,
    ticks_per_s: f64,
    page_size: u64,
    freq: FreqReader,
    first: ProcStat,
    prev: Snapshot,
    scanner: TreeScanner,
    tracker: Tracker,
    runq: RunqTracker,
    samples: Vec<ProbeSample>,
    /// The tree's processes at the last reading (zombies marked).
    members: Vec<Member>,
    limiter: Option<LimiterSampler>,
    /// Whether the server's root process was running at the start.
    root_at_start: bool,
    warnings: Vec<String>,
    /// The energy meter, read on its own thread, when there is a source.
    energy: Option<EnergyWorker>,
    /// The kernel's counters of the server's cgroup, from the baseline on,
    /// or why there are none.
    work: Option<Result<WorkCounter, String>>,
}

impl State {
    pub(super) fn begin(
        interval: Duration,
        root: Option<u32>,
        meter: Option<Meter>,
        syscalls: super::work::SyscallMode,
    ) -> State {
        // SAFETY: sysconf has no preconditions.
        let (tck, page) = unsafe {
            (
                libc::sysconf(libc::_SC_CLK_TCK),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let ticks_per_s = if tck > 0 { tck as f64 } else { 100.0 };
        let stat = read_stat();
        let cpus: Vec<u32> = stat.per_cpu.iter().map(|(n, _)| *n).collect();
        let window_start_ticks = (own::boottime_ns() as f64 / 1e9 * ticks_per_s) as u64;
        let mut state = State {
            interval,
            root,
            start: Instant::now(),
            ticks_per_s,
            page_size: if page > 0 { page as u64 } else { 4096 },
            freq: FreqReader::detect(&cpus),
            first: stat.clone(),
            prev: placeholder(stat),
            scanner: TreeScanner::default(),
            tracker: Tracker::new(window_start_ticks),
            runq: RunqTracker::new(own::current_tid()),
            samples: Vec::new(),
            members: Vec::new(),
            limiter: None,
            root_at_start: false,
            warnings: Vec::new(),
            energy: None,
            work: None,
        };
        let (base, _) = state.snapshot();
        if let Some(m) = meter {
            state.energy = EnergyWorker::start(m, interval);
            if state.energy.is_none() {
                state
                    .warnings
                    .push("energy: the meter's thread could not start; no energy figure".into());
            }
        }
        state.runq.observe();
        state.first = base.stat.clone();
        state.start = base.at;
        state.root_at_start = base.tree.as_ref().is_some_and(|t| t.root_alive);
        state.limiter = root.map(|r| LimiterSampler::begin(r, &state.members));
        if let Some(r) = root.filter(|_| state.root_at_start) {
            state.work = Some(WorkCounter::start(r, &cpus, syscalls));
        }
        if let (Some(pid), Some(t)) = (root, &base.tree) {
            if !t.root_alive {
                state.warnings.push(format!(
                    "server process {pid} was not running when sampling started; no server metrics"
                ));
            }
        }
        if state.freq.source == FreqSource::Unavailable {
            state
                .warnings
                .push("no CPU frequency source (no cpufreq, no MHz in /proc/cpuinfo)".into());
        }
        state.prev = base;
        state
    }

    /// When the baseline reading was taken: the start of the window.
    pub(super) fn started(&self) -> Instant {
        self.start
    }

    pub(super) fn since_last_reading(&self) -> Duration {
        self.prev.at.elapsed()
    }

    /// Reads every source; also returns what the tree's members did since
    /// the previous reading.
    fn snapshot(&mut self) -> (Snapshot, Interval) {
        let at = Instant::now();
        let t_s = at.duration_since(self.start).as_secs_f64();
        let mut members_did = Interval::default();
        let tree = self.root.map(|pid| {
            let members = self.scanner.scan(pid);
            members_did = self.tracker.observe(&members, t_s);
            self.members = members
                .iter()
                .map(|m| Member {
                    pid: m.stat.pid,
                    threads: m.stat.num_threads,
                    zombie: m.stat.is_zombie(),
                })
                .collect();
            tree::totals(&members, self.page_size)
        });
        let snap = Snapshot {
            at,
            stat: read_stat(),
            freq: self.freq.read(),
            load: crate::procfs::loadavg::read(),
            net: parse_net_dev(&crate::procfs::system::net_dev().unwrap_or_default()),
            tree,
            process_cpu_ns: own::process_cpu_ns(),
            sampler_cpu_ns: own::thread_cpu_ns(),
        };
        (snap, members_did)
    }

    pub(super) fn sample(&mut self) {
        let (cur, members_did) = self.snapshot();
        let runq_ns = self.runq.observe();
        let t_s = cur.at.duration_since(self.start).as_secs_f64();
        let s = build_sample(
            &self.prev,
            &cur,
            t_s,
            members_did,
            runq_ns,
            self.ticks_per_s,
        );
        let watts = self.energy.as_ref().and_then(EnergyWorker::take_watts);
        if let Some(l) = &mut self.limiter {
            l.sample(&self.members, s.interval_s);
        }
        self.samples.push(ProbeSample { watts, ..s });
        self.prev = cur;
    }

    /// Between samples: the limiter's wait-state sample of the server's threads.
    pub(super) fn tick(&mut self) {
        if let Some(l) = &mut self.limiter {
            l.tick(&self.members);
        }
    }

    pub(super) fn finish(mut self) -> ProbeData {
        let alive_now = self.prev.tree.as_ref().is_some_and(|t| t.root_alive);
        let server_exited = self.root_at_start && !alive_now;
        if let (true, Some(pid)) = (server_exited, self.root) {
            self.warnings.push(format!(
                "server process {pid} exited during the window; CPU used after the last sample that saw it is missing"
            ));
        }
        // A server whose work cannot be counted (no cgroup of its own) has
        // its reason in `work.unavailable`: no figure, and no warning.
        let work = self.work.take().map(|w| match w {
            Ok(counter) => counter.finish(),
            Err(why) => scalelab_record::probe::work::WorkCounts {
                unavailable: vec![format!("work per operation: not counted: {why}")],
                ..Default::default()
            },
        });
        let window_s = self.prev.at.duration_since(self.start).as_secs_f64();
        let energy = self.energy.take().and_then(|e| e.finish(window_s));
        if let Some((_, warnings)) = &energy {
            self.warnings.extend(warnings.iter().cloned());
        }
        let mut summary = summarize(SummaryInputs {
            samples: &self.samples,
            first: &self.first,
            last: &self.prev.stat,
            window_s,
            interval_s: self.interval.as_secs_f64(),
            online_cpus: self.first.per_cpu.len() as u32,
            freq_source: self.freq.source.as_str(),
            last_load: self.prev.load,
            server_pid: self.root,
            processes: self.tracker.summaries(self.ticks_per_s, self.page_size),
            server_exited,
            warnings: std::mem::take(&mut self.warnings),
            limiter: self.limiter.as_ref().map(LimiterSampler::finish),
        });
        summary.work = work;
        if let Some((energy, _)) = energy {
            summary.watts = energy.watts();
            summary.energy = Some(energy);
        }
        ProbeData {
            timeline: self.samples,
            summary,
        }
    }
}

/// The deltas between two readings.
fn build_sample(
    prev: &Snapshot,
    cur: &Snapshot,
    t_s: f64,
    members_did: Interval,
    runq_ns: u64,
    ticks_per_s: f64,
) -> ProbeSample {
    let interval_s = cur.at.duration_since(prev.at).as_secs_f64();
    let mean_mhz = (!cur.freq.is_empty())
        .then(|| cur.freq.iter().map(|(_, f)| f).sum::<f64>() / cur.freq.len() as f64);
    let per_cpu: Vec<PerCpu> = cur
        .stat
        .per_cpu
        .iter()
        .filter_map(|(n, after)| {
            let (_, before) = prev.stat.per_cpu.iter().find(|(m, _)| m == n)?;
            Some(PerCpu {
                cpu: *n,
                split: split(before, after),
                freq_mhz: cur.freq.iter().find(|(c, _)| c == n).map(|(_, f)| *f),
            })
        })
        .collect();
    let load_x_freq = mean_mhz.map(|mean| {
        per_cpu
            .iter()
            .map(|c| c.split.busy * c.freq_mhz.unwrap_or(mean))
            .sum()
    });
    let sampler_ns = cur.sampler_cpu_ns.saturating_sub(prev.sampler_cpu_ns);
    let process_ns = cur.process_cpu_ns.saturating_sub(prev.process_cpu_ns);
    ProbeSample {
        t_s,
        interval_s,
        cpu: split(&prev.stat.total, &cur.stat.total),
        per_cpu,
        freq_mhz: mean_mhz,
        load_x_freq,
        procs_running: cur.stat.procs_running,
        procs_blocked: cur.stat.procs_blocked,
        loadavg_1: cur.load.one,
        server: cur
            .tree
            .as_ref()
            .map(|t| server_sample(prev.tree.as_ref(), t, members_did, interval_s, ticks_per_s)),
        net: delta(&prev.net, &cur.net),
        client_cpu_s: process_ns.saturating_sub(sampler_ns) as f64 / 1e9,
        client_runq_wait_s: runq_ns as f64 / 1e9,
        sampler_cpu_s: sampler_ns as f64 / 1e9,
        watts: None,
    }
}

/// The tree over one interval. CPU comes from the tree totals (exact across
/// reaped exits) while the root is listed (a zombie root still shows its
/// times), else from the per-process deltas.
fn server_sample(
    prev: Option<&TreeTotals>,
    cur: &TreeTotals,
    members_did: Interval,
    interval_s: f64,
    ticks_per_s: f64,
) -> ServerSample {
    let ticks = match prev {
        Some(p) if p.root_present && cur.root_present => cur
            .ticks_with_children
            .saturating_sub(p.ticks_with_children),
        _ => members_did.own_ticks,
    };
    let cpu_s = ticks as f64 / ticks_per_s;
    ServerSample {
        processes: cur.processes,
        threads: cur.threads,
        cpu_s,
        cpu_util: if interval_s > 0.0 {
            cpu_s / interval_s
        } else {
            0.0
        },
        rss_bytes: cur.rss_bytes,
        vsz_bytes: cur.vsz_bytes,
        ctx_voluntary: members_did.ctx_voluntary,
        ctx_involuntary: members_did.ctx_involuntary,
        worker_rss_bytes: cur.worker_rss_bytes.map(|v| v.round() as u64),
        worker_vsz_bytes: cur.worker_vsz_bytes.map(|v| v.round() as u64),
    }
}

fn read_stat() -> ProcStat {
    crate::procfs::stat::read()
}

fn placeholder(stat: ProcStat) -> Snapshot {
    Snapshot {
        at: Instant::now(),
        stat,
        freq: Vec::new(),
        load: LoadAvg::default(),
        net: Vec::new(),
        tree: None,
        process_cpu_ns: 0,
        sampler_cpu_ns: 0,
    }
}
