//! Pure parsers of the interval probe's samples ([`super::probe_script`]):
//! text in, [`HostSample`] out. Each figure is `None` (or empty) when its
//! command printed nothing the parser knows: unavailable, never guessed.
//!
//! - Linux: `/proc/stat` (per-CPU ticks), `/proc/cpuinfo` MHz,
//!   `/proc/net/netstat` and `/proc/net/snmp`, `/proc/vmstat`, and the
//!   server tree's `/proc/PID/stat` with its threads' context switches;
//! - FreeBSD: `sysctl kern.cp_times`, `dev.cpu.N.freq`, `netstat -s -p
//!   tcp|udp`, the swap-page sysctls, each tested on real captures
//!   (`tests/fixtures/bsd/`, each naming its source);
//! - every OS: POSIX `ps -A -o pid,ppid,time,rss,vsz,comm` (a longer
//!   line with context switches and major faults is read where given).

use crate::probe::limiter::counters::Counters;
use crate::server::bare::HostOs;

/// One process, as `ps` or `/proc/PID/stat` gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcRow {
    /// Its PID.
    pub pid: u32,
    /// Its parent's.
    pub ppid: u32,
    /// Cumulative CPU seconds (user + system).
    pub cpu_s: f64,
    /// Resident set, KiB.
    pub rss_kib: u64,
    /// Virtual size, KiB.
    pub vsz_kib: u64,
    /// Threads (Linux); `None` where `ps` does not say.
    pub threads: Option<u32>,
    /// Voluntary context switches, summed over its threads.
    pub ctx_voluntary: Option<u64>,
    /// Involuntary context switches.
    pub ctx_involuntary: Option<u64>,
    /// Major page faults.
    pub major_faults: Option<u64>,
    /// Its command name.
    pub comm: String,
}

/// One sample of a host.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostSample {
    /// What `uname -s` said.
    pub os: String,
    /// Cumulative ticks per CPU: user, nice, system, interrupt, idle
    /// (BSD's `cp_time` order; Linux's softirq joins irq, iowait idle),
    /// then steal (Linux only: a BSD's `cp_times` counts none, so 0).
    pub cpus: Vec<[u64; 6]>,
    /// MHz per CPU, where the host tells.
    pub mhz: Vec<f64>,
    /// Runnable and blocked tasks (Linux).
    pub procs_running: Option<u32>,
    /// Tasks blocked on I/O (Linux).
    pub procs_blocked: Option<u32>,
    /// The limiter's kernel counters, as the probe reads them on Linux
    /// (one parser, [`Counters::fill_net`] and [`Counters::fill_vmstat`]);
    /// a BSD gives listen-queue overflows, full-buffer UDP drops, UDP
    /// datagrams received and swap, and the rest stay `None`.
    pub counters: Counters,
    /// The processes: the server's tree (Linux) or every one (`ps`).
    pub procs: Vec<ProcRow>,
}

/// Splits a sample's text into its sections, in order.
fn sections(text: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix('#') {
            Some(name) if !name.is_empty() && !name.contains(' ') => out.push((name, Vec::new())),
            _ => {
                if let Some((_, lines)) = out.last_mut() {
                    lines.push(line);
                }
            }
        }
    }
    out
}

/// Parses one sample (the lines between `#sample` and `#end`) from a
/// host of `os`.
pub fn parse_sample(os: HostOs, text: &str) -> HostSample {
    let mut s = HostSample::default();
    let mut ticks = 100.0;
    let mut page_kib = 4;
    for (name, lines) in sections(text) {
        let body = lines.join("\n");
        match (os, name) {
            (_, "os") => s.os = body.trim().to_string(),
            (HostOs::Linux, "ticks") => ticks = body.trim().parse().unwrap_or(ticks),
            (HostOs::Linux, "pagesize") => {
                page_kib = body.trim().parse::<u64>().map_or(page_kib, |b| b / 1024)
            }
            (HostOs::Linux, "stat") => linux_stat(&body, &mut s),
            (HostOs::Linux, "mhz") => s.mhz = linux_mhz(&body),
            (HostOs::Linux, "netstat") => s.counters.fill_net(&body),
            (HostOs::Linux, "vmstat") => s.counters.fill_vmstat(&body),
            (HostOs::Linux, "tree") => {
                s.procs = lines
                    .iter()
                    .filter_map(|l| linux_tree_row(l, ticks, page_kib))
                    .collect();
            }
            (_, "cp_times") => s.cpus = bsd_cp_times(&body),
            (_, "freq") => s.mhz = bsd_freq(&body),
            (_, "swap") => {
                let c = &mut s.counters;
                c.swap_in_pages = sysctl_value(&body, "vm.stats.vm.v_swappgsin");
                c.swap_out_pages = sysctl_value(&body, "vm.stats.vm.v_swappgsout");
            }
            (_, "tcp") => s.counters.listen_overflows = bsd_counter(&body, "listen queue overflow"),
            (_, "udp") => {
                let c = &mut s.counters;
                c.udp_rcvbuf_errors = bsd_counter(&body, "dropped due to full socket buffers");
                c.udp_in_datagrams = bsd_counter(&body, "datagrams received");
            }
            (_, "ps") => s.procs = lines.iter().filter_map(|l| bsd_ps(l)).collect(),
            _ => {}
        }
    }
    s
}

