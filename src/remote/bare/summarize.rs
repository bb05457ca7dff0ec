//! The interval probe's samples as the agent's probe stores them: a
//! timeline of per-interval deltas (the agent's `ProbeSample`) and the
//! summary over the window, computed by the agent's own summarizer
//! (`probe::summary::summarize`) with the limiter's counters. Pure: samples
//! and their times in, [`ProbeData`] out. What the host did not give stays
//! `None` and is named in the summary's warnings as unavailable
//! ([`over_ssh`]).

use super::parse::{HostSample, ProcRow};
use crate::probe::cpu::{split, CpuTimes, ProcStat};
use crate::probe::limiter::LimiterFigures;
use crate::probe::summary::SummaryInputs;
use crate::probe::{PerCpu, ProbeData, ProbeSample, ProbeSummary, ServerSample};
use crate::procfs::loadavg::LoadAvg;
use std::collections::HashMap;

/// One sample and when it was taken, seconds from the first.
pub type Timed = (f64, HostSample);

/// The server's tree in `procs`: `root` and its descendants.
pub fn tree(procs: &[ProcRow], root: u32) -> Vec<&ProcRow> {
    crate::probe::tree::tree_order(procs, root, |r| (r.pid, r.ppid))
        .into_iter()
        .map(|i| &procs[i])
        .collect()
}

/// A CPU's ticks (user, nice, system, interrupt, idle, steal: the order
/// of [`HostSample::cpus`]) as the agent's `/proc/stat` times, so that one
/// split ([`split`]) serves both probes. A BSD's interrupt time and Linux's
/// irq with softirq are `irq`; iowait is in `idle`.
fn times(t: &[u64; 6]) -> CpuTimes {
    CpuTimes {
        user: t[0],
        nice: t[1],
        system: t[2],
        irq: t[3],
        idle: t[4],
        steal: t[5],
        ..CpuTimes::default()
    }
}

/// A sample's CPU ticks as the agent's `/proc/stat` reading: all CPUs
/// together and each by its index.
fn proc_stat(s: &HostSample) -> ProcStat {
    let mut ticks = [0u64; 6];
    for cpu in &s.cpus {
        ticks.iter_mut().zip(cpu).for_each(|(t, c)| *t += c);
    }
    ProcStat {
        total: times(&ticks),
        per_cpu: (0u32..).zip(s.cpus.iter().map(times)).collect(),
        procs_running: s.procs_running.unwrap_or(0),
        procs_blocked: s.procs_blocked.unwrap_or(0),
    }
}

/// Per-CPU splits from `a` to `b`, with `b`'s MHz.
fn per_cpu(a: &HostSample, b: &HostSample) -> Vec<PerCpu> {
    a.cpus
        .iter()
        .zip(&b.cpus)
        .enumerate()
        .map(|(i, (x, y))| PerCpu {
            cpu: i as u32,
            split: split(&times(x), &times(y)),
            freq_mhz: b.mhz.get(i).copied(),
        })
        .collect()
}

/// The server tree's figures over one interval (or the window).
fn server(a: &HostSample, b: &HostSample, root: u32, seconds: f64) -> Option<ServerSample> {
    let now = tree(&b.procs, root);
    if now.is_empty() {
        return None;
    }
    let before: HashMap<u32, &ProcRow> = tree(&a.procs, root)
        .into_iter()
        .map(|r| (r.pid, r))
        .collect();
    let delta = |f: fn(&ProcRow) -> Option<u64>| -> Option<u64> {
        now.iter()
            .map(|r| Some(f(r)?.saturating_sub(before.get(&r.pid).map_or(Some(0), |p| f(p))?)))
            .sum()
    };
    let cpu_s: f64 = now
        .iter()
        .map(|r| (r.cpu_s - before.get(&r.pid).map_or(0.0, |p| p.cpu_s)).max(0.0))
        .sum();
    let workers: Vec<&&ProcRow> = now.iter().filter(|r| r.pid != root).collect();
    let per: Vec<&&ProcRow> = if workers.is_empty() {
        now.iter().collect()
    } else {
        workers
    };
    let n = per.len() as u64;
    Some(ServerSample {
        processes: now.len() as u32,
        threads: now.iter().filter_map(|r| r.threads).sum(),
        cpu_s,
        cpu_util: cpu_s / seconds.max(1e-9),
        rss_bytes: now.iter().map(|r| r.rss_kib * 1024).sum(),
        vsz_bytes: now.iter().map(|r| r.vsz_kib * 1024).sum(),
        ctx_voluntary: delta(|r| r.ctx_voluntary).unwrap_or(0),
        ctx_involuntary: delta(|r| r.ctx_involuntary).unwrap_or(0),
        worker_rss_bytes: Some(per.iter().map(|r| r.rss_kib * 1024).sum::<u64>() / n),
        worker_vsz_bytes: Some(per.iter().map(|r| r.vsz_kib * 1024).sum::<u64>() / n),
    })
}

