//! The summary over the whole window, from the timeline and the first and
//! last `/proc/stat` readings. Pure: no file is read here.

use super::cpu::{split, ProcStat};
use super::data::{NetDelta, PerCpu, ProbeSample, ProbeSummary, ProcessSummary};
use crate::procfs::loadavg::LoadAvg;

/// Everything the summary is computed from: the agent's probe hands in
/// what it read under `/proc`, the agentless probe what it read over ssh
/// (`remote::bare::summarize`), so both are summarised by one rule.
#[derive(Debug)]
pub struct SummaryInputs<'a> {
    /// The timeline: one sample per interval.
    pub samples: &'a [ProbeSample],
    /// The CPU times at the window's start.
    pub first: &'a ProcStat,
    /// The CPU times at the window's end.
    pub last: &'a ProcStat,
    /// The window's length, seconds.
    pub window_s: f64,
    /// The sampling interval asked for, seconds.
    pub interval_s: f64,
    /// CPUs online at the start.
    pub online_cpus: u32,
    /// Where the frequencies came from (`"unavailable"` without any).
    pub freq_source: &'static str,
    /// The load average at the end.
    pub last_load: LoadAvg,
    /// The server's PID, where there is a server to probe.
    pub server_pid: Option<u32>,
    /// Each process of the server's tree seen in the window.
    pub processes: Vec<ProcessSummary>,
    /// Whether the server's process was gone before the window ended.
    pub server_exited: bool,
    /// What the sampler could not read, in words.
    pub warnings: Vec<String>,
    /// The limiter's figures over the window (`None` without a server).
    pub limiter: Option<super::limiter::LimiterFigures>,
}

/// Time-weighted mean of the `Some` values (weights: each sample's interval).
fn weighted_mean(
    samples: &[ProbeSample],
    value: impl Fn(&ProbeSample) -> Option<f64>,
) -> Option<f64> {
    let (sum, weight) = samples
        .iter()
        .filter_map(|s| value(s).map(|v| (v * s.interval_s, s.interval_s)))
        .fold((0.0, 0.0), |(a, b), (v, w)| (a + v, b + w));
    (weight > 0.0).then(|| sum / weight)
}

