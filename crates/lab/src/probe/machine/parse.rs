//! Pure parsers of the machine's knobs: text of `/sys` files and of
//! procfs's readings in, values out. The reading of the files is in
//! `super::read` (`/proc`'s through [`crate::procfs`]).

use crate::placement::affinity::{format_cpu_list, parse_cpu_list};

/// The per-CPU values of one knob (`scaling_governor` of each CPU) as one
/// value when every CPU has it, else `cpu0 powersave, cpu1 performance`.
/// `None` when no CPU has the file.
pub fn per_cpu(values: &[(usize, String)]) -> Option<String> {
    let first = values.first()?;
    if values.iter().all(|(_, v)| v == &first.1) {
        return Some(first.1.clone());
    }
    let each: Vec<String> = values.iter().map(|(c, v)| format!("cpu{c} {v}")).collect();
    Some(each.join(", "))
}

/// One cpuidle state of a CPU (`cpuN/cpuidle/stateK/{name,disable,latency}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleState {
    /// `name` (`POLL`, `C1`, `C6`, `haltpoll`).
    pub name: String,
    /// `disable`: `1` when disabled.
    pub disable: String,
    /// `latency`: exit latency in microseconds.
    pub latency_us: String,
}

/// The deepest enabled state (the last listed whose `disable` is `0`),
/// as `C6 (exit latency 170 us)`; `None` when every state is disabled or
/// there are none.
pub fn deepest_enabled(states: &[IdleState]) -> Option<String> {
    states
        .iter()
        .rev()
        .find(|s| s.disable.trim() == "0")
        .map(|s| format!("{} (exit latency {} us)", s.name, s.latency_us))
}

/// The value of `name=` on a kernel command line (`isolcpus=2-3`), the last
/// one given (the kernel's own rule).
pub fn cmdline_param<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .last()
}

/// The PIDs among `(pid, comm)` whose comm (`/proc/PID/comm`, trimmed) is
/// exactly `name`: `irqbalance`, never `irqbalance-ui` or a script.
pub fn pids_named(procs: &[(u32, String)], name: &str) -> Vec<u32> {
    procs
        .iter()
        .filter(|(_, comm)| comm.trim_end_matches('\n') == name)
        .map(|(pid, _)| *pid)
        .collect()
}

/// The IRQs whose affinity list (`/proc/irq/N/smp_affinity_list`) lets
/// them run on any of `cpus`.
pub fn irqs_on(affinities: &[(u32, String)], cpus: &[usize]) -> Vec<u32> {
    affinities
        .iter()
        .filter(|(_, list)| {
            parse_cpu_list(list.trim()).is_ok_and(|l| l.iter().any(|c| cpus.contains(c)))
        })
        .map(|(irq, _)| *irq)
        .collect()
}

/// The affinity that moves an IRQ off `server`: its own list without the
/// server's CPUs, else every online CPU but the server's. `None` when that
/// leaves no CPU (the server has them all) or the list does not parse.
pub fn moved_off(list: &str, server: &[usize], online: &[usize]) -> Option<String> {
    let own: Vec<usize> = parse_cpu_list(list.trim()).ok()?;
    let keep =
        |l: &[usize]| -> Vec<usize> { l.iter().copied().filter(|c| !server.contains(c)).collect() };
    let mut rest = keep(&own);
    if rest.is_empty() {
        rest = keep(online);
    }
    (!rest.is_empty()).then(|| format_cpu_list(&rest))
}

/// A process's CPU ticks at one reading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcTicks {
    /// Its PID.
    pub pid: u32,
    /// Its comm.
    pub comm: String,
    /// utime + stime (USER_HZ ticks).
    pub ticks: u64,
}

