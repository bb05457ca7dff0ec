//! Run leases: which scalelab process is running a run right now.
//!
//! A lease row names its owner by PID and the process's start time (from
//! `/proc/PID/stat`), so a reused PID is not mistaken for the owner. A lease
//! whose owner is gone (killed, crashed) is stale: `list` shows the run as
//! interrupted and resumable, and the next `--resume` takes the lease over.
//! A live owner's lease is refused to a second resume.

use super::{Store, StoreError};
use crate::procfs::pid::start_ticks;
use rusqlite::{params, OptionalExtension};

/// A process, identified so that PID reuse does not fool it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Its process id.
    pub pid: u32,
    /// Start time in clock ticks since boot (field 22 of `/proc/PID/stat`).
    pub start_ticks: u64,
}

impl Owner {
    /// This process.
    pub fn current() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(0),
        }
    }

    /// Whether this exact process still runs (and is not a zombie).
    pub fn is_alive(&self) -> bool {
        start_ticks(self.pid) == Some(self.start_ticks)
    }
}

impl Store {
    /// Takes the lease of `run_id` for this process, unless another live
    /// process holds it ([`StoreError::RunBusy`]). Atomic across processes:
    /// the check and the write happen under SQLite's write lock.
    pub fn acquire_lease(&mut self, run_id: i64) -> Result<(), StoreError> {
        let me = Owner::current();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let holder = lease_owner(&tx, run_id)?;
        if let Some(owner) = holder.filter(|o| *o != me && o.is_alive()) {
            return Err(StoreError::RunBusy {
                run: run_id,
                pid: owner.pid,
            });
        }
        tx.execute(
            "INSERT OR REPLACE INTO run_leases (run_id, pid, pid_start, acquired_at)
             VALUES (?1, ?2, ?3, ?4)",
            params![run_id, me.pid, me.start_ticks as i64, super::write::now()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Gives up this process's lease of `run_id` (another owner's is kept).
    pub fn release_lease(&mut self, run_id: i64) -> Result<(), StoreError> {
        let me = Owner::current();
        self.conn.execute(
            "DELETE FROM run_leases WHERE run_id = ?1 AND pid = ?2 AND pid_start = ?3",
            params![run_id, me.pid, me.start_ticks as i64],
        )?;
        Ok(())
    }

    /// The live process running `run_id`, if any.
    pub fn live_owner(&self, run_id: i64) -> Result<Option<Owner>, StoreError> {
        Ok(lease_owner(&self.conn, run_id)?.filter(Owner::is_alive))
    }
}

fn lease_owner(conn: &rusqlite::Connection, run_id: i64) -> Result<Option<Owner>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT pid, pid_start FROM run_leases WHERE run_id = ?1",
            [run_id],
            |r| {
                Ok(Owner {
                    pid: r.get(0)?,
                    start_ticks: r.get::<_, i64>(1)? as u64,
                })
            },
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = Owner::current();
        assert!(me.start_ticks > 0);
        assert!(me.is_alive());
        let reused = Owner {
            start_ticks: me.start_ticks + 1,
            ..me
        };
        assert!(!reused.is_alive(), "same PID, other process");
    }

    #[test]
    fn an_exited_child_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let owner = Owner {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(1),
        };
        child.wait().unwrap();
        assert!(!owner.is_alive());
    }
}
