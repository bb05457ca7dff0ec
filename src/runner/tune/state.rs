//! The tune's state file: what to put back, written before each change
//! into `<base>/scalelab-tune-<PID>-<random>/state`, so that when both
//! scalelab and its reaper died the next run (or `doctor --machine
//! --reset`) puts it back. Lines are `write<TAB>FILE<TAB>OLD VALUE` and
//! `cont<TAB>PID<TAB>START TICKS`.

use super::allowed;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The state directories' prefix (before the owner's PID).
pub const PREFIX: &str = "scalelab-tune-";

/// One undo step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undo {
    /// Write `old` back into `file`.
    Write {
        /// The knob's file.
        file: String,
        /// Its value before the change.
        old: String,
    },
    /// Send SIGCONT to `pid` if it is still the process that started at
    /// `start_ticks`.
    Cont {
        /// The paused process.
        pid: u32,
        /// Its start time (clock ticks after boot).
        start_ticks: u64,
    },
}

impl Undo {
    /// Its line in the state file.
    pub fn line(&self) -> String {
        match self {
            Undo::Write { file, old } => format!("write\t{file}\t{old}\n"),
            Undo::Cont { pid, start_ticks } => format!("cont\t{pid}\t{start_ticks}\n"),
        }
    }
}

/// The undo steps of a state file's text; a line that is not one (or names
/// a file that is not a tuned knob) is skipped.
pub fn parse(text: &str) -> Vec<Undo> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            match (f.next()?, f.next()?, f.next()?) {
                ("write", file, old) if allowed(file) && !old.is_empty() => Some(Undo::Write {
                    file: file.into(),
                    old: old.into(),
                }),
                ("cont", pid, ticks) => Some(Undo::Cont {
                    pid: pid.parse().ok()?,
                    start_ticks: ticks.parse().ok()?,
                }),
                _ => None,
            }
        })
        .collect()
}

/// Appends `undo` to the state file and syncs it, before the change is made.
pub fn append(dir: &Path, undo: &Undo) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("state"))?;
    f.write_all(undo.line().as_bytes())?;
    f.sync_data()
}

/// Carries out one undo step; says what it did.
pub fn undo(step: &Undo) -> String {
    match step {
        Undo::Write { file, old } => match std::fs::write(file, old) {
            Ok(()) => format!("{file}: put back `{old}`"),
            Err(e) => format!("{file}: could not put back `{old}`: {e}"),
        },
        Undo::Cont { pid, start_ticks } => {
            if crate::procfs::pid::start_ticks(*pid) == Some(*start_ticks) {
                crate::sys::process::signal(*pid, libc::SIGCONT);
                format!("irqbalance (PID {pid}): resumed (SIGCONT)")
            } else {
                format!("irqbalance (PID {pid}): gone, nothing to resume")
            }
        }
    }
}

/// Undoes the state of every dead owner's directory in `base` and removes
/// it: what the reaper would have done. Returns one line per step.
pub fn reclaim(base: &Path) -> Vec<String> {
    let mut said = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    crate::owned::reclaim_stale(base, PREFIX, |dir| {
        dirs.push(dir.to_path_buf());
        Ok(())
    });
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("state")).unwrap_or_default();
        let steps = parse(&text);
        said.extend(steps.iter().rev().map(undo));
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            said.push(format!("{}: could not remove: {e}", dir.display()));
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::machine::files;

    #[test]
    fn lines_round_trip_and_only_tuned_knobs_are_written_back() {
        let steps = [
            Undo::Write {
                file: files::ASLR.into(),
                old: "1".into(),
            },
            Undo::Write {
                file: files::of(files::IRQ_AFFINITY, 24),
                old: "0-1".into(),
            },
            Undo::Cont {
                pid: 612,
                start_ticks: 1234,
            },
        ];
        let text: String = steps.iter().map(Undo::line).collect();
        assert_eq!(parse(&text), steps);
        // A state file that names any other file is not obeyed.
        let forged = "write\t/etc/passwd\tx\nwrite\t/proc/irq/24/../../sys/vm/x\t1\nnoise\n";
        assert_eq!(parse(forged), Vec::new());
    }

    #[test]
    fn a_dead_owners_state_is_reclaimed_and_a_live_ones_kept() {
        let base = tempfile::tempdir().unwrap();
        let dead = base.path().join(format!("{PREFIX}999999999-x"));
        std::fs::create_dir(&dead).unwrap();
        // A process that is gone: its resume is skipped, not sent to a stranger.
        append(
            &dead,
            &Undo::Cont {
                pid: 999_999_999,
                start_ticks: 1,
            },
        )
        .unwrap();
        let live = base
            .path()
            .join(format!("{PREFIX}{}-y", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let said = reclaim(base.path());
        assert_eq!(
            said,
            vec!["irqbalance (PID 999999999): gone, nothing to resume"]
        );
        assert!(!dead.exists() && live.exists());
    }
}
