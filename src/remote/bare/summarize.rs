//! The interval probe's samples as the agent's probe stores them: a
//! timeline of per-interval deltas and a summary over the window, with
//! the limiter's counters. Pure: samples and their times in, [`ProbeData`]
//! out. What the host did not give stays `None` and is named in the
//! summary's warnings as unavailable.

use super::parse::{HostSample, ProcRow};
use crate::probe::limiter::LimiterFigures;
use crate::probe::{CpuSplit, PerCpu, ProbeData, ProbeSample, ProbeSummary, ServerSample};
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

/// The split of tick deltas `a` → `b` (user, nice, sys, intr, idle, steal).
fn split(a: &[u64; 6], b: &[u64; 6]) -> CpuSplit {
    let d: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| y.saturating_sub(*x) as f64)
        .collect();
    let total = d.iter().sum::<f64>().max(1.0);
    CpuSplit {
        user: d[0] / total,
        nice: d[1] / total,
        system: d[2] / total,
        irq: d[3] / total,
        idle: d[4] / total,
        steal: d[5] / total,
        busy: 1.0 - d[4] / total,
        ..CpuSplit::default()
    }
}

/// All CPUs' ticks together.
fn total(cpus: &[[u64; 6]]) -> [u64; 6] {
    let mut t = [0u64; 6];
    for c in cpus {
        for i in 0..6 {
            t[i] += c[i];
        }
    }
    t
}

/// Per-CPU splits from `a` to `b`, with `b`'s MHz.
fn per_cpu(a: &HostSample, b: &HostSample) -> Vec<PerCpu> {
    a.cpus
        .iter()
        .zip(&b.cpus)
        .enumerate()
        .map(|(i, (x, y))| PerCpu {
            cpu: i as u32,
            split: split(x, y),
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
    let mut data = ProbeData::default();
    let (Some((t0, first)), Some((t1, last))) = (samples.first(), samples.last()) else {
        return data;
    };
    for pair in samples.windows(2) {
        let ((ta, a), (tb, b)) = (&pair[0], &pair[1]);
        let seconds = tb - ta;
        let per_cpu = per_cpu(a, b);
        let freq = mean(b.mhz.iter().copied());
        data.timeline.push(ProbeSample {
            t_s: tb - t0,
            interval_s: seconds,
            cpu: split(&total(&a.cpus), &total(&b.cpus)),
            freq_mhz: freq,
            load_x_freq: load_x_freq(&per_cpu),
            procs_running: b.procs_running.unwrap_or(0),
            procs_blocked: b.procs_blocked.unwrap_or(0),
            server: root.and_then(|r| server(a, b, r, seconds)),
            per_cpu,
            ..ProbeSample::default()
        });
    }
    let window_s = t1 - t0;
    let s = &mut data.summary;
    s.samples = data.timeline.len() as u32;
    s.window_s = window_s;
    s.interval_s = interval_s;
    s.online_cpus = first.cpus.len() as u32;
    s.cpu = split(&total(&first.cpus), &total(&last.cpus));
    s.cpu_busy = s.cpu.busy;
    s.per_cpu = per_cpu(first, last);
    s.freq_mhz_mean = mean(data.timeline.iter().filter_map(|t| t.freq_mhz));
    s.freq_source = if s.freq_mhz_mean.is_some() {
        "sysctl or cpuinfo over ssh".into()
    } else {
        "unavailable".into()
    };
    s.load_x_freq = mean(data.timeline.iter().filter_map(|t| t.load_x_freq));
    summarize_server(s, &data.timeline, first, last, root);
    // The rest of the host: its busy time less steal and the server's
    // tree (no scalelab process runs there).
    s.background = (!first.cpus.is_empty())
        .then(|| {
            crate::probe::background::measure(crate::probe::background::BackgroundInputs {
                busy_share: s.cpu_busy,
                steal_share: s.cpu.steal,
                window_s,
                online_cpus: s.online_cpus,
                server_cpu_s: s.server_cpu_s,
                own_cpu_s: 0.0,
            })
        })
        .flatten();
    s.limiter = Some(limiter(first, last, root, window_s));
    s.warnings.push(unavailable(first, last, root));
    data
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

fn summarize_server(
    s: &mut ProbeSummary,
    timeline: &[ProbeSample],
    first: &HostSample,
    last: &HostSample,
    root: Option<u32>,
) {
    let Some(root) = root else { return };
    s.server_pid = Some(root);
    let Some(whole) = server(first, last, root, s.window_s) else {
        s.server_exited = true;
        s.warnings.push(format!(
            "the server's process {root} was not found on its host"
        ));
        return;
    };
    let seen: Vec<&ServerSample> = timeline.iter().filter_map(|t| t.server.as_ref()).collect();
    s.server_cpu_s = Some(whole.cpu_s);
    s.server_cpu_util = Some(whole.cpu_util);
    s.processes = seen.iter().map(|t| t.processes).max();
    s.threads = last
        .procs
        .iter()
        .all(|r| r.threads.is_some())
        .then(|| seen.iter().map(|t| t.threads).max())
        .flatten();
    s.server_rss_max_bytes = seen.iter().map(|t| t.rss_bytes).max();
    s.mem_per_worker_rss_bytes = whole.worker_rss_bytes;
    s.mem_per_worker_vsz_bytes = whole.worker_vsz_bytes;
    let has_ctx = tree(&last.procs, root)
        .iter()
        .all(|r| r.ctx_voluntary.is_some());
    s.ctx_voluntary = has_ctx.then_some(whole.ctx_voluntary);
    s.ctx_involuntary = has_ctx.then_some(whole.ctx_involuntary);
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
}