/// The summary over the whole window (a time-weighted mean where the
/// timeline's samples are averaged).
pub fn summarize(w: SummaryInputs<'_>) -> ProbeSummary {
    let s = w.samples;
    let cpu = split(&w.first.total, &w.last.total);
    let per_cpu = w
        .last
        .per_cpu
        .iter()
        .filter_map(|(n, after)| {
            let before = w.first.per_cpu.iter().find(|(m, _)| m == n)?;
            Some(PerCpu {
                cpu: *n,
                split: split(&before.1, after),
                freq_mhz: weighted_mean(s, |x| x.per_cpu.iter().find(|c| c.cpu == *n)?.freq_mhz),
            })
        })
        .collect();
    let server: Vec<_> = s.iter().filter_map(|x| x.server.as_ref()).collect();
    let has_server = w.server_pid.is_some();
    let server_cpu_s = has_server.then(|| server.iter().map(|x| x.cpu_s).sum::<f64>());
    let net = net_totals(s);
    let sampler_cpu_s: f64 = s.iter().map(|x| x.sampler_cpu_s).sum();
    ProbeSummary {
        samples: s.len() as u32,
        window_s: w.window_s,
        interval_s: w.interval_s,
        online_cpus: w.online_cpus,
        cpu,
        cpu_busy: cpu.busy,
        per_cpu,
        freq_mhz_mean: weighted_mean(s, |x| x.freq_mhz),
        freq_source: w.freq_source.to_string(),
        load_x_freq: weighted_mean(s, |x| x.load_x_freq),
        procs_running_mean: if s.is_empty() {
            0.0
        } else {
            s.iter().map(|x| x.procs_running as f64).sum::<f64>() / s.len() as f64
        },
        procs_running_max: s.iter().map(|x| x.procs_running).max().unwrap_or(0),
        loadavg_1: w.last_load.one,
        loadavg_5: w.last_load.five,
        loadavg_15: w.last_load.fifteen,
        server_pid: w.server_pid,
        server_cpu_s,
        server_cpu_util: server_cpu_s
            .filter(|_| w.window_s > 0.0)
            .map(|c| c / w.window_s),
        processes: has_server.then(|| server.iter().map(|x| x.processes).max().unwrap_or(0)),
        threads: has_server.then(|| server.iter().map(|x| x.threads).max().unwrap_or(0)),
        processes_seen: has_server.then_some(w.processes.len() as u32),
        server_rss_max_bytes: has_server
            .then(|| server.iter().map(|x| x.rss_bytes).max().unwrap_or(0)),
        mem_per_worker_rss_bytes: weighted_mean(s, |x| {
            Some(x.server.as_ref()?.worker_rss_bytes? as f64)
        })
        .map(|v| v.round() as u64),
        mem_per_worker_vsz_bytes: weighted_mean(s, |x| {
            Some(x.server.as_ref()?.worker_vsz_bytes? as f64)
        })
        .map(|v| v.round() as u64),
        ctx_voluntary: has_server.then(|| server.iter().map(|x| x.ctx_voluntary).sum()),
        ctx_involuntary: has_server.then(|| server.iter().map(|x| x.ctx_involuntary).sum()),
        server_exited: w.server_exited,
        server_processes: w.processes,
        net_rx_bytes: net.iter().map(|n| n.rx_bytes).sum(),
        net_tx_bytes: net.iter().map(|n| n.tx_bytes).sum(),
        net_rx_packets: net.iter().map(|n| n.rx_packets).sum(),
        net_tx_packets: net.iter().map(|n| n.tx_packets).sum(),
        net,
        client_cpu_s: s.iter().map(|x| x.client_cpu_s).sum(),
        client_runq_wait_s: s.iter().map(|x| x.client_runq_wait_s).sum(),
        sampler_cpu_s,
        sampler_cpu_util: if w.window_s > 0.0 {
            sampler_cpu_s / w.window_s
        } else {
            0.0
        },
        warnings: w.warnings,
        watts: None,
        ops_per_joule: None,
        energy: None,
        work: None,
        background: super::background::measure(super::background::BackgroundInputs {
            busy_share: cpu.busy,
            steal_share: cpu.steal,
            window_s: w.window_s,
            online_cpus: w.online_cpus,
            // No server PID here: none to take out (a load alone, or the
            // server on another host); a server that runs here but could
            // not be found is marked by the trial
            // (`Background::server_not_told_apart`).
            server_cpu_s: Some(server_cpu_s.unwrap_or(0.0)),
            own_cpu_s: s.iter().map(|x| x.client_cpu_s).sum::<f64>() + sampler_cpu_s,
        }),
        limiter: w.limiter,
    }
}

