//! Server metrics from a host that cannot run scalelab (FreeBSD, DragonFly,
//! ...), read over ssh with portable commands: `ps -ax -o ...` for the
//! server's process tree, `sysctl -n kern.cp_time hw.ncpu` (BSD) or
//! `/proc/stat` and `nproc` (Linux) for the CPU split. One snapshot at the
//! window's start and one at its end; the summary is their difference.
//! Whatever a host cannot tell is named in the summary's warnings as
//! unavailable, never filled with a guess.

use super::ssh::Ssh;
use super::Host;
use crate::probe::energy::{parse_watts, two_readings};
use crate::probe::{CpuSplit, ProbeData, ProbeSummary};
use std::time::{Duration, Instant};

/// The shell script run at each snapshot: a section per source, each
/// marked, each allowed to fail.
pub const SNAPSHOT_SCRIPT: &str = "echo '#os'; uname -s; \
echo '#cp_time'; (sysctl -n kern.cp_time 2>/dev/null || head -n1 /proc/stat 2>/dev/null); \
echo '#ncpu'; (sysctl -n hw.ncpu 2>/dev/null || nproc 2>/dev/null); \
echo '#ps'; ps -ax -o pid= -o ppid= -o time= -o rss= -o vsz= 2>/dev/null";

/// One process line of `ps -ax -o pid= -o ppid= -o time= -o rss= -o vsz=`.
#[derive(Clone, Debug, PartialEq)]
pub struct PsRow {
    pub pid: u32,
    pub ppid: u32,
    /// Cumulative CPU seconds.
    pub cpu_s: f64,
    pub rss_kib: u64,
    pub vsz_kib: u64,
}

/// One snapshot of a host.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub os: String,
    /// Cumulative CPU ticks: user, nice, system, irq, idle (BSD's cp_time
    /// order; Linux's /proc/stat is mapped onto it, softirq into irq,
    /// iowait into idle).
    pub cp_time: Option<[u64; 5]>,
    pub ncpu: Option<u32>,
    pub ps: Vec<PsRow>,
    /// What `energy_command` printed (the `#watts` section), read as watts.
    pub watts: Option<f64>,
}

/// Parses the output of [`SNAPSHOT_SCRIPT`].
pub fn parse_snapshot(text: &str) -> Snapshot {
    let mut snap = Snapshot::default();
    let mut section = "";
    for line in text.lines() {
        let line = line.trim();
        if let Some(s) = line.strip_prefix('#') {
            section = match s {
                "os" => "os",
                "cp_time" => "cp_time",
                "ncpu" => "ncpu",
                "ps" => "ps",
                "watts" => "watts",
                _ => "",
            };
            continue;
        }
        match section {
            "os" if snap.os.is_empty() => snap.os = line.to_string(),
            "cp_time" => snap.cp_time = snap.cp_time.or_else(|| parse_cp_time(line)),
            "ncpu" => snap.ncpu = snap.ncpu.or_else(|| line.parse().ok()),
            "ps" => snap.ps.extend(parse_ps_row(line)),
            "watts" => snap.watts = snap.watts.or_else(|| parse_watts(line)),
            _ => {}
        }
    }
    snap
}

/// `kern.cp_time` (`user nice sys intr idle`) or the `cpu` line of
/// `/proc/stat` (`cpu user nice system idle iowait irq softirq steal ...`).
pub fn parse_cp_time(line: &str) -> Option<[u64; 5]> {
    let mut words = line.split_whitespace().peekable();
    let linux = words.peek() == Some(&"cpu");
    if linux {
        words.next();
    }
    let n: Vec<u64> = words.filter_map(|w| w.parse().ok()).collect();
    if linux {
        let get = |i: usize| n.get(i).copied().unwrap_or(0);
        (n.len() >= 4).then(|| [get(0), get(1), get(2), get(5) + get(6), get(3) + get(4)])
    } else {
        (n.len() == 5).then(|| [n[0], n[1], n[2], n[3], n[4]])
    }
}

/// `ps` time: `[[dd-]hh:]mm:ss[.cc]`, as BSD and procps print it.
pub fn parse_ps_time(t: &str) -> Option<f64> {
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (d.parse::<f64>().ok()?, r),
        None => (0.0, t),
    };
    let mut secs = 0.0;
    for part in rest.split(':') {
        secs = secs * 60.0 + part.parse::<f64>().ok()?;
    }
    Some(days * 86_400.0 + secs)
}

