//! The reaper: one small process per scalelab, forked on the first
//! registration, that removes what scalelab owns when scalelab dies.
//!
//! scalelab holds the write end of a pipe (close-on-exec, so no server
//! inherits it; the watchdogs close it after their fork). Each registration
//! is one record written in one `write` (under `PIPE_BUF`, so records of
//! several threads never interleave): `+` or `-`, the [`Removal`] letter,
//! then NUL-terminated words and one more NUL. The reaper keeps the live
//! records in a table allocated before the fork. When `read` returns
//! end-of-file, scalelab is gone, `kill -9` included: the reaper runs the
//! commands (`ssh -O exit`), writes back the settings `run --tune` changed
//! (each record a file and its old value) and sends `SIGCONT` to the
//! processes it paused, removes the directories, then the cgroups,
//! retrying those for up to 10 s while the servers' watchdogs empty them,
//! and exits. After a normal exit the table is empty and it exits at once.

use super::raw;
use super::Removal;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::Mutex;

/// Whether a record adds an entry or removes one.
#[derive(Clone, Copy)]
pub(super) enum Op {
    Add,
    Remove,
}

/// The longest record (bytes): a few paths of a few hundred bytes.
const RECORD_MAX: usize = 1024;
/// Live entries the reaper keeps; more are left to the next run's reclaim.
const SLOTS: usize = 256;
/// Words of a command (argv).
const ARGS_MAX: usize = 32;

struct Running {
    pid: libc::pid_t,
    pipe: OwnedFd,
}

static REAPER: Mutex<Option<Running>> = Mutex::new(None);

fn letter(r: Removal) -> u8 {
    match r {
        Removal::Tree => b'T',
        Removal::Cgroup => b'C',
        Removal::Command => b'X',
        Removal::Restore => b'W',
        Removal::Resume => b'K',
    }
}

/// Encodes one record, or says why it cannot be sent.
fn encode(op: Op, removal: Removal, words: &[&OsStr]) -> io::Result<Vec<u8>> {
    let mut rec = vec![
        match op {
            Op::Add => b'+',
            Op::Remove => b'-',
        },
        letter(removal),
    ];
    for w in words {
        let bytes = w.as_bytes();
        if bytes.is_empty() || bytes.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an empty word or a NUL byte",
            ));
        }
        rec.extend_from_slice(bytes);
        rec.push(0);
    }
    rec.push(0);
    if words.is_empty() || rec.len() > RECORD_MAX || words.len() >= ARGS_MAX {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a record of {} bytes, over {RECORD_MAX}", rec.len()),
        ));
    }
    Ok(rec)
}

/// Sends one record, forking the reaper first if there is none yet.
pub(super) fn send(op: Op, removal: Removal, words: &[&OsStr]) -> io::Result<()> {
    let rec = encode(op, removal, words)?;
    let mut guard = REAPER.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        if let Op::Remove = op {
            return Ok(()); // nothing was registered
        }
        *guard = Some(start()?);
    }
    let fd = guard.as_ref().map_or(-1, |r| r.pipe.as_raw_fd());
    // SAFETY: one write of a buffer we own to a pipe we own.
    let n = unsafe { libc::write(fd, rec.as_ptr().cast(), rec.len()) };
    if n != rec.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The reaper's PID, if one runs.
pub(super) fn pid() -> Option<u32> {
    let guard = REAPER.lock().unwrap_or_else(|p| p.into_inner());
    guard.as_ref().map(|r| r.pid as u32)
}

/// Forks the reaper.
fn start() -> io::Result<Running> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the two-element array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned here.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Allocated before the fork: the child may not allocate.
    let mut table = Table {
        records: vec![0u8; SLOTS * RECORD_MAX],
        lens: vec![0usize; SLOTS],
    };
    let mut pending = vec![0u8; RECORD_MAX + 1];
    // SAFETY: the child runs only `reap`, which is async-signal-safe.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => reap(read_end.as_raw_fd(), &mut table, &mut pending),
        pid => Ok(Running {
            pid,
            pipe: write_end,
        }),
    }
}