/// Major faults of the tree from `a` to `b`, where `ps` gives them.
fn major_faults(a: &HostSample, b: &HostSample, root: u32) -> Option<u64> {
    let before: HashMap<u32, Option<u64>> = tree(&a.procs, root)
        .into_iter()
        .map(|r| (r.pid, r.major_faults))
        .collect();
    tree(&b.procs, root)
        .iter()
        .map(|r| {
            Some(
                r.major_faults?
                    .saturating_sub(before.get(&r.pid).copied().flatten().unwrap_or(0)),
            )
        })
        .sum()
}

/// The timeline and summary of `samples` (at least two), probing `root`.
pub fn summarize(samples: &[Timed], root: Option<u32>, interval_s: f64) -> ProbeData {
    let (Some((t0, first)), Some((t1, last))) = (samples.first(), samples.last()) else {
        return ProbeData::default();
    };
    let timeline = timeline(samples, root);
    let window_s = t1 - t0;
    let mut summary = crate::probe::summary::summarize(SummaryInputs {
        samples: &timeline,
        first: &proc_stat(first),
        last: &proc_stat(last),
        window_s,
        interval_s,
        online_cpus: first.cpus.len() as u32,
        freq_source: if timeline.iter().any(|t| t.freq_mhz.is_some()) {
            "sysctl or cpuinfo over ssh"
        } else {
            "unavailable"
        },
        // No load average over ssh: 0, as the summary has always said.
        last_load: LoadAvg::default(),
        server_pid: root,
        processes: Vec::new(),
        server_exited: false,
        warnings: Vec::new(),
        limiter: Some(limiter(first, last, root, window_s)),
    });
    over_ssh(&mut summary, first, last, root);
    ProbeData { timeline, summary }
}

