//! The kernel-lock limiter: from a profile's folded on-CPU stacks, the
//! share of the server's CPU samples spent in the kernel's lock
//! functions, and the call site that took the most of it (Boyd-Wickizer
//! et al., "An Analysis of Linux Scalability to Many Cores", OSDI 2010:
//! find the lock at each collapse).
//!
//! A sample is lock time when its leaf frame is a kernel lock function
//! ([`LOCK_FRAMES`]: spinning, slow paths, and the unlocks that enable
//! interrupts again). The lock is the outermost lock frame of the leaf's
//! run of lock frames, and its caller the frame just outside that run, so
//! `__x64_sys_rt_sigprocmask;_raw_spin_unlock_irq` is "the signal mask's
//! spin lock, taken by rt_sigprocmask".
//!
//! Without a PMU, perf samples with `cpu-clock`, a timer that cannot
//! interrupt a CPU whose interrupts are off: the time a CPU spins in
//! `spin_lock_irq` (and runs the critical section) lands on the unlock
//! that enables them again, `_raw_spin_unlock_irq(restore)`. Those
//! unlocks are on the list for that reason, and the critical section's
//! own time comes with them: in the test's signal-mask storm on this
//! project's 2-CPU VM, one thread alone puts 12-14% of its samples there,
//! four threads 22-35% (perf report agreeing within a point), the less the
//! busier the machine. So the verdict needs [`KERNEL_LOCK_SHARE`] at one
//! call site.

use serde::Serialize;

/// The share of the server's CPU samples in one lock call site (a lock
/// function and its caller) from which the verdict is "kernel lock". One
/// site, not every lock function together: interrupts and wake-ups put a
/// few percent on `_raw_spin_unlock_irqrestore` all over a busy machine's
/// stacks (6% beside the test suite, under one thread that could not
/// contend with itself).
pub const KERNEL_LOCK_SHARE: f64 = 0.20;

/// Kernel lock functions, matched as the start of a frame's name (the
/// `_[k]` suffix of a kernel frame off).
pub const LOCK_FRAMES: [&str; 16] = [
    "native_queued_spin_lock_slowpath",
    "queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "pv_queued_spin_lock_slowpath",
    "do_raw_spin_lock",
    "_raw_spin_lock",
    "_raw_spin_unlock_irq",
    "_raw_read_lock",
    "_raw_write_lock",
    "osq_lock",
    "rwsem_down_",
    "rwsem_optimistic_spin",
    "__mutex_lock",
    "mutex_spin_on_owner",
    "rt_mutex_slowlock",
    "percpu_down_write",
];

/// The lock that took the most of a profile's samples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelLock {
    /// The lock function (`_raw_spin_unlock_irq`).
    pub lock: String,
    /// The frame that called it (`__x64_sys_rt_sigprocmask`).
    pub caller: String,
    /// This call site's share of all the profile's samples.
    pub share: f64,
    /// Every lock function's share together.
    pub total_share: f64,
    /// Whether `share` reaches [`KERNEL_LOCK_SHARE`].
    pub limits: bool,
}

impl KernelLock {
    /// `kernel lock: __x64_sys_rt_sigprocmask → _raw_spin_unlock_irq, 35%
    /// of server CPU (all lock functions 36%)`.
    pub fn verdict(&self) -> String {
        let head = if self.limits {
            "kernel lock"
        } else {
            "kernel locks below the limit"
        };
        format!(
            "{head}: {} → {}, {:.0}% of server CPU (all lock functions {:.0}%)",
            self.caller,
            self.lock,
            self.share * 100.0,
            self.total_share * 100.0
        )
    }
}

/// A frame's name without the kernel's `_[k]` suffix, and whether it is a
/// kernel frame.
fn kernel_name(frame: &str) -> Option<&str> {
    frame.strip_suffix("_[k]")
}

fn is_lock(frame: &str) -> bool {
    kernel_name(frame).is_some_and(|n| LOCK_FRAMES.iter().any(|l| n.starts_with(l)))
}

/// One folded line: its frames, root first, and its weight.
fn parse_line(line: &str) -> Option<(Vec<&str>, u64)> {
    let (stack, weight) = line.trim().rsplit_once(' ')?;
    Some((stack.split(';').collect(), weight.parse().ok()?))
}

/// The kernel lock of `folded` (inferno's `comm;outer;...;leaf weight`
/// lines); `None` when no sample's leaf is a lock function.
pub fn find(folded: &str) -> Option<KernelLock> {
    let mut total = 0u64;
    let mut lock_total = 0u64;
    let mut sites: Vec<((String, String), u64)> = Vec::new();
    for (frames, weight) in folded.lines().filter_map(parse_line) {
        total += weight;
        let Some(&leaf) = frames.last() else { continue };
        if !is_lock(leaf) {
            continue;
        }
        lock_total += weight;
        let run_start = frames
            .iter()
            .rposition(|f| !is_lock(f))
            .map_or(0, |i| i + 1);
        let lock = kernel_name(frames[run_start]).unwrap_or(frames[run_start]);
        let caller = run_start
            .checked_sub(1)
            .map(|i| kernel_name(frames[i]).unwrap_or(frames[i]))
            .unwrap_or("(no caller)");
        let key = (caller.to_string(), lock.to_string());
        match sites.iter_mut().find(|(k, _)| *k == key) {
            Some((_, w)) => *w += weight,
            None => sites.push((key, weight)),
        }
    }
    let ((caller, lock), top) = sites.into_iter().max_by_key(|(_, w)| *w)?;
    let share = |w: u64| w as f64 / total as f64;
    Some(KernelLock {
        lock,
        caller,
        share: share(top),
        total_share: share(lock_total),
        limits: share(top) >= KERNEL_LOCK_SHARE,
    })
}