/// The live records, in memory allocated before the fork.
struct Table {
    /// `SLOTS` slots of `RECORD_MAX` bytes: a record without its `+`/`-`.
    records: Vec<u8>,
    /// Each slot's record length; 0: free.
    lens: Vec<usize>,
}

impl Table {
    fn slot(&self, i: usize) -> &[u8] {
        &self.records[i * RECORD_MAX..i * RECORD_MAX + self.lens[i]]
    }

    /// Applies one complete record (`op`, then the entry).
    fn apply(&mut self, op: u8, entry: &[u8]) {
        if op == b'-' {
            if let Some(i) = (0..SLOTS).find(|&i| self.slot(i) == entry) {
                self.lens[i] = 0;
            }
        } else if let Some(i) = (0..SLOTS).find(|&i| self.lens[i] == 0) {
            self.records[i * RECORD_MAX..i * RECORD_MAX + entry.len()].copy_from_slice(entry);
            self.lens[i] = entry.len();
        }
    }

    /// Reads records from descriptor 3 until end-of-file, each into
    /// `pending` (`RECORD_MAX + 1` bytes) first.
    unsafe fn read_all(&mut self, pending: &mut [u8]) {
        let mut buf = [0u8; 4096];
        let (mut len, mut prev) = (0usize, 1u8);
        loop {
            let n = raw::read_fd3(&mut buf);
            if n <= 0 {
                return;
            }
            for &b in &buf[..n as usize] {
                if len < pending.len() {
                    pending[len] = b;
                }
                len += 1;
                // A record ends with an empty word: two NULs in a row. One
                // too long for `pending` (never sent) is skipped.
                let ended = b == 0 && prev == 0 && len >= 4;
                prev = b;
                if ended {
                    if len <= pending.len() {
                        self.apply(pending[0], &pending[1..len]);
                    }
                    len = 0;
                    prev = 1;
                }
            }
        }
    }

    /// Every live entry of `kind`, as (slot) indices.
    fn of(&self, kind: Removal) -> impl Iterator<Item = usize> + '_ {
        (0..SLOTS).filter(move |&i| self.lens[i] > 0 && self.slot(i)[0] == letter(kind))
    }
}

/// The reaper's whole life, in the forked child. Never returns.
fn reap(read_fd: libc::c_int, table: &mut Table, pending: &mut [u8]) -> ! {
    // SAFETY: raw system calls only, on memory prepared before the fork.
    unsafe {
        raw::detach(read_fd);
        table.read_all(pending);
        for i in table.of(Removal::Command).collect::<Slots>().iter() {
            run_command(&table.slot(i)[1..]);
        }
        for i in table.of(Removal::Restore).collect::<Slots>().iter() {
            write_back(&table.slot(i)[1..]);
        }
        for i in table.of(Removal::Resume).collect::<Slots>().iter() {
            if let Some(pid) = decimal(first_word(&table.slot(i)[1..]).to_bytes()) {
                libc::kill(pid, libc::SIGCONT);
            }
        }
        for i in table.of(Removal::Tree).collect::<Slots>().iter() {
            raw::remove_tree(first_word(&table.slot(i)[1..]));
        }
        remove_cgroups(table);
        libc::_exit(0)
    }
}

/// Slot indices on the stack (collecting them allocates nothing).
struct Slots {
    list: [usize; SLOTS],
    len: usize,
}

impl FromIterator<usize> for Slots {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut s = Slots {
            list: [0; SLOTS],
            len: 0,
        };
        for i in iter {
            s.list[s.len] = i;
            s.len += 1;
        }
        s
    }
}

impl Slots {
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.list[..self.len].iter().copied()
    }
}

/// The first NUL-terminated word of `words`.
fn first_word(words: &[u8]) -> &std::ffi::CStr {
    std::ffi::CStr::from_bytes_until_nul(words).unwrap_or(c"")
}

/// Writes the second word of `words` into the file named by the first
/// (`open(O_WRONLY|O_TRUNC)`, one `write`, as `echo VALUE > FILE` does).
unsafe fn write_back(words: &[u8]) {
    let path = first_word(words);
    let rest = &words[path.to_bytes().len() + 1..];
    let value = first_word(rest).to_bytes();
    let fd = libc::open(
        path.as_ptr(),
        libc::O_WRONLY | libc::O_TRUNC | libc::O_CLOEXEC,
    );
    if fd >= 0 {
        libc::write(fd, value.as_ptr().cast(), value.len());
        libc::close(fd);
    }
}

