//! The kernel-lock limiter: from a profile's folded on-CPU stacks, the
//! share of the server's CPU samples spent waiting on the kernel's locks,
//! and the call site that took the most of it (Boyd-Wickizer et al., "An
//! Analysis of Linux Scalability to Many Cores", OSDI 2010: find the lock
//! at each collapse).
//!
//! A sample waits on a lock when one of its kernel frames is a wait frame
//! ([`WAIT_FRAMES`]: the spin loops and slow paths, with whatever they
//! call). The lock is the outermost frame of the run of lock frames
//! ([`WAIT_FRAMES`] and the entry points of [`ACQUIRE_FRAMES`]) around the
//! innermost wait frame, and its caller the frame just outside that run, so
//! `fdget_pos;__mutex_lock.constprop.0;mutex_spin_on_owner` is "the file's
//! position mutex, taken by fdget_pos".
//!
//! Without a PMU, perf samples with `cpu-clock`, a timer that cannot
//! interrupt a CPU whose interrupts are off: the time a CPU spins in
//! `spin_lock_irq`, and the time it runs any section with interrupts off,
//! lands on the unlock that enables them again ([`IRQ_ON_UNLOCKS`]). Such a
//! sample cannot be told from the uncontended section's own time: one
//! thread changing its signal mask alone, which contends with no one, put
//! 27% of its samples on `_raw_spin_unlock_irq` on this project's VM, four
//! threads 30%. So those samples are counted apart, as interrupts-off
//! time, said beside the verdict and never the verdict. A lock that spins
//! with interrupts on (a mutex, an rwsem, a plain spin lock's slow path)
//! is seen where it spins; with a PMU, perf's NMI samples see the rest.

use serde::Serialize;

/// The share of the server's CPU samples waiting at one lock call site (a
/// lock and its caller) from which the verdict is "kernel lock". One site,
/// not every lock together, so that a few percent of wake-ups all over a
/// busy machine's stacks do not add up to a verdict.
pub const KERNEL_LOCK_SHARE: f64 = 0.20;

/// Kernel frames that wait for a lock, matched as the start of a frame's
/// name (the `_[k]` suffix of a kernel frame off): the spin loops and
/// slow paths.
pub const WAIT_FRAMES: [&str; 15] = [
    "native_queued_spin_lock_slowpath",
    "queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "pv_queued_spin_lock_slowpath",
    "do_raw_spin_lock",
    "osq_lock",
    "rwsem_down_",
    "rwsem_optimistic_spin",
    "rwsem_spin_on_owner",
    "__mutex_lock",
    "mutex_spin_on_owner",
    "rt_mutex_slowlock",
    "percpu_down_write",
    "__percpu_down_read",
    "__lock_sock",
];

/// Kernel frames that take a lock without waiting themselves: the entry
/// points, which name the lock when a wait frame runs under them.
pub const ACQUIRE_FRAMES: [&str; 7] = [
    "_raw_spin_lock",
    "_raw_read_lock",
    "_raw_write_lock",
    "down_write",
    "down_read",
    "mutex_lock",
    "lock_sock_nested",
];

/// The unlocks that enable interrupts again, where `cpu-clock` samples of
/// an interrupts-off section land.
pub const IRQ_ON_UNLOCKS: [&str; 1] = ["_raw_spin_unlock_irq"];

/// A call site: a lock function, the frame that called it, and the share
/// of all the profile's samples it took.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LockSite {
    /// The lock function (`__mutex_lock.constprop.0`).
    pub lock: String,
    /// The frame that called it (`fdget_pos`).
    pub caller: String,
    /// This call site's share of all the profile's samples.
    pub share: f64,
}

/// What a profile's kernel frames say about locks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelLock {
    /// The call site that waited the most, if any sample waited.
    pub top: Option<LockSite>,
    /// Every wait's share together.
    pub total_share: f64,
    /// Whether the top site's share reaches [`KERNEL_LOCK_SHARE`].
    pub limits: bool,
    /// The unlock site that took the most interrupts-off samples, if any.
    pub irq_off: Option<LockSite>,
    /// Every interrupts-off sample's share together.
    pub irq_off_share: f64,
}

impl KernelLock {
    /// `kernel lock: fdget_pos → __mutex_lock.constprop.0, 35% of server
    /// CPU (all lock waits 36%)`, and the interrupts-off time where it
    /// reaches the limit.
    pub fn verdict(&self) -> String {
        let mut out = match &self.top {
            Some(t) => format!(
                "{}: {} → {}, {:.0}% of server CPU (all lock waits {:.0}%)",
                if self.limits {
                    "kernel lock"
                } else {
                    "kernel locks below the limit"
                },
                t.caller,
                t.lock,
                t.share * 100.0,
                self.total_share * 100.0
            ),
            None => "no kernel lock waited".to_string(),
        };
        if let Some(i) = self
            .irq_off
            .as_ref()
            .filter(|i| i.share >= KERNEL_LOCK_SHARE)
        {
            out.push_str(&format!(
                "; {:.0}% with interrupts off, ended at {} → {}: a contended spin lock or \
                 the section's own time, which cpu-clock sampling (no PMU) cannot tell apart",
                i.share * 100.0,
                i.caller,
                i.lock
            ));
        }
        out
    }
}