/// The processes that used at least `min_share` of one CPU between two
/// readings `ticks` apart (USER_HZ ticks of wall time), busiest first, as
/// `(comm, PID, share of one CPU)`; processes in `skip` are left out.
pub fn busy(
    before: &[ProcTicks],
    after: &[ProcTicks],
    window_ticks: f64,
    min_share: f64,
    skip: &[u32],
) -> Vec<(String, u32, f64)> {
    if window_ticks <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<(String, u32, f64)> = after
        .iter()
        .filter(|a| !skip.contains(&a.pid))
        .filter_map(|a| {
            let b = before.iter().find(|b| b.pid == a.pid && b.comm == a.comm)?;
            let share = a.ticks.saturating_sub(b.ticks) as f64 / window_ticks;
            (share >= min_share).then(|| (a.comm.clone(), a.pid, share))
        })
        .collect();
    out.sort_by(|x, y| y.2.total_cmp(&x.2));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, disable: &str, latency: &str) -> IdleState {
        IdleState {
            name: name.into(),
            disable: disable.into(),
            latency_us: latency.into(),
        }
    }

    #[test]
    fn the_deepest_enabled_state() {
        // This VM (Linux 6.18, cpuidle-haltpoll): state0 POLL, state1 haltpoll.
        let vm = [state("POLL", "0", "0"), state("haltpoll idle", "0\n", "1")];
        assert_eq!(
            deepest_enabled(&vm).unwrap(),
            "haltpoll idle (exit latency 1 us)"
        );
        // intel_idle on a Skylake server (Documentation/admin-guide/pm/
        // intel_idle.rst lists POLL, C1, C1E, C6), C6 disabled by hand.
        let intel = [
            state("POLL", "0", "0"),
            state("C1", "0", "2"),
            state("C1E", "0", "10"),
            state("C6", "1", "133"),
        ];
        assert_eq!(deepest_enabled(&intel).unwrap(), "C1E (exit latency 10 us)");
        assert_eq!(deepest_enabled(&[state("POLL", "1", "0")]), None);
    }

    #[test]
    fn one_value_for_every_cpu_or_each_cpus_own() {
        let same = [(0, "performance".into()), (1, "performance".into())];
        assert_eq!(per_cpu(&same).unwrap(), "performance");
        let mixed = [(0, "powersave".into()), (1, "performance".into())];
        assert_eq!(per_cpu(&mixed).unwrap(), "cpu0 powersave, cpu1 performance");
        assert_eq!(per_cpu(&[]), None);
    }

    #[test]
    fn command_line_parameters() {
        // This VM's /proc/cmdline has neither; the init's own arguments
        // follow `--`.
        let vm = "console=ttyS0 quiet cpuidle_haltpoll.force=1 rdinit=/x -- --addr 0.0.0.0:2024";
        assert_eq!(cmdline_param(vm, "isolcpus"), None);
        assert_eq!(cmdline_param(vm, "rdinit"), Some("/x"));
        let tuned = "BOOT_IMAGE=/vmlinuz isolcpus=nohz,domain,2-3 nohz_full=2-3 quiet";
        assert_eq!(cmdline_param(tuned, "isolcpus"), Some("nohz,domain,2-3"));
        assert_eq!(cmdline_param(tuned, "nohz_full"), Some("2-3"));
        assert_eq!(cmdline_param("a=1 a=2 -- a=3", "a"), Some("2"));
    }

    #[test]
    fn irqbalance_by_its_exact_comm() {
        // /proc/PID/comm ends in a newline.
        let procs = [
            (1, "init\n".to_string()),
            (612, "irqbalance\n".into()),
            (613, "irqbalance-ui\n".into()),
            (700, "python3\n".into()),
        ];
        assert_eq!(pids_named(&procs, "irqbalance"), vec![612]);
        assert!(pids_named(&procs[..1], "irqbalance").is_empty());
    }

    #[test]
    fn irq_affinity_against_the_servers_cpus() {
        // This VM's /proc/irq/N/smp_affinity_list: `0-1` for every IRQ.
        let irqs = [
            (24, "0-1\n".to_string()),
            (26, "1\n".into()),
            (28, "0\n".into()),
        ];
        assert_eq!(irqs_on(&irqs, &[1]), vec![24, 26]);
        assert_eq!(irqs_on(&irqs, &[0, 1]), vec![24, 26, 28]);
        let online = [0, 1, 2, 3];
        assert_eq!(moved_off("0-1\n", &[1], &online).unwrap(), "0");
        assert_eq!(moved_off("1", &[1], &online).unwrap(), "0,2-3");
        assert_eq!(moved_off("0-3", &[0, 1, 2, 3], &online), None);
        assert_eq!(moved_off("garbage", &[1], &online), None);
    }

    #[test]
    fn busy_processes_between_two_readings() {
        let t = |pid, comm: &str, ticks| ProcTicks {
            pid,
            comm: comm.into(),
            ticks,
        };
        let before = [t(10, "stress", 100), t(11, "sleepy", 5), t(12, "me", 0)];
        let after = [
            t(10, "stress", 130),
            t(11, "sleepy", 6),
            t(12, "me", 30),
            t(13, "new", 50),
        ];
        let b = busy(&before, &after, 30.0, 0.10, &[12]);
        assert_eq!(b, vec![("stress".to_string(), 10, 1.0)]);
        assert!(busy(&before, &after, 0.0, 0.1, &[]).is_empty());
    }
}