fn parse_ps_row(line: &str) -> Option<PsRow> {
    let w: Vec<&str> = line.split_whitespace().collect();
    if w.len() < 5 {
        return None;
    }
    Some(PsRow {
        pid: w[0].parse().ok()?,
        ppid: w[1].parse().ok()?,
        cpu_s: parse_ps_time(w[2])?,
        rss_kib: w[3].parse().ok()?,
        vsz_kib: w[4].parse().ok()?,
    })
}

/// `root` and its descendants in a snapshot.
pub fn tree(ps: &[PsRow], root: u32) -> Vec<&PsRow> {
    let mut out: Vec<&PsRow> = ps.iter().filter(|r| r.pid == root).collect();
    let mut i = 0;
    while i < out.len() {
        let parent = out[i].pid;
        out.extend(ps.iter().filter(|r| r.ppid == parent && r.pid != parent));
        i += 1;
    }
    out
}

/// The window's summary from two snapshots `window` apart.
pub fn summarize(a: &Snapshot, b: &Snapshot, root: Option<u32>, window: Duration) -> ProbeSummary {
    let mut s = ProbeSummary {
        samples: 2,
        window_s: window.as_secs_f64(),
        interval_s: window.as_secs_f64(),
        freq_source: "unavailable".into(),
        ..ProbeSummary::default()
    };
    let mut missing = vec![
        "frequency",
        "context switches",
        "network counters",
        "run queue",
    ];
    s.online_cpus = b.ncpu.unwrap_or(0);
    match (a.cp_time, b.cp_time) {
        (Some(x), Some(y)) => {
            s.cpu = cpu_split(&x, &y);
            s.cpu_busy = s.cpu.busy;
        }
        _ => missing.push("CPU split"),
    }
    match root {
        Some(pid) if !tree(&b.ps, pid).is_empty() => {
            let before: f64 = tree(&a.ps, pid).iter().map(|r| r.cpu_s).sum();
            let now = tree(&b.ps, pid);
            let after: f64 = now.iter().map(|r| r.cpu_s).sum();
            let cpu = (after - before).max(0.0);
            s.server_pid = Some(pid);
            s.server_cpu_s = Some(cpu);
            s.server_cpu_util = Some(cpu / s.window_s.max(1e-9));
            s.processes = Some(now.len() as u32);
            s.server_rss_max_bytes = Some(now.iter().map(|r| r.rss_kib * 1024).sum());
            let workers: Vec<&PsRow> = now.iter().copied().filter(|r| r.pid != pid).collect();
            let per = if workers.is_empty() {
                now.clone()
            } else {
                workers
            };
            s.mem_per_worker_rss_bytes =
                Some(per.iter().map(|r| r.rss_kib * 1024).sum::<u64>() / per.len() as u64);
            s.mem_per_worker_vsz_bytes =
                Some(per.iter().map(|r| r.vsz_kib * 1024).sum::<u64>() / per.len() as u64);
        }
        Some(pid) => {
            s.server_exited = true;
            s.warnings.push(format!(
                "the server's process {pid} was not found on its host"
            ));
        }
        None => missing.push("server process (no pid_command)"),
    }
    s.warnings.push(format!(
        "read over ssh with portable commands ({}): unavailable: {}",
        if b.os.is_empty() { "unknown OS" } else { &b.os },
        missing.join(", ")
    ));
    s
}

fn cpu_split(a: &[u64; 5], b: &[u64; 5]) -> CpuSplit {
    let d: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| y.saturating_sub(*x) as f64)
        .collect();
    let total: f64 = d.iter().sum::<f64>().max(1.0);
    let idle = d[4] / total;
    CpuSplit {
        user: d[0] / total,
        nice: d[1] / total,
        system: d[2] / total,
        irq: d[3] / total,
        idle,
        busy: 1.0 - idle,
        ..CpuSplit::default()
    }
}

/// A probe of a host without an agent: a snapshot now, another at stop.
pub struct PortableProbe {
    ssh: Ssh,
    host: Host,
    root: Option<u32>,
    first: Snapshot,
    started: Instant,
    /// `[probe] energy_command`, run with each snapshot.
    energy_command: Option<String>,
}

impl PortableProbe {
    /// Takes the first snapshot; `energy_command` runs with each one.
    pub fn start(
        ssh: Ssh,
        host: Host,
        root: Option<u32>,
        energy_command: Option<String>,
    ) -> Result<PortableProbe, String> {
        let first = snapshot(&ssh, &host, energy_command.as_deref())?;
        Ok(PortableProbe {
            ssh,
            host,
            root,
            first,
            started: Instant::now(),
            energy_command,
        })
    }