fn numbers(text: &str) -> Vec<u64> {
    text.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// `/proc/stat`: the `cpuN` lines, `procs_running`, `procs_blocked`.
pub fn linux_stat(text: &str, s: &mut HostSample) {
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let Some(key) = w.next() else { continue };
        let n: Vec<u64> = w.filter_map(|x| x.parse().ok()).collect();
        let get = |i: usize| n.get(i).copied().unwrap_or(0);
        match key {
            "procs_running" => s.procs_running = n.first().map(|v| *v as u32),
            "procs_blocked" => s.procs_blocked = n.first().map(|v| *v as u32),
            k if k.starts_with("cpu") && k.len() > 3 && n.len() >= 4 => {
                let (irq, idle) = (get(5) + get(6), get(3) + get(4));
                s.cpus.push([get(0), get(1), get(2), irq, idle, get(7)]);
            }
            _ => {}
        }
    }
}

/// `cpu MHz : 2400.000` lines of `/proc/cpuinfo`.
fn linux_mhz(text: &str) -> Vec<f64> {
    text.lines()
        .filter_map(|l| l.split_once(':')?.1.trim().parse().ok())
        .collect()
}

/// `V N <the /proc/PID/stat line>` (the probe's tree section).
fn linux_tree_row(line: &str, ticks: f64, page_kib: u64) -> Option<ProcRow> {
    let (voluntary, rest) = line.trim_start().split_once(' ')?;
    let (involuntary, stat) = rest.trim_start().split_once(' ')?;
    let st = crate::procfs::pid::parse_stat(stat)?;
    Some(ProcRow {
        pid: st.pid,
        ppid: st.ppid,
        cpu_s: st.own_ticks() as f64 / ticks,
        rss_kib: st.rss_pages * page_kib,
        vsz_kib: st.vsize_bytes / 1024,
        threads: Some(st.num_threads),
        ctx_voluntary: voluntary.parse().ok(),
        ctx_involuntary: involuntary.parse().ok(),
        major_faults: Some(st.majflt),
        comm: st.comm,
    })
}

/// `name: value` lines of `sysctl NAME...`: the value of `name`.
pub fn sysctl_value(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == name).then(|| value.trim().parse().ok())?
    })
}

/// `kern.cp_times: ...` (FreeBSD: user, nice, sys, intr, idle ticks for
/// each CPU in turn; no steal counted); empty unless a whole number of
/// CPUs is there.
pub fn bsd_cp_times(text: &str) -> Vec<[u64; 6]> {
    let Some(line) = text.lines().find(|l| l.starts_with("kern.cp_times:")) else {
        return Vec::new();
    };
    let n = numbers(line);
    if n.is_empty() || n.len() % 5 != 0 {
        return Vec::new();
    }
    n.chunks(5)
        .map(|c| [c[0], c[1], c[2], c[3], c[4], 0])
        .collect()
}

/// `dev.cpu.N.freq: MHz` lines, in CPU order.
pub fn bsd_freq(text: &str) -> Vec<f64> {
    let mut by_cpu: Vec<(u32, f64)> = text
        .lines()
        .filter_map(|l| {
            let (key, value) = l.split_once(':')?;
            let cpu = key.strip_prefix("dev.cpu.")?.strip_suffix(".freq")?;
            Some((cpu.parse().ok()?, value.trim().parse().ok()?))
        })
        .collect();
    by_cpu.sort_by_key(|(c, _)| *c);
    by_cpu.into_iter().map(|(_, mhz)| mhz).collect()
}

/// The number on the line of `netstat -s` that holds `words`.
pub fn bsd_counter(text: &str, words: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.contains(words))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
}

