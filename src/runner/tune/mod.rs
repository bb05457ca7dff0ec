//! `run --tune`: the documented profile, applied where each knob exists
//! and always put back (psf/pyperf#158: tuning that outlived the run).
//!
//! The profile (`docs/trusting-the-numbers.md`): every CPU's cpufreq
//! governor `performance`; turbo off (`intel_pstate/no_turbo` 1, else
//! `cpufreq/boost` 0); every IRQ that may run on a pinned server's CPUs
//! moved off them (IRQs that refuse the write are left and said);
//! irqbalance paused (`SIGSTOP` by its PID, `SIGCONT` after); ASLR at 2
//! (full randomisation, as pyperf recommends, so layout effects average
//! out). Nothing else is ever written ([`allowed`]).
//!
//! Each change is put back however the run ends. Before it is made it is
//! (1) appended to a state file under the base directory, in a directory
//! named after scalelab's PID, and (2) registered with the reaper
//! (`owned::Removal::Restore`, `Removal::Resume`). [`Tuned`]'s `Drop` puts
//! it back at the run's end, on an error and after Ctrl-C; the reaper after
//! `kill -9`; the next run ([`state::reclaim`], from
//! `runner::reclaim_leftovers`) or `doctor --machine --reset` when the
//! reaper died too. One scalelab tunes at a time (it holds the abstract
//! socket [`LOCK_NAME`], which the kernel frees when it dies, leaving no
//! file): a second would take the first one's values for the machine's own.

pub mod state;

use crate::owned::{self, OwnedDir, Removal};
use crate::probe::machine::{files, moved_off, Facts};
use state::Undo;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

/// The abstract Unix socket whose holder is the one scalelab tuning.
pub const LOCK_NAME: &str = "scalelab-tune";

/// Why the tune could not start. Nothing is left changed.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// Another scalelab holds the tune lock.
    #[error("another scalelab is tuning this machine (it holds the abstract socket @{LOCK_NAME}): wait until its run ends, or run without --tune")]
    Busy,
    /// The state directory or lock could not be made.
    #[error("cannot record the tune's state under {dir}: {source}; check that the base directory is writable (SCALELAB_WORKDIR)")]
    State {
        /// The directory.
        dir: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// One change the profile makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Write `new` into `file`, which holds `old`.
    Write {
        /// The knob's file.
        file: String,
        /// Its value now.
        old: String,
        /// The profile's value.
        new: String,
    },
    /// Pause irqbalance.
    Pause {
        /// Its PID.
        pid: u32,
    },
}

/// Whether `file` is one of the knobs the profile may write.
pub fn allowed(file: &str) -> bool {
    let numbered = |pattern: &str, hole: &str| {
        let (head, tail) = pattern.split_once(hole).unwrap_or((pattern, ""));
        file.strip_prefix(head)
            .and_then(|r| r.strip_suffix(tail))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    [files::NO_TURBO, files::BOOST, files::ASLR].contains(&file)
        || numbered(files::GOVERNOR, "{cpu}")
        || numbered(files::IRQ_AFFINITY, "{irq}")
}

/// The profile's changes on a machine with `f` (`offers(cpu)`: whether the
/// CPU's `scaling_available_governors` lists `performance`), and a note
/// for each knob it leaves and why.
pub fn plan(f: &Facts, offers: impl Fn(usize) -> bool) -> (Vec<Change>, Vec<String>) {
    let mut changes = Vec::new();
    let mut notes = Vec::new();
    let mut write = |file: String, old: &str, new: &str| {
        if old != new {
            changes.push(Change::Write {
                file,
                old: old.into(),
                new: new.into(),
            });
        }
    };
    if f.governors.is_empty() {
        notes.push("governor: unavailable: no cpufreq driver".into());
    }
    for (cpu, g) in f.governors.iter().filter(|(_, g)| g != "performance") {
        if offers(*cpu) {
            write(files::of(files::GOVERNOR, cpu), g, "performance");
        } else {
            notes.push(format!(
                "governor: cpu{cpu} offers no `performance`; left `{g}`"
            ));
        }
    }
    match (&f.no_turbo, &f.boost) {
        (Some(v), _) => write(files::NO_TURBO.into(), v, "1"),
        (None, Some(v)) => write(files::BOOST.into(), v, "0"),
        (None, None) => {
            notes.push("turbo: unavailable: no intel_pstate/no_turbo or cpufreq/boost".into())
        }
    }
    match &f.server_cpus {
        None => notes.push(
            "IRQs: left where they are: no server of this machine is pinned (server_cpus), so no CPU is free of one"
                .into(),
        ),
        Some(server) => {
            for (irq, list) in &f.irqs {
                match moved_off(list, server, &f.online) {
                    Some(to) => write(files::of(files::IRQ_AFFINITY, irq), list, &to),
                    None => notes.push(format!("IRQ {irq}: no CPU outside the server's; left `{list}`")),
                }
            }
        }
    }
    match &f.aslr {
        Some(v) => write(files::ASLR.into(), v, "2"),
        None => notes.push(format!("ASLR: unavailable: no {}", files::ASLR)),
    }
    if f.irqbalance.is_empty() {
        notes.push("irqbalance: not running".into());
    }
    changes.extend(f.irqbalance.iter().map(|&pid| Change::Pause { pid }));
    (changes, notes)
}

/// The profile, applied; put back when dropped.
pub struct Tuned {
    done: Vec<Undo>,
    dir: Option<OwnedDir>,
    _lock: std::os::unix::net::UnixListener,
    /// File (or `irqbalance PID n`) to `old -> new`: what was changed.
    pub record: BTreeMap<String, String>,
    /// One line per knob left alone, or a change refused.
    pub notes: Vec<String>,
}

/// Applies the profile to this machine (read as `f`), recording its state
/// under `base_dir`.
pub fn apply(base_dir: &Path, f: &Facts) -> Result<Tuned, TuneError> {
    let err = |dir: &Path| {
        let dir = dir.display().to_string();
        move |source| TuneError::State { dir, source }
    };
    let lock = lock().map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => TuneError::Busy,
        _ => TuneError::State {
            dir: format!("@{LOCK_NAME}"),
            source: e,
        },
    })?;
    let mut notes = state::reclaim(base_dir);
    let dir = OwnedDir::create(base_dir, state::PREFIX).map_err(err(base_dir))?;
    let offers = |cpu: usize| {
        std::fs::read_to_string(files::of(files::GOVERNORS, cpu))
            .is_ok_and(|t| t.split_whitespace().any(|g| g == "performance"))
    };
    let (changes, plan_notes) = plan(f, offers);
    notes.extend(plan_notes);
    let mut tuned = Tuned {
        done: Vec::new(),
        dir: None,
        _lock: lock,
        record: BTreeMap::new(),
        notes,
    };
    for change in changes {
        tuned.make(dir.path(), change);
    }
    tuned.dir = Some(dir);
    Ok(tuned)
}

