//! The readings that can bias a comparison, each said once at the start
//! of a run with the file that holds it and the value that fixes it.
//! Readings that do not bias a comparison between runs of one machine
//! (SMT, the C-state, THP, `perf_event_paranoid`, isolcpus) are stored
//! and shown, never warned about.

use super::files::{self, of};
use super::Facts;

/// A 1-minute load average at or above this, before the run, warns: a
/// whole CPU's worth of other work.
pub const LOADAVG_WARN: f64 = 1.0;
/// Steal at or above this share of the CPUs warns.
pub const STEAL_WARN: f64 = 0.02;

/// One line per reading of `f` that can bias a comparison.
pub fn warnings(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((cpu, g)) = f.governors.iter().find(|(_, g)| g != "performance") {
        out.push(format!(
            "{} is `{g}`: write `performance` (or run --tune), so the clock does not follow the load",
            of(files::GOVERNOR, cpu)
        ));
    }
    let epp = f.epps.iter().find(|(_, e)| e != "performance");
    if let Some((cpu, e)) = epp {
        out.push(format!(
            "{} is `{e}`: write `performance`, so the clock does not follow the load",
            of(files::EPP, cpu)
        ));
    }
    match (&f.no_turbo, &f.boost) {
        (Some(v), _) if v == "0" => out.push(format!(
            "{} is 0 (turbo on): write 1 (or run --tune); turbo clocks follow temperature and the other cores",
            files::NO_TURBO
        )),
        (None, Some(v)) if v != "0" => out.push(format!(
            "{} is {v} (boost on): write 0 (or run --tune); boost clocks follow temperature and the other cores",
            files::BOOST
        )),
        _ => {}
    }
    if !f.irqbalance.is_empty() {
        out.push(format!(
            "irqbalance runs (PID {}): it moves IRQs during the run; stop it, or run --tune to pause it",
            f.irqbalance[0]
        ));
    }
    out.extend(irq_warning(f));
    if let Some(v) = f.aslr.as_deref().filter(|v| *v != "2") {
        out.push(format!(
            "{} is {v}: write 2 (or run --tune), so memory layout effects average out over trials",
            files::ASLR
        ));
    }
    if let Some(v) = f.numa_balancing.as_deref().filter(|v| *v != "0") {
        out.push(format!(
            "{} is {v}: write 0, so pages do not migrate between NUMA nodes during the run",
            files::NUMA_BALANCING
        ));
    }
    out.extend(load_warnings(f));
    out
}

/// IRQs that may land on a pinned server's CPUs (an unpinned server has
/// every CPU, and nothing can move them off it).
fn irq_warning(f: &Facts) -> Option<String> {
    let server = f.server_cpus.as_deref()?;
    let on = super::parse::irqs_on(&f.irqs, server);
    let (irq, now) = f.irqs.iter().find(|(i, _)| on.contains(i))?;
    let cpus = crate::placement::affinity::format_cpu_list(server);
    let to = super::parse::moved_off(now, server, &f.online)?;
    Some(format!(
        "{} of {} IRQs may run on the server's CPUs {cpus} ({} is `{now}`): write `{to}` \
         to each (or run --tune)",
        on.len(),
        f.irqs.len(),
        of(files::IRQ_AFFINITY, irq),
    ))
}

/// Swap, steal, load and other busy processes: what the rest of the
/// machine does.
fn load_warnings(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(b) = f.swap_used_bytes.filter(|b| *b > 0) {
        out.push(format!(
            "{} MiB of swap is in use (/proc/meminfo SwapTotal - SwapFree): 0 is wanted; \
             free memory or `swapoff -a`",
            b >> 20
        ));
    }
    if let Some(s) = f.steal_share.filter(|s| *s >= STEAL_WARN) {
        out.push(format!(
            "steal is {:.1}% of the CPUs (/proc/stat): another guest on this host takes CPU \
             time; 0% is wanted, so compare runs made at quiet times",
            s * 100.0
        ));
    }
    if let Some([one, ..]) = f.loadavg.filter(|l| l[0] >= LOADAVG_WARN) {
        out.push(format!(
            "the 1-minute load average is {one:.2} (/proc/loadavg): wait until it is below \
             {LOADAVG_WARN:.1}, or stop what runs"
        ));
    }
    if let Some((comm, pid, share)) = f.busy.first() {
        out.push(format!(
            "{} other process(es) busy, the first `{comm}` (/proc/{pid}/stat, {:.0}% of a CPU): \
             none is wanted; stop them",
            f.busy.len(),
            share * 100.0
        ));
    }
    out
}