/// Per-interface sums over the timeline, in first-seen order.
fn net_totals(samples: &[ProbeSample]) -> Vec<NetDelta> {
    let mut out: Vec<NetDelta> = Vec::new();
    for d in samples.iter().flat_map(|s| &s.net) {
        match out.iter_mut().find(|n| n.iface == d.iface) {
            Some(n) => {
                n.rx_bytes += d.rx_bytes;
                n.rx_packets += d.rx_packets;
                n.tx_bytes += d.tx_bytes;
                n.tx_packets += d.tx_packets;
            }
            None => out.push(d.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::data::ServerSample;
    use crate::procfs::stat::parse_proc_stat;

    fn sample(
        interval_s: f64,
        mhz: f64,
        server_cpu: f64,
        worker_rss: u64,
        lo_rx: u64,
    ) -> ProbeSample {
        ProbeSample {
            interval_s,
            freq_mhz: Some(mhz),
            load_x_freq: Some(mhz),
            procs_running: 2,
            server: Some(ServerSample {
                processes: 3,
                threads: 5,
                cpu_s: server_cpu,
                rss_bytes: worker_rss * 2,
                worker_rss_bytes: Some(worker_rss),
                ctx_voluntary: 10,
                ..ServerSample::default()
            }),
            net: vec![NetDelta {
                iface: "lo".into(),
                rx_bytes: lo_rx,
                rx_packets: 1,
                tx_bytes: lo_rx,
                tx_packets: 1,
            }],
            client_cpu_s: 0.5,
            sampler_cpu_s: 0.001,
            ..ProbeSample::default()
        }
    }

    #[test]
    fn window_totals_and_time_weighted_means() {
        let first = parse_proc_stat(
            "cpu 0 0 0 100 0 0 0 0\ncpu0 0 0 0 50 0 0 0 0\ncpu1 0 0 0 50 0 0 0 0\n",
        );
        let last = parse_proc_stat(
            "cpu 150 0 50 200 0 0 0 0\ncpu0 100 0 0 50 0 0 0 0\ncpu1 50 0 50 150 0 0 0 0\n",
        );
        // One 1 s sample at 2000 MHz, one 3 s sample at 3000 MHz.
        let samples = vec![
            sample(1.0, 2000.0, 0.4, 100, 10),
            sample(3.0, 3000.0, 1.2, 200, 20),
        ];
        let sum = summarize(SummaryInputs {
            samples: &samples,
            first: &first,
            last: &last,
            window_s: 4.0,
            interval_s: 1.0,
            online_cpus: 2,
            freq_source: "cpuinfo",
            last_load: LoadAvg {
                one: 1.5,
                five: 1.0,
                fifteen: 0.5,
            },
            server_pid: Some(42),
            processes: vec![],
            server_exited: false,
            warnings: vec![],
            limiter: None,
        });
        assert_eq!(sum.samples, 2);
        assert!((sum.cpu_busy - 200.0 / 300.0).abs() < 1e-12);
        assert!((sum.per_cpu[0].split.busy - 1.0).abs() < 1e-12);
        assert!((sum.per_cpu[1].split.busy - 0.5).abs() < 1e-12);
        assert_eq!(sum.freq_mhz_mean, Some(2750.0));
        assert_eq!(sum.load_x_freq, Some(2750.0));
        assert!((sum.server_cpu_s.unwrap() - 1.6).abs() < 1e-12);
        assert!((sum.server_cpu_util.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(sum.mem_per_worker_rss_bytes, Some(175));
        assert_eq!(sum.server_rss_max_bytes, Some(400));
        assert_eq!(
            (sum.processes, sum.threads, sum.ctx_voluntary),
            (Some(3), Some(5), Some(20))
        );
        assert_eq!((sum.net_rx_bytes, sum.net_tx_packets), (30, 2));
        assert_eq!(sum.net.len(), 1);
        assert!((sum.client_cpu_s - 1.0).abs() < 1e-12);
        assert!((sum.sampler_cpu_util - 0.0005).abs() < 1e-12);
        assert_eq!(sum.loadavg_1, 1.5);
    }

    #[test]
    fn without_a_server_its_fields_are_none() {
        let stat = parse_proc_stat("cpu 1 0 0 1 0 0 0 0\n");
        let sum = summarize(SummaryInputs {
            samples: &[],
            first: &stat,
            last: &stat,
            window_s: 0.0,
            interval_s: 1.0,
            online_cpus: 1,
            freq_source: "unavailable",
            last_load: LoadAvg::default(),
            server_pid: None,
            processes: vec![],
            server_exited: false,
            warnings: vec![],
            limiter: None,
        });
        assert_eq!(sum.server_cpu_s, None);
        assert_eq!(sum.server_cpu_util, None);
        assert_eq!(sum.processes, None);
        assert_eq!(sum.mem_per_worker_rss_bytes, None);
        assert_eq!(sum.freq_mhz_mean, None);
        assert_eq!(sum.sampler_cpu_util, 0.0);
    }
}
