//! The read- and write-family system calls of the server's processes over
//! the window, from the kernel's task I/O accounting (`/proc/PID/io`'s
//! `syscr` and `syscw`). The kernel keeps these for every task whether
//! or not anyone reads them, so unlike a syscall tracepoint they cost the
//! server nothing: the window reads one small file per process at each
//! end.
//!
//! The processes are every member of the server's cgroup and of the
//! cgroups below it. A process's file includes its threads, the threads
//! that exited and the children it reaped, but a process that ends takes
//! its own counts with it. So the window's growth is exact only when the
//! same processes are there at both ends; otherwise it is `None`, with
//! the reason.

use crate::procfs::pid;
use scalelab_record::probe::work::IoCalls;
use std::collections::BTreeSet;
use std::path::Path;

/// The processes of a cgroup tree and their summed calls, at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoSnapshot {
    pids: BTreeSet<u32>,
    calls: IoCalls,
}

/// Reads every process of the cgroup at `dir` and below; the error says
/// which file could not be read.
pub fn snapshot(dir: &Path) -> Result<IoSnapshot, String> {
    read_snapshot(dir).map_err(|e| format!("read and write calls: unavailable: {e}"))
}

fn read_snapshot(dir: &Path) -> Result<IoSnapshot, String> {
    let mut pids = BTreeSet::new();
    members(dir, &mut pids)?;
    let mut calls = IoCalls::default();
    for &p in &pids {
        let text =
            pid::io(p).map_err(|e| format!("cannot read the I/O counts of process {p}: {e}"))?;
        let (reads, writes) = pid::parse_io_calls(&text)
            .ok_or_else(|| format!("process {p}'s I/O counts have no syscr and syscw lines"))?;
        calls.reads += reads;
        calls.writes += writes;
    }
    Ok(IoSnapshot { pids, calls })
}

/// The members of the cgroup at `dir` and of every cgroup below it.
fn members(dir: &Path, into: &mut BTreeSet<u32>) -> Result<(), String> {
    let procs = dir.join("cgroup.procs");
    let text = std::fs::read_to_string(&procs)
        .map_err(|e| format!("cannot read {}: {e}", procs.display()))?;
    into.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok()));
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            members(&entry.path(), into)?;
        }
    }
    Ok(())
}

/// The calls made between `start` and `end`; the error says why they
/// cannot be known exactly (processes came or went).
pub fn since(end: &IoSnapshot, start: &IoSnapshot) -> Result<IoCalls, String> {
    if end.pids != start.pids {
        let ended = start.pids.difference(&end.pids).count();
        let began = end.pids.difference(&start.pids).count();
        return Err(format!(
            "read and write calls: not counted: {ended} of the server's processes ended and \
             {began} began in the window, and a process that ends takes its counts with it"
        ));
    }
    match (
        end.calls.reads.checked_sub(start.calls.reads),
        end.calls.writes.checked_sub(start.calls.writes),
    ) {
        (Some(reads), Some(writes)) => Ok(IoCalls { reads, writes }),
        _ => Err("read and write calls: not counted: a process's counts went down".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(pids: &[u32], reads: u64, writes: u64) -> IoSnapshot {
        IoSnapshot {
            pids: pids.iter().copied().collect(),
            calls: IoCalls { reads, writes },
        }
    }

    #[test]
    fn the_same_processes_give_the_growth() {
        let calls = since(&snap(&[7, 9], 130, 52), &snap(&[9, 7], 100, 40)).unwrap();
        assert_eq!(
            calls,
            IoCalls {
                reads: 30,
                writes: 12
            }
        );
    }

    #[test]
    fn a_process_that_ended_or_began_makes_the_count_unknown() {
        let e = since(&snap(&[7], 130, 52), &snap(&[7, 9], 100, 40)).unwrap_err();
        assert!(
            e.contains("1 of the server's processes ended and 0 began"),
            "{e}"
        );
        let e = since(&snap(&[7, 9, 11], 130, 52), &snap(&[7, 9], 100, 40)).unwrap_err();
        assert!(
            e.contains("0 of the server's processes ended and 1 began"),
            "{e}"
        );
    }

    #[test]
    fn a_count_that_went_down_is_refused() {
        let e = since(&snap(&[7], 10, 52), &snap(&[7], 100, 40)).unwrap_err();
        assert!(e.contains("went down"), "{e}");
    }

    #[test]
    fn a_cgroup_tree_is_read_through_its_subdirectories() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id();
        std::fs::write(dir.path().join("cgroup.procs"), format!("{me}\n")).unwrap();
        let child = dir.path().join("leaf");
        std::fs::create_dir(&child).unwrap();
        std::fs::write(child.join("cgroup.procs"), format!("{me}\n")).unwrap();
        let s = snapshot(dir.path()).unwrap();
        assert_eq!(s.pids.len(), 1, "one process, listed twice");
        let (reads, writes) = pid::parse_io_calls(&pid::io(me).unwrap()).unwrap();
        assert!(s.calls.reads <= reads && s.calls.writes <= writes);
        assert!(s.calls.reads + s.calls.writes > 0);
    }

    #[test]
    fn a_missing_cgroup_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let e = snapshot(&dir.path().join("gone")).unwrap_err();
        assert!(e.contains("gone/cgroup.procs"), "{e}");
    }
}