/// A positive decimal PID, or `None`.
fn decimal(digits: &[u8]) -> Option<libc::pid_t> {
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits
        .iter()
        .fold(0 as libc::pid_t, |n, d| n * 10 + (d - b'0') as libc::pid_t);
    (n > 0).then_some(n)
}

/// `rmdir`s every registered cgroup, retrying those still busy (their
/// processes are being killed by their watchdog) for up to 10 s.
unsafe fn remove_cgroups(table: &Table) {
    for _ in 0..500 {
        let mut busy = false;
        for i in table.of(Removal::Cgroup).collect::<Slots>().iter() {
            let dir = first_word(&table.slot(i)[1..]);
            if libc::rmdir(dir.as_ptr()) != 0 && *libc::__errno_location() == libc::EBUSY {
                busy = true;
            }
        }
        if !busy {
            return;
        }
        raw::sleep_ms(20);
    }
}

/// Runs the command whose NUL-separated argv is `words` (absolute program
/// path first) and waits up to 5 s for it, then kills it.
unsafe fn run_command(words: &[u8]) {
    let mut argv = [std::ptr::null::<libc::c_char>(); ARGS_MAX + 1];
    let mut n = 0;
    let mut start = 0;
    for (i, &b) in words.iter().enumerate() {
        if b == 0 {
            if i == start || n == ARGS_MAX {
                break;
            }
            argv[n] = words[start..].as_ptr().cast();
            n += 1;
            start = i + 1;
        }
    }
    if n == 0 {
        return;
    }
    let pid = libc::fork();
    if pid == 0 {
        libc::execv(argv[0], argv.as_ptr());
        libc::_exit(127);
    }
    if pid < 0 {
        return;
    }
    let mut status = 0;
    for _ in 0..250 {
        if libc::waitpid(pid, &mut status, libc::WNOHANG) != 0 {
            return;
        }
        raw::sleep_ms(20);
    }
    libc::kill(pid, libc::SIGKILL);
    libc::waitpid(pid, &mut status, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        Table {
            records: vec![0u8; SLOTS * RECORD_MAX],
            lens: vec![0usize; SLOTS],
        }
    }

    #[test]
    fn records_add_and_remove_entries() {
        let mut t = table();
        let a = encode(Op::Add, Removal::Tree, &[OsStr::new("/tmp/a")]).unwrap();
        let b = encode(Op::Add, Removal::Cgroup, &[OsStr::new("/sys/x")]).unwrap();
        let gone = encode(Op::Remove, Removal::Tree, &[OsStr::new("/tmp/a")]).unwrap();
        for rec in [&a, &b, &gone] {
            t.apply(rec[0], &rec[1..]);
        }
        assert_eq!(t.of(Removal::Tree).count(), 0);
        let cg: Vec<usize> = t.of(Removal::Cgroup).collect();
        assert_eq!(first_word(&t.slot(cg[0])[1..]), c"/sys/x");
    }

    #[test]
    fn a_restore_writes_the_old_value_back_and_a_pid_parses() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("scaling_governor");
        std::fs::write(&file, "performance\n").unwrap();
        let rec = encode(
            Op::Add,
            Removal::Restore,
            &[file.as_os_str(), OsStr::new("powersave")],
        )
        .unwrap();
        // SAFETY: raw calls on a record we own.
        unsafe { write_back(&rec[2..]) };
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "powersave");
        assert_eq!(decimal(b"4242"), Some(4242));
        for bad in [&b""[..], b"0", b"12a", b"-1", b"1234567890"] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn records_that_cannot_be_sent_are_refused() {
        let long = "x".repeat(RECORD_MAX);
        assert!(encode(Op::Add, Removal::Tree, &[OsStr::new(&long)]).is_err());
        assert!(encode(Op::Add, Removal::Tree, &[]).is_err());
        assert!(encode(Op::Add, Removal::Tree, &[OsStr::new("")]).is_err());
    }
}