/// One [`ProbeSample`] per pair of samples in a row.
fn timeline(samples: &[Timed], root: Option<u32>) -> Vec<ProbeSample> {
    let t0 = samples.first().map_or(0.0, |(t, _)| *t);
    samples
        .windows(2)
        .map(|pair| {
            let ((ta, a), (tb, b)) = (&pair[0], &pair[1]);
            let seconds = tb - ta;
            let per_cpu = per_cpu(a, b);
            let total = |s: &HostSample| proc_stat(s).total;
            ProbeSample {
                t_s: tb - t0,
                interval_s: seconds,
                cpu: split(&total(a), &total(b)),
                freq_mhz: mean(b.mhz.iter().copied()),
                load_x_freq: load_x_freq(&per_cpu),
                procs_running: b.procs_running.unwrap_or(0),
                procs_blocked: b.procs_blocked.unwrap_or(0),
                server: root.and_then(|r| server(a, b, r, seconds)),
                per_cpu,
                ..ProbeSample::default()
            }
        })
        .collect()
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Σ over CPUs of busy share × MHz, where every CPU has a frequency.
fn load_x_freq(cpus: &[PerCpu]) -> Option<f64> {
    cpus.iter()
        .map(|c| Some(c.split.busy * c.freq_mhz?))
        .sum::<Option<f64>>()
        .filter(|_| !cpus.is_empty())
}

/// What a host probed over ssh tells otherwise than the agent's
/// `/proc`: a server gone from its host by the last sample (the agent's
/// tracker says so itself), figures `ps` does not give (threads, context
/// switches: unavailable, not 0), no per-process list, a background
/// without the client's and the sampler's own time (neither runs there)
/// and none without CPU ticks, and the warning that names what is missing.
fn over_ssh(s: &mut ProbeSummary, first: &HostSample, last: &HostSample, root: Option<u32>) {
    s.processes_seen = None;
    if let Some(root) = root {
        let rows = tree(&last.procs, root);
        if rows.is_empty() {
            s.server_exited = true;
            (s.server_cpu_s, s.server_cpu_util) = (None, None);
            (s.processes, s.threads, s.server_rss_max_bytes) = (None, None, None);
            (s.ctx_voluntary, s.ctx_involuntary) = (None, None);
            s.warnings.push(format!(
                "the server's process {root} was not found on its host"
            ));
        }
        if !rows.iter().all(|r| r.threads.is_some()) {
            s.threads = None;
        }
        if !rows.iter().all(|r| r.ctx_voluntary.is_some()) {
            (s.ctx_voluntary, s.ctx_involuntary) = (None, None);
        }
    }
    s.background = (!first.cpus.is_empty())
        .then(|| {
            crate::probe::background::measure(crate::probe::background::BackgroundInputs {
                busy_share: s.cpu_busy,
                steal_share: s.cpu.steal,
                window_s: s.window_s,
                online_cpus: s.online_cpus,
                server_cpu_s: s.server_cpu_s,
                own_cpu_s: 0.0,
            })
        })
        .flatten();
    s.warnings.push(unavailable(first, last, root));
}

/// The limiter's counters over the window.
fn limiter(
    first: &HostSample,
    last: &HostSample,
    root: Option<u32>,
    window_s: f64,
) -> LimiterFigures {
    LimiterFigures {
        counters: last.counters.since(&first.counters),
        major_faults: root.and_then(|r| major_faults(first, last, r)).unwrap_or(0),
        window_s,
        ..LimiterFigures::default()
    }
}

/// The warning that names what the host did not give.
fn unavailable(first: &HostSample, last: &HostSample, root: Option<u32>) -> String {
    let mut missing = vec!["run-queue wait and thread states (no schedstat over ssh)"];
    let mut check = |ok: bool, what: &'static str| {
        if !ok {
            missing.push(what);
        }
    };
    check(!last.cpus.is_empty(), "CPU split");
    check(!last.mhz.is_empty(), "frequency");
    check(
        last.counters.listen_overflows.is_some(),
        "listen-queue overflows",
    );
    check(
        last.counters.udp_rcvbuf_errors.is_some(),
        "UDP receive-buffer drops",
    );
    check(last.counters.swap_in_pages.is_some(), "swap");
    if let Some(r) = root {
        let t = tree(&last.procs, r);
        check(
            t.iter().all(|p| p.ctx_voluntary.is_some()),
            "context switches",
        );
        let faults = major_faults(first, last, r).is_some();
        check(faults, "major faults (counted as 0 by the limiter)");
    }
    let os = if last.os.is_empty() {
        "unknown OS"
    } else {
        &last.os
    };
    format!(
        "probed over ssh without an agent ({os}): unavailable: {}",
        missing.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_row(pid: u32, ppid: u32, cpu_s: f64, rss_kib: u64) -> ProcRow {
        ProcRow {
            pid,
            ppid,
            cpu_s,
            rss_kib,
            vsz_kib: 2 * rss_kib,
            comm: "nginx".into(),
            ..ProcRow::default()
        }
    }

    /// A FreeBSD-like sample: two CPUs, POSIX `ps` only.
    fn sample(busy_ticks: u64, overflows: u64, worker_cpu_s: f64) -> HostSample {
        HostSample {
            os: "FreeBSD".into(),
            cpus: vec![
                [busy_ticks, 0, 0, 0, 1000, 0],
                [0, 0, 0, 0, 1000 + busy_ticks, 0],
            ],
            mhz: vec![3600.0, 3600.0],
            counters: crate::probe::limiter::counters::Counters {
                listen_overflows: Some(overflows),
                ..Default::default()
            },
            procs: vec![
                proc_row(1, 0, 5.0, 900),
                proc_row(700, 1, 0.1, 8000),
                proc_row(701, 700, worker_cpu_s, 9000),
            ],
            ..HostSample::default()
        }
    }

    #[test]
    fn a_window_gives_the_trees_cpu_the_overflows_and_names_what_is_missing() {
        let samples = vec![(0.0, sample(0, 10, 1.0)), (2.0, sample(100, 17, 2.5))];
        let data = summarize(&samples, Some(700), 1.0);
        let s = &data.summary;
        assert_eq!(data.timeline.len(), 1);
        assert_eq!(s.server_cpu_s, Some(1.5));
        assert_eq!(s.processes, Some(2));
        assert_eq!(s.server_rss_max_bytes, Some(17_000 * 1024));
        // CPU 0 went from 0 to 100 busy ticks of 100: busy; CPU 1 idle.
        assert!((s.per_cpu[0].split.busy - 1.0).abs() < 1e-9);
        assert!((s.cpu_busy - 0.5).abs() < 1e-9);
        assert_eq!(s.load_x_freq, Some(3600.0));
        let l = s.limiter.as_ref().unwrap();
        assert_eq!(l.counters.listen_overflows, Some(7));
        assert_eq!(
            (l.counters.udp_rcvbuf_errors, l.counters.swap_in_pages),
            (None, None)
        );
        // ps gave no context switches: unavailable, not zero.
        assert_eq!(s.ctx_voluntary, None);
        assert_eq!(s.threads, None);
        let w = s.warnings.join(" ");
        for missing in ["context switches", "UDP receive-buffer drops", "swap"] {
            assert!(w.contains(missing), "{w}");
        }
        assert!(!w.contains("CPU split") && w.contains("(FreeBSD)"), "{w}");
        // The host's other processes: 2 s x 2 CPUs x 0.5 busy, less 1.5 s.
        let b = s.background.unwrap();
        assert!((b.other_cpu_s - 0.5).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn a_server_gone_from_its_host_is_said() {
        let mut gone = sample(100, 10, 2.0);
        gone.procs.retain(|r| r.pid == 1);
        let data = summarize(&[(0.0, sample(0, 10, 1.0)), (1.0, gone)], Some(700), 1.0);
        assert!(data.summary.server_exited);
        assert_eq!(data.summary.server_cpu_s, None);
    }

    #[test]
    fn the_summary_is_the_agents_rule_over_the_intervals() {
        // Three samples a second apart; a second worker starts in the
        // second interval, and the run queue is read at each.
        let a = sample(0, 10, 1.0);
        let mut b = sample(50, 12, 1.5);
        b.procs_running = Some(3);
        let mut c = sample(100, 17, 2.5);
        c.procs_running = Some(1);
        c.procs.push(proc_row(702, 700, 0.4, 1000));
        let data = summarize(&[(0.0, a), (1.0, b), (2.0, c)], Some(700), 1.0);
        let s = &data.summary;
        assert_eq!(data.timeline.len(), 2);
        // 0.5 s in the first interval, 1.0 + 0.4 (the new worker) in the second.
        assert!((s.server_cpu_s.unwrap() - 1.9).abs() < 1e-9, "{s:?}");
        assert_eq!(s.processes, Some(3));
        // The agent's run-queue figures, which this path never gave before.
        assert_eq!((s.procs_running_mean, s.procs_running_max), (2.0, 3));
        // No per-process list over ssh: unknown, not "0 seen".
        assert_eq!(s.processes_seen, None);
        assert_eq!(s.freq_source, "sysctl or cpuinfo over ssh");
    }

    #[test]
    fn a_window_without_ticks_is_not_busy() {
        // The agent's split: no tick in the window is no share, where this
        // path's own split once called it 100% busy.
        let data = summarize(
            &[(0.0, sample(0, 10, 1.0)), (1.0, sample(0, 10, 1.0))],
            Some(700),
            1.0,
        );
        assert_eq!(data.summary.cpu_busy, 0.0);
        assert_eq!(data.timeline[0].cpu.busy, 0.0);
    }
}