/// A frame's name without the kernel's `_[k]` suffix, and whether it is a
/// kernel frame.
fn kernel_name(frame: &str) -> Option<&str> {
    frame.strip_suffix("_[k]")
}

fn is_kernel(frame: &str, names: &[&str]) -> bool {
    kernel_name(frame).is_some_and(|n| names.iter().any(|l| n.starts_with(l)))
}

fn is_wait(frame: &str) -> bool {
    is_kernel(frame, &WAIT_FRAMES)
}

fn is_lock(frame: &str) -> bool {
    is_wait(frame) || is_kernel(frame, &ACQUIRE_FRAMES) || is_kernel(frame, &IRQ_ON_UNLOCKS)
}

/// One folded line: its frames, root first, and its weight.
fn parse_line(line: &str) -> Option<(Vec<&str>, u64)> {
    let (stack, weight) = line.trim().rsplit_once(' ')?;
    Some((stack.split(';').collect(), weight.parse().ok()?))
}

/// The call site of the run of lock frames that holds `frames[at]`.
fn site_of(frames: &[&str], at: usize) -> (String, String) {
    let start = frames[..at]
        .iter()
        .rposition(|f| !is_lock(f))
        .map_or(0, |i| i + 1);
    let name = |f: &str| kernel_name(f).unwrap_or(f).to_string();
    let caller = start
        .checked_sub(1)
        .map_or_else(|| "(no caller)".to_string(), |i| name(frames[i]));
    (caller, name(frames[start]))
}

/// Weights summed per call site, and their total.
#[derive(Default)]
struct Sites {
    by_site: Vec<((String, String), u64)>,
    total: u64,
}

impl Sites {
    fn add(&mut self, key: (String, String), weight: u64) {
        self.total += weight;
        match self.by_site.iter_mut().find(|(k, _)| *k == key) {
            Some((_, w)) => *w += weight,
            None => self.by_site.push((key, weight)),
        }
    }

    fn top(self, all: u64) -> Option<LockSite> {
        let ((caller, lock), w) = self.by_site.into_iter().max_by_key(|(_, w)| *w)?;
        Some(LockSite {
            lock,
            caller,
            share: w as f64 / all as f64,
        })
    }
}

/// The kernel locks of `folded` (inferno's `comm;outer;...;leaf weight`
/// lines); `None` when no sample waited on a lock or ended at an
/// interrupts-on unlock.
pub fn find(folded: &str) -> Option<KernelLock> {
    let mut all = 0u64;
    let (mut waits, mut irq_off) = (Sites::default(), Sites::default());
    for (frames, weight) in folded.lines().filter_map(parse_line) {
        all += weight;
        if let Some(w) = frames.iter().rposition(|f| is_wait(f)) {
            waits.add(site_of(&frames, w), weight);
        } else if frames.last().is_some_and(|f| is_kernel(f, &IRQ_ON_UNLOCKS)) {
            irq_off.add(site_of(&frames, frames.len() - 1), weight);
        }
    }
    if waits.total + irq_off.total == 0 {
        return None;
    }
    let share = |w: u64| w as f64 / all as f64;
    let (total_share, irq_off_share) = (share(waits.total), share(irq_off.total));
    let top = waits.top(all);
    Some(KernelLock {
        limits: top.as_ref().is_some_and(|t| t.share >= KERNEL_LOCK_SHARE),
        top,
        total_share,
        irq_off: irq_off.top(all),
        irq_off_share,
    })
}