/// Binds the lock's abstract socket (close-on-exec: no server holds it).
fn lock() -> std::io::Result<std::os::unix::net::UnixListener> {
    use std::os::linux::net::SocketAddrExt;
    let name = std::os::unix::net::SocketAddr::from_abstract_name(LOCK_NAME)?;
    std::os::unix::net::UnixListener::bind_addr(&name)
}

impl Tuned {
    /// Makes one change: state file, then reaper, then the change.
    fn make(&mut self, dir: &Path, change: Change) {
        let (undo, words, what) = match &change {
            Change::Write { file, old, .. } => (
                Undo::Write {
                    file: file.clone(),
                    old: old.clone(),
                },
                vec![file.clone(), old.clone()],
                (Removal::Restore, file.clone()),
            ),
            Change::Pause { pid } => {
                let Some(start_ticks) = crate::procfs::pid::start_ticks(*pid) else {
                    return;
                };
                (
                    Undo::Cont {
                        pid: *pid,
                        start_ticks,
                    },
                    vec![pid.to_string()],
                    (Removal::Resume, format!("irqbalance PID {pid}")),
                )
            }
        };
        if let Err(e) = state::append(dir, &undo) {
            self.notes
                .push(format!("{}: not changed: cannot record it: {e}", what.1));
            return;
        }
        let words: Vec<&OsStr> = words.iter().map(OsStr::new).collect();
        owned::register(what.0, &words);
        let made = match &change {
            Change::Write { file, old, new } => match std::fs::write(file, new) {
                Ok(()) => Ok(format!("{old} -> {new}")),
                Err(e) => Err(format!("{file}: refuses `{new}` ({e}); left `{old}`")),
            },
            Change::Pause { pid } => {
                crate::sys::process::signal(*pid, libc::SIGSTOP);
                Ok(format!("running -> paused (SIGSTOP to PID {pid})"))
            }
        };
        match made {
            Ok(record) => {
                self.record.insert(what.1, record);
                self.done.push(undo);
            }
            Err(note) => {
                owned::forget(what.0, &words);
                self.notes.push(note);
            }
        }
    }

    /// Puts every change back, newest first; one line per step.
    pub fn undo(&mut self) -> Vec<String> {
        let mut said = Vec::new();
        while let Some(step) = self.done.pop() {
            said.push(state::undo(&step));
            match &step {
                Undo::Write { file, old } => {
                    owned::forget(Removal::Restore, &[OsStr::new(file), OsStr::new(old)])
                }
                Undo::Cont { pid, .. } => {
                    owned::forget(Removal::Resume, &[OsStr::new(&pid.to_string())])
                }
            }
        }
        self.dir.take();
        said
    }
}

impl Drop for Tuned {
    fn drop(&mut self) {
        for line in self.undo() {
            if line.contains("could not") {
                eprintln!("scalelab: tune: {line}");
            }
        }
    }
}

#[cfg(test)]
mod tests;
