//! The server tree's storage reads and major faults over a window, each
//! byte and fault counted once, whatever processes exit in between.
//!
//! The kernel's per-process figures are cumulative and include the
//! process's reaped children: `read_bytes` of `/proc/PID/io` (its own and
//! its reaped descendants', added to the parent when it waits for them) and
//! `majflt + cmajflt` of `/proc/PID/stat`. So the sum of these figures
//! over the tree's processes (zombies included: they are not reaped yet)
//! only grows, by exactly what the tree did: a process that exits and is
//! reaped moves its total into its parent's. The window's figure is the
//! sum's growth from the first reading to the last ([`TreeTotal`]).
//!
//! Summing each process's own growth instead counts an exiting child twice
//! (its growth, then its whole life again in its parent's jump), and a
//! process that exits between the tree scan and the read of its files is
//! not unreadable: it is gone, and its figures are in its parent's. A
//! reading where a process vanished is taken again ([`read`]), so the
//! parent is read after the child's figures reached it.

/// Readings taken again at most this often when processes vanish during
/// one (the last one stands).
const READ_ATTEMPTS: usize = 3;

/// One reading of the tree: the sums over its processes of their
/// cumulative figures (own plus reaped descendants').
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeReading {
    /// Bytes read from storage; `None` when a live process's
    /// `/proc/PID/io` could not be read (permission).
    pub read_bytes: Option<u64>,
    /// Major page faults.
    pub major_faults: u64,
}

/// What reading one process found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessReading {
    /// Its figures.
    Read {
        /// `read_bytes` of `/proc/PID/io`; `None` when the file was refused.
        read_bytes: Option<u64>,
        /// `majflt + cmajflt` of `/proc/PID/stat`.
        major_faults: u64,
    },
    /// It was reaped since the tree was scanned: its figures are its parent's now.
    Gone,
}

/// The sum of `readings`, or `None` when a process vanished (the parent
/// read before it may not hold its figures yet: read again).
pub fn sum(readings: &[ProcessReading]) -> Option<TreeReading> {
    let mut total = TreeReading {
        read_bytes: Some(0),
        major_faults: 0,
    };
    for r in readings {
        match *r {
            ProcessReading::Read {
                read_bytes,
                major_faults,
            } => {
                total.read_bytes = total.read_bytes.zip(read_bytes).map(|(a, b)| a + b);
                total.major_faults += major_faults;
            }
            ProcessReading::Gone => return None,
        }
    }
    Some(total)
}

/// Reads the tree's processes `pids` (zombies included) in their order,
/// which must put every parent before its children (the tree scan's), so a
/// child reaped during the reading is either read itself or found gone;
/// when some vanished, reads the others again. `None` when all are gone.
pub fn read(pids: &[u32]) -> Option<TreeReading> {
    let mut pids = pids.to_vec();
    for attempt in 1..=READ_ATTEMPTS {
        let readings: Vec<ProcessReading> = pids.iter().map(|&p| read_process(p)).collect();
        if let Some(total) = sum(&readings) {
            return Some(total);
        }
        let mut live = readings.iter().map(|r| *r != ProcessReading::Gone);
        pids.retain(|_| live.next().unwrap_or(false));
        if attempt == READ_ATTEMPTS || pids.is_empty() {
            let kept: Vec<ProcessReading> = readings
                .into_iter()
                .filter(|r| *r != ProcessReading::Gone)
                .collect();
            return sum(&kept).filter(|_| !pids.is_empty());
        }
    }
    None
}

/// Reads one process's cumulative figures.
fn read_process(pid: u32) -> ProcessReading {
    // The stat file is readable by all: failing to read it, the process is gone.
    let Some(stat) = crate::procfs::pid::stat(pid) else {
        return ProcessReading::Gone;
    };
    let read_bytes = match crate::procfs::pid::io(pid) {
        Ok(text) => crate::procfs::pid::parse_read_bytes(&text),
        Err(e) if gone(&e) => return ProcessReading::Gone,
        Err(_) => None,
    };
    ProcessReading::Read {
        read_bytes,
        major_faults: stat.majflt + stat.cmajflt,
    }
}

/// The process no longer exists (reaped between the scan and the read).
fn gone(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

/// One figure of the tree over a window: its sum at the first reading and
/// at the last (a reading with no process left is not taken, so a server
/// gone at the end keeps its last).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeTotal {
    first: Option<u64>,
    last: Option<u64>,
}

impl TreeTotal {
    /// Takes one reading of the sum.
    pub fn observe(&mut self, sum: u64) {
        self.first.get_or_insert(sum);
        self.last = Some(sum);
    }

    /// The growth over the window; `None` without a reading. A process
    /// orphaned out of the tree takes its figures with it, so the sum may
    /// shrink: never below 0.
    pub fn total(&self) -> Option<u64> {
        Some(self.last?.saturating_sub(self.first?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(read_bytes: u64, major_faults: u64) -> ProcessReading {
        ProcessReading::Read {
            read_bytes: Some(read_bytes),
            major_faults,
        }
    }

    #[test]
    fn a_child_reaped_in_the_window_counts_its_window_reads_once() {
        // At the start, the parent has read 100 and its child 30 (before
        // the window). The child reads 15 more, exits and is reaped: its 45
        // move into the parent's figure. The window read 15.
        let mut reads = TreeTotal::default();
        let mut faults = TreeTotal::default();
        let start = sum(&[read(100, 4), read(30, 2)]).unwrap();
        reads.observe(start.read_bytes.unwrap());
        faults.observe(start.major_faults);
        let end = sum(&[read(145, 7)]).unwrap();
        reads.observe(end.read_bytes.unwrap());
        faults.observe(end.major_faults);
        assert_eq!(reads.total(), Some(15));
        assert_eq!(faults.total(), Some(1));
    }

    #[test]
    fn a_process_born_in_the_window_counts_whole() {
        let mut t = TreeTotal::default();
        t.observe(sum(&[read(100, 0)]).unwrap().read_bytes.unwrap());
        t.observe(
            sum(&[read(130, 0), read(5, 0)])
                .unwrap()
                .read_bytes
                .unwrap(),
        );
        assert_eq!(t.total(), Some(35));
    }

    #[test]
    fn a_vanished_process_asks_for_another_reading_and_a_refused_file_is_unreadable() {
        assert_eq!(sum(&[read(1, 0), ProcessReading::Gone]), None);
        let refused = ProcessReading::Read {
            read_bytes: None,
            major_faults: 3,
        };
        assert_eq!(
            sum(&[read(1, 1), refused]),
            Some(TreeReading {
                read_bytes: None,
                major_faults: 4
            })
        );
    }

    #[test]
    fn no_reading_is_no_total_and_a_shrinking_sum_is_zero() {
        assert_eq!(TreeTotal::default().total(), None);
        let mut t = TreeTotal::default();
        t.observe(50);
        t.observe(20);
        assert_eq!(t.total(), Some(0));
    }

    #[test]
    fn this_process_reads_and_a_reaped_pid_is_gone() {
        let me = std::process::id();
        assert!(matches!(read_process(me), ProcessReading::Read { .. }));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(read_process(pid), ProcessReading::Gone);
        // The reaped child is skipped; this process is read.
        let r = super::read(&[me, pid]).unwrap();
        assert!(r.read_bytes.is_some());
    }
}
