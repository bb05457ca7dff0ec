//! The server's process tree: found by parent PID on every sample, and
//! totalled. Per-process accounting across samples is in `probe::tracker`.
//!
//! Tree CPU uses each live member's own ticks plus the ticks of children it
//! has reaped (`cutime`/`cstime`). A member that exits between samples is
//! reaped by its parent (nginx's master, PostgreSQL's postmaster), which adds
//! all its CPU to the parent's `cutime`, so the total stays exact across
//! exits; summing only live processes would lose the CPU of any process
//! that exits before the next sample.

use crate::procfs::pid::{ctx_switches, main_ctx_switches, PidStat};
use std::collections::{HashMap, HashSet};

/// One member of the tree at one sample.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcInfo {
    /// Its `/proc/PID/stat` line.
    pub stat: PidStat,
    /// `(voluntary, involuntary)` summed over the process's threads.
    pub ctx: (u64, u64),
}

/// Finds the tree on each sample without re-reading every process: the
/// parent of a process outside the tree is read once, when its PID first
/// appears, because a process can only join the tree by being born into
/// it. Members are re-read every time. (A PID reused within one interval
/// would be missed; that takes pid_max forks in one interval.)
#[derive(Debug, Default)]
pub struct TreeScanner {
    /// PID -> parent PID of every process seen in /proc.
    parents: HashMap<u32, u32>,
    members: HashSet<u32>,
}

impl TreeScanner {
    /// `root` and its descendants, root first (empty if `root` is gone).
    pub fn scan(&mut self, root: u32) -> Vec<ProcInfo> {
        let Ok(listed) = crate::procfs::pid::all() else {
            return Vec::new();
        };
        let mut fresh = Vec::new();
        let mut parents = HashMap::with_capacity(listed.len());
        for pid in listed {
            let known = self.parents.get(&pid).copied();
            let reread = known.is_none() || pid == root || self.members.contains(&pid);
            if !reread {
                parents.insert(pid, known.unwrap_or(0));
                continue;
            }
            if let Some(stat) = crate::procfs::pid::stat(pid) {
                parents.insert(pid, stat.ppid);
                fresh.push(stat);
            }
        }
        self.parents = parents;
        // Everything that can be in the tree was just read.
        let tree = select_tree(root, fresh);
        self.members = tree.iter().map(|s| s.pid).collect();
        tree.into_iter()
            .map(|stat| ProcInfo {
                ctx: read_ctx(stat.pid, stat.num_threads),
                stat,
            })
            .collect()
    }
}

/// `root` and everything below it, by ppid, root first.
pub fn select_tree(root: u32, all: Vec<PidStat>) -> Vec<PidStat> {
    let order = tree_order(&all, root, |s| (s.pid, s.ppid));
    let mut slots: Vec<Option<PidStat>> = all.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// The indices in `all` of `root` and everything below it, by parent,
/// root first; `ids` gives an entry's (pid, ppid). The one walk of a
/// process tree, for the agent's `/proc` rows and the agentless probe's
/// `ps` rows alike; empty when `root` is not there.
pub fn tree_order<T>(all: &[T], root: u32, ids: impl Fn(&T) -> (u32, u32)) -> Vec<usize> {
    let mut children: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut root_index = None;
    for (i, entry) in all.iter().enumerate() {
        let (pid, ppid) = ids(entry);
        if pid == root {
            root_index = root_index.or(Some(i));
        } else {
            children.entry(ppid).or_default().push(i);
        }
    }
    let Some(r) = root_index else {
        return Vec::new();
    };
    let mut order = vec![r];
    let mut next = 0;
    while next < order.len() {
        let pid = ids(&all[order[next]]).0;
        order.extend(children.get(&pid).into_iter().flatten());
        next += 1;
    }
    order
}

/// Context switches of all threads of `pid` (the status file of a process
/// reports only its main thread).
fn read_ctx(pid: u32, threads: u32) -> (u64, u64) {
    if threads <= 1 {
        return main_ctx_switches(pid);
    }
    let Ok(tasks) = crate::procfs::pid::tasks(pid) else {
        return main_ctx_switches(pid);
    };
    tasks.into_iter().fold((0, 0), |acc, (_, dir)| {
        let (v, i) = ctx_switches(&format!("{}/status", dir.display()));
        (acc.0 + v, acc.1 + i)
    })
}

/// The tree at one sample.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeTotals {
    /// The root is listed in /proc (a zombie still is, with its CPU times).
    pub root_present: bool,
    /// The root is listed and not a zombie.
    pub root_alive: bool,
    /// Live (non-zombie) processes and their threads.
    pub processes: u32,
    /// Their threads.
    pub threads: u32,
    /// Σ own + reaped-children ticks over all members, zombies included.
    pub ticks_with_children: u64,
    /// Σ resident set size of the live members.
    pub rss_bytes: u64,
    /// Σ virtual size of the live members.
    pub vsz_bytes: u64,
    /// Mean RSS / VSZ of the live non-root processes, or of the root when
    /// it is alone.
    pub worker_rss_bytes: Option<f64>,
    /// Their mean VSZ, likewise.
    pub worker_vsz_bytes: Option<f64>,
}