/// Where a profile of a (system, point) finds a kernel lock past the
/// limit and the point's trials said CPU (the server's, or the CPUs it
/// shares), the point's limiter becomes "kernel lock" with the profile's
/// verdict: the CPU the trials saw went to spinning. The strip and the
/// table then show it at the profiled point (its peak or its collapse).
pub fn apply(agg: &mut super::rows::Aggregate, profiles: &[crate::store::ProfileRecord]) {
    use crate::record::probe::limiter::LimiterKind;
    super::profiled::relimit(agg, profiles, LimiterKind::KernelLock, |folded| {
        find(folded).filter(|k| k.limits).map(|k| k.verdict())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_the_outermost_lock_frame_and_its_caller_the_frame_outside() {
        let folded = "\
rd;read;ksys_read_[k];fdget_pos_[k];__mutex_lock.constprop.0_[k];mutex_spin_on_owner_[k] 30
rd;read;ksys_read_[k];fdget_pos_[k];__mutex_lock.constprop.0_[k];osq_lock_[k];kvm_vcpu_is_preempted_[k] 5
rd;read;ksys_read_[k];fdget_pos_[k];mutex_lock_[k] 3
rd;read;ksys_read_[k] 40
rd;a;inet_csk_accept_[k];lock_sock_nested_[k];_raw_spin_lock_bh_[k];queued_spin_lock_slowpath_[k] 2
rd;read 20
";
        let k = find(folded).unwrap();
        let top = k.top.as_ref().unwrap();
        assert_eq!(top.caller, "fdget_pos");
        assert_eq!(top.lock, "__mutex_lock.constprop.0");
        assert_eq!(top.share, 0.35, "the spin's callee waits too");
        assert_eq!(
            k.total_share, 0.37,
            "the fast path's mutex_lock does not wait"
        );
        assert!(k.limits);
        assert_eq!(k.irq_off, None);
        assert_eq!(
            k.verdict(),
            "kernel lock: fdget_pos → __mutex_lock.constprop.0, 35% of server CPU (all lock waits 37%)"
        );
        let accept = "x;inet_csk_accept_[k];lock_sock_nested_[k];_raw_spin_lock_bh_[k];queued_spin_lock_slowpath_[k] 1\n";
        let top = find(accept).unwrap().top.unwrap();
        assert_eq!(
            (top.caller.as_str(), top.lock.as_str()),
            ("inet_csk_accept", "lock_sock_nested")
        );
    }

    #[test]
    fn interrupts_off_time_is_said_beside_the_verdict_and_never_limits() {
        let folded = "\
sig;pthread_sigmask;do_syscall_64_[k];__x64_sys_rt_sigprocmask_[k];_raw_spin_unlock_irq_[k] 30
sig;pthread_sigmask;do_syscall_64_[k] 50
sig;w_[k];_raw_spin_lock_[k];native_queued_spin_lock_slowpath_[k] 4
sig;pthread_sigmask 16
";
        let k = find(folded).unwrap();
        assert!(!k.limits, "{k:?}");
        let irq = k.irq_off.as_ref().unwrap();
        assert_eq!(irq.caller, "__x64_sys_rt_sigprocmask");
        assert_eq!(irq.lock, "_raw_spin_unlock_irq");
        assert_eq!((irq.share, k.irq_off_share), (0.30, 0.30));
        assert_eq!(
            k.verdict(),
            "kernel locks below the limit: w → _raw_spin_lock, 4% of server CPU (all lock waits 4%); \
             30% with interrupts off, ended at __x64_sys_rt_sigprocmask → _raw_spin_unlock_irq: \
             a contended spin lock or the section's own time, which cpu-clock sampling (no PMU) \
             cannot tell apart"
        );
        let only = find("a;f_[k];_raw_spin_unlock_irqrestore_[k] 1\na;g 9\n").unwrap();
        assert_eq!(only.top, None);
        assert_eq!(
            only.verdict(),
            "no kernel lock waited",
            "10% is under the limit: not said"
        );
    }

    #[test]
    fn user_frames_named_like_locks_and_a_small_share_do_not_limit() {
        let folded = "app;osq_lock 50\napp;f_[k];_raw_spin_lock_[k];queued_spin_lock_slowpath_[k] 10\napp;g 40\n";
        let k = find(folded).unwrap();
        assert_eq!(k.total_share, 0.10, "the user frame is not the kernel's");
        assert!(!k.limits);
        assert!(k.verdict().starts_with("kernel locks below the limit"));
        assert_eq!(find("app;main 10\n"), None);
        assert_eq!(
            find("app;f_[k];_raw_spin_lock_[k] 10\n"),
            None,
            "an uncontended lock waits for nothing"
        );
        assert_eq!(find(""), None);
    }

    #[test]
    fn a_profiled_cpu_point_that_spins_on_a_kernel_lock_is_limited_by_it() {
        use crate::record::probe::limiter::LimiterKind;
        let spin =
            "a;f;fdget_pos_[k];__mutex_lock.constprop.0_[k];mutex_spin_on_owner_[k] 60\na;g 40\n";
        let (data, index) =
            crate::judging::test_support::cpu_bound_with_profile("a", "collapse", spin);
        let agg = crate::judging::analyse::aggregate(&data);
        let at = |i: u32| agg.cells.iter().find(|c| c.point.index == i).unwrap();
        let l = at(index).limiter.as_ref().unwrap();
        assert_eq!(l.kind, LimiterKind::KernelLock);
        assert!(
            l.verdict
                .starts_with("kernel lock: fdget_pos → __mutex_lock.constprop.0, 60%"),
            "{}",
            l.verdict
        );
        assert!(
            l.verdict.contains("the trials said: server CPU"),
            "{}",
            l.verdict
        );
        let other = agg.cells.iter().find(|c| c.point.index != index).unwrap();
        assert_eq!(
            other.limiter.as_ref().unwrap().kind,
            LimiterKind::ServerCpu,
            "only the profiled point"
        );
    }
}
