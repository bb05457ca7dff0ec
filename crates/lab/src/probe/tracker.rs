//! Per-process accounting across samples: processes are born and exit
//! mid-window, and each one's CPU and context switches count only inside it.

use super::data::ProcessSummary;
use super::tree::ProcInfo;
use crate::procfs::pid::PidStat;
use std::collections::HashMap;

/// Per-process accounting across samples, keyed by (pid, start time) so a
/// reused PID is a new process.
#[derive(Debug, Default)]
pub struct Tracker {
    procs: Vec<Tracked>,
    index: HashMap<(u32, u64), usize>,
    /// Boot-relative ticks at the window's start: a process started later
    /// spent all its CPU inside the window.
    window_start_ticks: u64,
}

#[derive(Debug, Clone)]
struct Tracked {
    stat: PidStat,
    base_ticks: u64,
    last_ticks: u64,
    base_ctx: (u64, u64),
    ctx: (u64, u64),
    rss_max_pages: u64,
    first_seen_s: f64,
    last_seen_s: f64,
    present: bool,
}

/// What the members present now did since the previous observation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Interval {
    pub own_ticks: u64,
    pub ctx_voluntary: u64,
    pub ctx_involuntary: u64,
}

impl Tracker {
    pub fn new(window_start_ticks: u64) -> Tracker {
        Tracker {
            window_start_ticks,
            ..Tracker::default()
        }
    }

    pub fn observe(&mut self, tree: &[ProcInfo], t_s: f64) -> Interval {
        for p in &mut self.procs {
            p.present = false;
        }
        let mut d = Interval::default();
        for info in tree {
            let s = &info.stat;
            let key = (s.pid, s.starttime);
            let i = match self.index.get(&key) {
                Some(&i) => i,
                None => {
                    let before_window = s.starttime <= self.window_start_ticks;
                    let (base_ticks, base_ctx) = if before_window {
                        (s.own_ticks(), info.ctx)
                    } else {
                        (0, (0, 0))
                    };
                    self.procs.push(Tracked {
                        stat: s.clone(),
                        base_ticks,
                        last_ticks: base_ticks,
                        base_ctx,
                        ctx: base_ctx,
                        rss_max_pages: 0,
                        first_seen_s: t_s,
                        last_seen_s: t_s,
                        present: true,
                    });
                    self.index.insert(key, self.procs.len() - 1);
                    self.procs.len() - 1
                }
            };
            let p = &mut self.procs[i];
            d.own_ticks += s.own_ticks().saturating_sub(p.last_ticks);
            p.last_ticks = s.own_ticks();
            d.ctx_voluntary += info.ctx.0.saturating_sub(p.ctx.0);
            d.ctx_involuntary += info.ctx.1.saturating_sub(p.ctx.1);
            p.stat = s.clone();
            p.ctx = info.ctx;
            p.rss_max_pages = p.rss_max_pages.max(s.rss_pages);
            p.last_seen_s = t_s;
            p.present = true;
        }
        d
    }

    /// Distinct processes seen.
    #[cfg(test)]
    pub fn seen(&self) -> usize {
        self.procs.len()
    }

    pub fn summaries(&self, ticks_per_s: f64, page_size: u64) -> Vec<ProcessSummary> {
        self.procs
            .iter()
            .map(|p| ProcessSummary {
                pid: p.stat.pid,
                ppid: p.stat.ppid,
                comm: p.stat.comm.clone(),
                cpu_s: p.last_ticks.saturating_sub(p.base_ticks) as f64 / ticks_per_s,
                rss_max_bytes: p.rss_max_pages * page_size,
                rss_bytes: p.stat.rss_pages * page_size,
                vsz_bytes: p.stat.vsize_bytes,
                threads: p.stat.num_threads,
                ctx_voluntary: p.ctx.0.saturating_sub(p.base_ctx.0),
                ctx_involuntary: p.ctx.1.saturating_sub(p.base_ctx.1),
                first_seen_s: p.first_seen_s,
                last_seen_s: p.last_seen_s,
                exited: !p.present || p.stat.is_zombie(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::tree::fixtures::{info, stat};

    #[test]
    fn tracker_counts_only_the_window_across_exits_and_births() {
        let mut t = Tracker::new(1000);
        // Baseline: two processes started before the window.
        let d0 = t.observe(
            &[
                info(stat(1, 0, 500, 10), (5, 1)),
                info(stat(2, 1, 300, 20), (7, 0)),
            ],
            0.0,
        );
        assert_eq!(d0, Interval::default());
        // pid 3 born in the window with 40 ticks; pid 2 gained 10.
        let d1 = t.observe(
            &[
                info(stat(1, 0, 505, 10), (6, 1)),
                info(stat(2, 1, 310, 20), (9, 2)),
                info(stat(3, 1, 40, 1500), (3, 0)),
            ],
            1.0,
        );
        assert_eq!(
            d1,
            Interval {
                own_ticks: 55,
                ctx_voluntary: 6,
                ctx_involuntary: 2
            }
        );
        // pid 2 exited; pid 3 reused as a new process (different start).
        let d2 = t.observe(
            &[
                info(stat(1, 0, 505, 10), (6, 1)),
                info(stat(3, 1, 7, 1900), (1, 0)),
            ],
            2.0,
        );
        assert_eq!(d2.own_ticks, 7);
        let s = t.summaries(100.0, 4096);
        assert_eq!(t.seen(), 4);
        let by = |pid: u32, first: f64| {
            s.iter()
                .find(|p| p.pid == pid && p.first_seen_s == first)
                .unwrap()
        };
        assert!((by(1, 0.0).cpu_s - 0.05).abs() < 1e-12);
        assert!((by(2, 0.0).cpu_s - 0.10).abs() < 1e-12);
        assert!(by(2, 0.0).exited && !by(1, 0.0).exited);
        assert_eq!(
            (by(2, 0.0).ctx_voluntary, by(2, 0.0).ctx_involuntary),
            (2, 2)
        );
        assert!((by(3, 1.0).cpu_s - 0.40).abs() < 1e-12);
        assert!(by(3, 1.0).exited);
        assert_eq!(by(3, 2.0).last_seen_s, 2.0);
    }
}