    pub fn stop(self) -> ProbeData {
        let window = self.started.elapsed();
        let command = self.energy_command.as_deref();
        let summary = match snapshot(&self.ssh, &self.host, command) {
            Ok(last) => {
                let mut s = summarize(&self.first, &last, self.root, window);
                if let Some(cmd) = command {
                    let window_s = window.as_secs_f64();
                    let (energy, warning) =
                        two_readings::summarize(cmd, self.first.watts, last.watts, window_s);
                    s.warnings.extend(warning);
                    s.watts = energy.as_ref().and_then(|e| e.watts());
                    s.energy = energy;
                }
                s
            }
            Err(e) => {
                let mut s = ProbeSummary::default();
                s.warnings.push(format!("no server metrics: {e}"));
                s
            }
        };
        ProbeData {
            timeline: Vec::new(),
            summary,
        }
    }
}

fn snapshot(ssh: &Ssh, host: &Host, energy_command: Option<&str>) -> Result<Snapshot, String> {
    let mut script = SNAPSHOT_SCRIPT.to_string();
    if let Some(cmd) = energy_command {
        script.push_str(&two_readings::snapshot_section(cmd));
    }
    ssh.run(host, &script, None, Duration::from_secs(15))
        .map(|t| parse_snapshot(&t))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What FreeBSD 14 prints (kern.cp_time: user nice sys intr idle).
    const FREEBSD_A: &str = "#os\nFreeBSD\n#cp_time\n100 0 50 10 840\n#ncpu\n4\n#ps\n\
        1 0 0:00.01 1024 10240\n700 1 0:01.00 8000 20000\n701 700 0:10.50 9000 21000\n702 700 0:20.00 9100 21000\n";
    const FREEBSD_B: &str = "#os\nFreeBSD\n#cp_time\n400 0 150 50 1400\n#ncpu\n4\n#ps\n\
        1 0 0:00.01 1024 10240\n700 1 0:01.00 8000 20000\n701 700 0:12.50 9000 21000\n702 700 1:20.00 9100 21000\n";

    #[test]
    fn bsd_snapshots_give_cpu_split_and_server_cpu() {
        let a = parse_snapshot(FREEBSD_A);
        let b = parse_snapshot(FREEBSD_B);
        assert_eq!(b.os, "FreeBSD");
        assert_eq!(b.ncpu, Some(4));
        let s = summarize(&a, &b, Some(700), Duration::from_secs(2));
        // Ticks: user 300, sys 100, intr 40, idle 560 of 1000.
        assert!((s.cpu.user - 0.3).abs() < 1e-9);
        assert!((s.cpu.busy - 0.44).abs() < 1e-9);
        // Workers 701 (+2 s) and 702 (+60 s): 62 s over 2 s.
        assert_eq!(s.server_cpu_s, Some(62.0));
        assert_eq!(s.processes, Some(3));
        assert_eq!(s.mem_per_worker_rss_bytes, Some((9000 + 9100) / 2 * 1024));
        let w = s.warnings.join(" ");
        assert!(
            w.contains("FreeBSD") && w.contains("unavailable: frequency"),
            "{w}"
        );
    }

    #[test]
    fn the_watts_section_is_read_as_the_meter_prints_it() {
        let text = format!("{FREEBSD_A}#watts\n    Instantaneous power reading:   180 Watts\n");
        assert_eq!(parse_snapshot(&text).watts, Some(180.0));
        assert_eq!(parse_snapshot(FREEBSD_A).watts, None);
    }

    #[test]
    fn linux_proc_stat_maps_onto_cp_time() {
        // cpu user nice system idle iowait irq softirq steal
        let t = parse_cp_time("cpu 10 1 5 80 4 2 3 0 0 0").unwrap();
        assert_eq!(t, [10, 1, 5, 5, 84]);
        assert_eq!(parse_cp_time("garbage"), None);
    }

    #[test]
    fn ps_times_in_every_spelling() {
        assert_eq!(parse_ps_time("0:01.50"), Some(1.5));
        assert_eq!(parse_ps_time("01:02:03"), Some(3723.0));
        assert_eq!(parse_ps_time("2-00:00:01"), Some(172_801.0));
        assert_eq!(parse_ps_time("x"), None);
    }

    #[test]
    fn a_missing_server_is_said_not_guessed() {
        let a = parse_snapshot(FREEBSD_A);
        let s = summarize(&a, &a, Some(9999), Duration::from_secs(1));
        assert!(s.server_cpu_s.is_none());
        assert!(s.server_exited);
        let none = summarize(&a, &a, None, Duration::from_secs(1));
        assert!(none.warnings.join(" ").contains("no pid_command"));
    }
}