/// What the tree adds up to at one sample; `page_size` turns RSS pages
/// into bytes.
pub fn totals(tree: &[ProcInfo], page_size: u64) -> TreeTotals {
    let live: Vec<&PidStat> = tree
        .iter()
        .map(|p| &p.stat)
        .filter(|s| !s.is_zombie())
        .collect();
    let rss = |s: &PidStat| s.rss_pages * page_size;
    let workers: Vec<&PidStat> = match live.split_first() {
        Some((root, rest)) if tree[0].stat.pid == root.pid => {
            if rest.is_empty() {
                vec![*root]
            } else {
                rest.to_vec()
            }
        }
        _ => live.clone(),
    };
    let mean = |f: &dyn Fn(&PidStat) -> u64| {
        (!workers.is_empty())
            .then(|| workers.iter().map(|s| f(s) as f64).sum::<f64>() / workers.len() as f64)
    };
    TreeTotals {
        root_present: !tree.is_empty(),
        root_alive: tree.first().is_some_and(|r| !r.stat.is_zombie()),
        processes: live.len() as u32,
        threads: live.iter().map(|s| s.num_threads).sum(),
        ticks_with_children: tree.iter().map(|p| p.stat.ticks_with_children()).sum(),
        rss_bytes: live.iter().map(|s| rss(s)).sum(),
        vsz_bytes: live.iter().map(|s| s.vsize_bytes).sum(),
        worker_rss_bytes: mean(&rss),
        worker_vsz_bytes: mean(&|s| s.vsize_bytes),
    }
}

/// Process fixtures for this module's and the tracker's tests.
#[cfg(test)]
pub(super) mod fixtures {
    use super::{PidStat, ProcInfo};

    pub fn stat(pid: u32, ppid: u32, ticks: u64, start: u64) -> PidStat {
        PidStat {
            pid,
            ppid,
            comm: format!("p{pid}"),
            state: 'S',
            utime: ticks,
            num_threads: 1,
            starttime: start,
            rss_pages: 10,
            vsize_bytes: 1000,
            ..PidStat::default()
        }
    }

    pub fn info(s: PidStat, ctx: (u64, u64)) -> ProcInfo {
        ProcInfo { stat: s, ctx }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{info, stat};
    use super::*;

    #[test]
    fn the_tree_walk_takes_any_row_and_skips_other_trees() {
        // (pid, ppid) rows as `ps -o pid,ppid` gives them: 700 is the
        // root, 702 its grandchild listed before its parent, 900 another
        // tree, 5 a row that names itself its parent.
        let rows = [(1, 0), (702, 701), (700, 1), (900, 1), (701, 700), (5, 5)];
        let order = tree_order(&rows, 700, |r| *r);
        let pids: Vec<u32> = order.iter().map(|&i| rows[i].0).collect();
        assert_eq!(pids, [700, 701, 702]);
        assert!(tree_order(&rows, 4242, |r| *r).is_empty());
    }

    #[test]
    fn tree_is_root_and_descendants_only() {
        let all = vec![
            stat(5, 1, 0, 0),
            stat(10, 1, 0, 0),
            stat(11, 10, 0, 0),
            stat(12, 11, 0, 0),
            stat(13, 5, 0, 0),
        ];
        let pids: Vec<u32> = select_tree(10, all.clone()).iter().map(|s| s.pid).collect();
        assert_eq!(pids, vec![10, 11, 12]);
        assert!(select_tree(99, all).is_empty());
    }

    #[test]
    fn totals_and_memory_per_worker() {
        let mut zombie = stat(4, 1, 50, 0);
        zombie.state = 'Z';
        zombie.rss_pages = 0;
        let mut root = stat(1, 0, 100, 0);
        root.cutime = 40;
        let mut w2 = stat(3, 1, 0, 0);
        w2.rss_pages = 30;
        w2.num_threads = 4;
        let tree = vec![
            info(root, (0, 0)),
            info(stat(2, 1, 0, 0), (0, 0)),
            info(w2, (0, 0)),
            info(zombie, (0, 0)),
        ];
        let t = totals(&tree, 4096);
        assert!(t.root_alive && t.root_present);
        assert_eq!((t.processes, t.threads), (3, 6));
        assert_eq!(t.ticks_with_children, 190);
        assert_eq!(t.rss_bytes, 50 * 4096);
        assert_eq!(t.worker_rss_bytes, Some(20.0 * 4096.0));
        // Alone, the root is the worker.
        let alone = totals(&tree[..1], 4096);
        assert_eq!(alone.worker_vsz_bytes, Some(1000.0));
        assert_eq!(totals(&[], 4096), TreeTotals::default());
    }
}