/// One line of `ps -ax -o pid= -o ppid= -o time= -o rss= -o vsz= -o
/// nvcsw= -o nivcsw= -o majflt= -o comm=` (the last four only where the
/// OS's `ps` has them: a shorter line leaves them `None`).
pub fn bsd_ps(line: &str) -> Option<ProcRow> {
    let w: Vec<&str> = line.split_whitespace().collect();
    if w.len() < 5 {
        return None;
    }
    let full = w.len() >= 9 && w[5..8].iter().all(|x| x.parse::<u64>().is_ok());
    let opt = |i: usize| full.then(|| w[i].parse().ok()).flatten();
    let comm_at = if full { 8 } else { 5 };
    Some(ProcRow {
        pid: w[0].parse().ok()?,
        ppid: w[1].parse().ok()?,
        cpu_s: crate::remote::portable::parse_ps_time(w[2])?,
        rss_kib: w[3].parse().ok()?,
        vsz_kib: w[4].parse().ok()?,
        threads: None,
        ctx_voluntary: opt(5),
        ctx_involuntary: opt(6),
        major_faults: opt(7),
        comm: w.get(comm_at..).map(|c| c.join(" ")).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_sections_of_this_machine_parse() {
        // Read here and now: the shape is the kernel's, not invented.
        let me = std::process::id();
        let stat = crate::procfs::stat::text().unwrap();
        let net = crate::procfs::pid::net_file(me, "netstat").unwrap()
            + &crate::procfs::pid::net_file(me, "snmp").unwrap();
        let pstat = crate::procfs::pid::stat_text(me).unwrap();
        let text = format!(
            "#os\nLinux\n#ticks\n100\n#pagesize\n4096\n#stat\n{stat}#netstat\n{net}#tree\n3 4 {pstat}"
        );
        let s = parse_sample(HostOs::Linux, &text);
        assert_eq!(s.cpus.len(), crate::placement::online_cpus());
        assert!(s.counters.listen_overflows.is_some() && s.counters.udp_in_datagrams.is_some());
        // The agent's parser reads the section: every counter it knows,
        // TCPBacklogDrop too (the old agentless parser had its own list).
        assert!(s.counters.tcp_backlog_drops.is_some(), "{:?}", s.counters);
        assert_eq!(s.procs.len(), 1);
        let p = &s.procs[0];
        assert_eq!(p.pid, me);
        assert_eq!(p.ppid, std::os::unix::process::parent_id());
        assert_eq!((p.ctx_voluntary, p.ctx_involuntary), (Some(3), Some(4)));
        assert!(p.rss_kib > 0 && p.threads.unwrap() >= 1, "{p:?}");
        // A command that printed nothing leaves its figure unavailable.
        let bare = parse_sample(HostOs::Linux, "#os\nLinux\n#stat\n#netstat\n");
        assert!(bare.cpus.is_empty() && bare.counters.listen_overflows.is_none());
    }

    #[test]
    fn a_short_bsd_ps_line_leaves_its_counters_unavailable() {
        let row = bsd_ps("  700     1   0:01.50  8000 20000 nginx").unwrap();
        assert_eq!(row.cpu_s, 1.5);
        assert_eq!(row.ctx_voluntary, None);
        assert_eq!(row.comm, "nginx");
        assert_eq!(bsd_ps("garbage"), None);
    }
}

/// The parsers on real command output captured on FreeBSD
/// (`tests/fixtures/bsd/`, each file naming its source in its `# source:`
/// lines).
#[cfg(test)]
mod captured {
    use super::*;

    use crate::probe::nic_bsd::fixture;

    #[test]
    fn freebsd_cp_times_gives_each_cpu_and_sums_to_cp_time() {
        let text = fixture("freebsd-14.5-sysctl-cp_times.txt");
        let cpus = bsd_cp_times(&text);
        assert_eq!(
            cpus,
            vec![[116, 0, 85, 4, 30896, 0], [205, 0, 103, 6, 30787, 0]]
        );
        // The same capture's kern.cp_time is their sum.
        let total: Vec<u64> = (0..5).map(|i| cpus.iter().map(|c| c[i]).sum()).collect();
        assert_eq!(total, [321, 0, 188, 10, 61683]);
        // kern.cp_time alone (all CPUs in one) is not taken for per-CPU ticks.
        assert!(bsd_cp_times("kern.cp_time: 321 0 188 10 61683\n").is_empty());
    }

    #[test]
    fn freebsd_dev_cpu_gives_the_frequency_not_its_levels() {
        let text = fixture("freebsd-sysctl-dev.cpu.0.txt");
        assert_eq!(bsd_freq(&text), vec![3600.0]);
        let s = parse_sample(HostOs::FreeBsd, &format!("#freq\n{text}"));
        assert_eq!(s.mhz, vec![3600.0]);
    }

    #[test]
    fn freebsd_netstat_tcp_gives_listen_queue_overflows() {
        let text = fixture("freebsd-13-netstat-s-tcp.txt");
        assert_eq!(bsd_counter(&text, "listen queue overflow"), Some(0));
        let s = parse_sample(HostOs::FreeBsd, &format!("#tcp\n{text}"));
        assert_eq!(s.counters.listen_overflows, Some(0));
        // Linux's own counters are not FreeBSD's: unavailable there.
        assert_eq!(s.counters.listen_drops, None);
    }

    #[test]
    fn freebsd_netstat_udp_gives_full_socket_buffer_drops() {
        let text = fixture("fstack-freebsd-netstat-s-udp.txt");
        let s = parse_sample(HostOs::FreeBsd, &format!("#udp\n{text}"));
        assert_eq!(s.counters.udp_rcvbuf_errors, Some(63_583_585));
        assert_eq!(s.counters.udp_in_datagrams, Some(65_635_420));
        assert_eq!(s.counters.udp_in_errors, None);
    }

    #[test]
    fn freebsd_swap_sysctls_give_pages_in_and_out() {
        let text = fixture("freebsd-sysctl-swappgs.txt");
        let s = parse_sample(HostOs::FreeBsd, &format!("#swap\n{text}"));
        assert_eq!(
            (s.counters.swap_in_pages, s.counters.swap_out_pages),
            (Some(0), Some(0))
        );
    }
}