/// Where a profile of a (system, point) finds a kernel lock past the
/// limit and the point's trials said CPU (the server's, or the CPUs it
/// shares), the point's limiter becomes "kernel lock" with the profile's
/// verdict: the CPU the trials saw went to spinning. The strip and the
/// table then show it at the profiled point (its peak or its collapse).
pub fn apply(agg: &mut super::rows::Aggregate, profiles: &[crate::store::ProfileRecord]) {
    use crate::record::probe::limiter::LimiterKind;
    for p in profiles {
        let Some(lock) = p.folded.as_deref().and_then(find).filter(|k| k.limits) else {
            continue;
        };
        let cell = agg
            .cells
            .iter_mut()
            .find(|c| c.system == p.system && c.point.index == p.point.index);
        let Some(limiter) = cell.and_then(|c| c.limiter.as_mut()) else {
            continue;
        };
        if matches!(
            limiter.kind,
            LimiterKind::ServerCpu | LimiterKind::CpusShared
        ) {
            limiter.verdict = format!(
                "{} (from the profile at {}; the trials said: {})",
                lock.verdict(),
                p.role,
                limiter.verdict
            );
            limiter.kind = LimiterKind::KernelLock;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_the_outermost_lock_frame_and_its_caller_the_frame_outside() {
        let folded = "\
sig;pthread_sigmask;do_syscall_64_[k];__x64_sys_rt_sigprocmask_[k];_raw_spin_unlock_irq_[k] 35
sig;pthread_sigmask;do_syscall_64_[k] 40
sig;a;inet_csk_accept_[k];_raw_spin_lock_bh_[k];queued_spin_lock_slowpath_[k] 5
sig;pthread_sigmask 20
";
        let k = find(folded).unwrap();
        assert_eq!(k.caller, "__x64_sys_rt_sigprocmask");
        assert_eq!(k.lock, "_raw_spin_unlock_irq");
        assert_eq!(k.share, 0.35);
        assert_eq!(k.total_share, 0.40);
        assert!(k.limits);
        assert_eq!(
            k.verdict(),
            "kernel lock: __x64_sys_rt_sigprocmask → _raw_spin_unlock_irq, 35% of server CPU (all lock functions 40%)"
        );
    }

    #[test]
    fn user_frames_named_like_locks_and_a_small_share_do_not_limit() {
        let folded = "app;_raw_spin_lock 50\napp;f_[k];_raw_spin_lock_[k] 10\napp;g 40\n";
        let k = find(folded).unwrap();
        assert_eq!(k.total_share, 0.10, "the user frame is not the kernel's");
        assert!(!k.limits);
        assert!(k.verdict().starts_with("kernel locks below the limit"));
        assert_eq!(find("app;main 10\n"), None);
        assert_eq!(find(""), None);
    }

    #[test]
    fn a_profiled_cpu_point_that_spins_on_a_kernel_lock_is_limited_by_it() {
        use crate::record::probe::limiter::{Limiter, LimiterKind, LimiterNumbers};
        let mut data = crate::judging::test_support::run_data(&["a"]);
        for t in &mut data.trials {
            t.context.limiter = Some(Limiter {
                kind: LimiterKind::ServerCpu,
                verdict: "server CPU saturated: 1.00 of 1 CPU".into(),
                crossed: vec![LimiterKind::ServerCpu],
                figures: LimiterNumbers::default(),
            });
        }
        let point = data.trials[0].point.clone();
        let spin = "a;f;__x64_sys_rt_sigprocmask_[k];_raw_spin_unlock_irq_[k] 60\na;g 40\n";
        data.profiles.push(crate::store::ProfileRecord {
            system: "a".into(),
            point: point.clone(),
            role: "collapse".into(),
            samples: 100,
            folded: Some(spin.into()),
            plain_rps: None,
            profiled_rps: None,
            error: None,
            offcpu: None,
            offcpu_error: None,
        });
        let agg = crate::judging::analyse::aggregate(&data);
        let at = |i: u32| agg.cells.iter().find(|c| c.point.index == i).unwrap();
        let l = at(point.index).limiter.as_ref().unwrap();
        assert_eq!(l.kind, LimiterKind::KernelLock);
        assert!(
            l.verdict
                .starts_with("kernel lock: __x64_sys_rt_sigprocmask → _raw_spin_unlock_irq, 60%"),
            "{}",
            l.verdict
        );
        assert!(
            l.verdict.contains("the trials said: server CPU"),
            "{}",
            l.verdict
        );
        let other = agg
            .cells
            .iter()
            .find(|c| c.point.index != point.index)
            .unwrap();
        assert_eq!(
            other.limiter.as_ref().unwrap().kind,
            LimiterKind::ServerCpu,
            "only the profiled point"
        );
    }
}
