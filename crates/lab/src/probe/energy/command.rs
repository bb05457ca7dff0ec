//! `energy_command`: a shell command (`sh -c`) run once per reading that
//! prints the power now. Its output is read by [`parse_watts`]: the first
//! number followed by `W` or `Watts` (any case, with or without a space:
//! ipmitool's `Instantaneous power reading:   220 Watts` gives 220), or
//! else an output that is one number.
//!
//! Reading stops at the first such number, or when the shell exits (what
//! it printed by then is read without waiting for the pipe to close, so a
//! child left holding stdout holds nothing), after [`MAX_OUTPUT`] bytes,
//! after [`COMMAND_TIMEOUT`], or when the caller stops it; then the
//! command's process group is killed. A reading outside
//! ([`MIN_WATTS`], [`MAX_WATTS`]) is refused and named, never stored.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one run of the command may take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);
/// The most output read before a number: more is refused (a meter that
/// prints that much before its reading is not one).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// A reading must be above this (a running machine draws power).
pub const MIN_WATTS: f64 = 0.0;
/// A reading must be below this: 100 kW is a full rack; anything above is
/// a meter's garbage (`1e308 W` made the window's joules infinite).
pub const MAX_WATTS: f64 = 100_000.0;
/// How often the reading loop looks at the clock, the stop flag and the
/// shell's exit while the command prints nothing.
const POLL: Duration = Duration::from_millis(10);

/// Why a run of the command gave no watts.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// It could not be started.
    #[error("energy_command `{cmd}` could not start: {source}")]
    Spawn {
        /// The command.
        cmd: String,
        /// The OS's reason.
        source: std::io::Error,
    },
    /// It ran longer than [`COMMAND_TIMEOUT`] and was killed.
    #[error("energy_command `{cmd}` took longer than {limit:?} and was killed")]
    Timeout {
        /// The command.
        cmd: String,
        /// How long it was allowed.
        limit: Duration,
    },
    /// The caller stopped it (the window ended) before it gave a reading.
    #[error("energy_command `{cmd}` was still running after {after:.1?} when the window ended, and was killed")]
    Stopped {
        /// The command.
        cmd: String,
        /// How long it had run.
        after: Duration,
    },
    /// It printed more than [`MAX_OUTPUT`] bytes without a reading.
    #[error(
        "energy_command `{cmd}` printed more than {limit} bytes without a reading, and was killed"
    )]
    TooMuchOutput {
        /// The command.
        cmd: String,
        /// The limit, [`MAX_OUTPUT`].
        limit: usize,
    },
    /// It exited unsuccessfully.
    #[error("energy_command `{cmd}` failed ({status}): {stderr}")]
    Failed {
        /// The command.
        cmd: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The start of its standard error.
        stderr: String,
    },
    /// Its output holds no wattage.
    #[error("energy_command `{cmd}` printed no watts (expected e.g. \"220 Watts\" or \"220\"): {output:?}")]
    NoWatts {
        /// The command.
        cmd: String,
        /// The start of what it printed.
        output: String,
    },
    /// It printed a number no meter reads.
    #[error("energy_command `{cmd}` printed {watts} W, not a plausible reading (between {MIN_WATTS} and {MAX_WATTS} W, both excluded); refused")]
    Implausible {
        /// The command.
        cmd: String,
        /// What it printed.
        watts: f64,
    },
}

/// Runs `cmd` once and reads the watts it prints.
#[cfg(test)]
fn watts(cmd: &str) -> Result<f64, CommandError> {
    watts_until(cmd, COMMAND_TIMEOUT, &AtomicBool::new(false))
}

/// As [`watts`], killing the command after `limit` or once `stop` is set.
pub(crate) fn watts_until(
    cmd: &str,
    limit: Duration,
    stop: &AtomicBool,
) -> Result<f64, CommandError> {
    let started = Instant::now();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| CommandError::Spawn {
            cmd: cmd.into(),
            source,
        })?;
    let result = read_reading(&mut child, started + limit, stop);
    kill_group(&mut child);
    let err = |e: Ended| match e {
        Ended::Timeout => CommandError::Timeout {
            cmd: cmd.into(),
            limit,
        },
        Ended::Stopped => CommandError::Stopped {
            cmd: cmd.into(),
            after: started.elapsed(),
        },
        Ended::TooMuch => CommandError::TooMuchOutput {
            cmd: cmd.into(),
            limit: MAX_OUTPUT,
        },
        Ended::Failed(status, stderr) => CommandError::Failed {
            cmd: cmd.into(),
            status,
            stderr,
        },
        Ended::NoWatts(out) => CommandError::NoWatts {
            cmd: cmd.into(),
            output: out.trim().chars().take(200).collect(),
        },
    };
    let w = result.map_err(err)?;
    plausible(w).ok_or(CommandError::Implausible {
        cmd: cmd.into(),
        watts: w,
    })
}

/// `w` when a meter could read it: finite, in ([`MIN_WATTS`], [`MAX_WATTS`]).
pub(crate) fn plausible(w: f64) -> Option<f64> {
    (w.is_finite() && w > MIN_WATTS && w < MAX_WATTS).then_some(w)
}

/// How a reading ended without a number.
enum Ended {
    Timeout,
    Stopped,
    TooMuch,
    Failed(std::process::ExitStatus, String),
    NoWatts(String),
}

/// Reads the command's output until the first reading, its exit, the
/// deadline, `stop`, or [`MAX_OUTPUT`]; never waits for the pipes to close.
fn read_reading(child: &mut Child, deadline: Instant, stop: &AtomicBool) -> Result<f64, Ended> {
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(Ended::NoWatts(String::new()));
    };
    let mut stdout = Pipe::new(out);
    let mut stderr = Pipe::new(err);
    loop {
        let open: Vec<i32> = [&stdout.fd, &stderr.fd]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        wait_readable(&open, POLL);
        stdout.drain();
        stderr.drain();
        if stdout.text.len() > MAX_OUTPUT {
            return Err(Ended::TooMuch);
        }
        if let Some(w) = watts_with_unit(complete_lines(&stdout.text)) {
            return Ok(w);
        }
        if let Ok(Some(status)) = child.try_wait() {
            // What the shell printed is in the pipe by now; a child of it
            // that still holds the pipe is not waited for.
            stdout.drain();
            stderr.drain();
            if stdout.text.len() > MAX_OUTPUT {
                return Err(Ended::TooMuch);
            }
            let text = String::from_utf8_lossy(&stdout.text).into_owned();
            if !status.success() {
                let e = String::from_utf8_lossy(&stderr.text);
                return Err(Ended::Failed(status, e.trim().chars().take(200).collect()));
            }
            return raw_watts(&text).ok_or(Ended::NoWatts(text));
        }
        if stop.load(Ordering::Relaxed) {
            return Err(Ended::Stopped);
        }
        if Instant::now() >= deadline {
            return Err(Ended::Timeout);
        }
    }
}

/// One of the command's pipes, read without blocking.
struct Pipe<R: Read + AsRawFd> {
    reader: R,
    /// The descriptor, `None` once it reached EOF.
    fd: Option<i32>,
    /// What was read (stderr: only its first [`MAX_OUTPUT`] bytes kept).
    text: Vec<u8>,
}

impl<R: Read + AsRawFd> Pipe<R> {
    fn new(reader: R) -> Self {
        let fd = reader.as_raw_fd();
        // SAFETY: fcntl on a descriptor this process owns (the child's
        // pipe, open while `reader` lives); no pointers.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Pipe {
            reader,
            fd: Some(fd),
            text: Vec::new(),
        }
    }

    /// Reads what is there now (up to one byte past [`MAX_OUTPUT`]).
    fn drain(&mut self) {
        let mut buf = [0u8; 8192];
        while self.text.len() <= MAX_OUTPUT {
            match self.reader.read(&mut buf) {
                Ok(0) => {
                    self.fd = None;
                    return;
                }
                Ok(n) => self.text.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return, // nothing more now (EAGAIN), or an error
            }
        }
    }
}

/// Waits until one of `fds` is readable (or closed), at most `timeout`.
fn wait_readable(fds: &[i32], timeout: Duration) {
    if fds.is_empty() {
        std::thread::sleep(timeout);
        return;
    }
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: the pointer and length describe `pfds`, alive for the call.
    unsafe {
        libc::poll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            timeout.as_millis() as i32,
        )
    };
}

/// Kills the command's process group (the shell and every child it left)
/// and reaps the shell.
fn kill_group(child: &mut Child) {
    // SAFETY: kill has no memory preconditions; the group is the child's
    // own (process_group(0)) and the shell is not reaped yet, so the ID is
    // still ours.
    unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
    let _ = child.wait();
}

/// The text up to its last newline: a number there is whole.
fn complete_lines(bytes: &[u8]) -> &str {
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    std::str::from_utf8(&bytes[..end]).unwrap_or("")
}

/// The watts in a meter's output: the first number followed by `W` or
/// `Watts` (any case, attached or after a space), else an output that is
/// one number; `None` otherwise, and for a number no meter reads (see
/// `MIN_WATTS`, `MAX_WATTS`: 0 and 100 kW, both excluded).
pub fn parse_watts(text: &str) -> Option<f64> {
    raw_watts(text).and_then(plausible)
}

/// As [`parse_watts`], without the plausibility check.
fn raw_watts(text: &str) -> Option<f64> {
    watts_with_unit(text).or_else(|| match text.split_whitespace().collect::<Vec<_>>()[..] {
        [one] => number(one),
        _ => None,
    })
}

fn number(w: &str) -> Option<f64> {
    w.parse::<f64>().ok().filter(|v| !v.is_nan())
}

/// The first number followed by a watt unit.
fn watts_with_unit(text: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let is_unit = |w: &str| {
        let w = w.trim_end_matches(['.', ',', ';']).to_ascii_lowercase();
        w == "w" || w == "watt" || w == "watts"
    };
    for (i, w) in words.iter().enumerate() {
        if let Some(v) = number(w).filter(|_| words.get(i + 1).is_some_and(|u| is_unit(u))) {
            return Some(v);
        }
        let lower = w.to_ascii_lowercase();
        let attached = ["watts", "watt", "w"]
            .iter()
            .find_map(|u| lower.strip_suffix(u).and_then(number));
        if attached.is_some() {
            return attached;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipmitool_and_plain_outputs() {
        let ipmi = "\n    Instantaneous power reading:                   220 Watts\n    \
            Minimum during sampling period:                 88 Watts\n    \
            IPMI timestamp:                           Thu Nov 26 00:00:00 2026\n    \
            Sampling period:                          00000001 Seconds.\n";
        assert_eq!(parse_watts(ipmi), Some(220.0));
        assert_eq!(parse_watts("137.5\n"), Some(137.5));
        assert_eq!(parse_watts("power: 42.5W\n"), Some(42.5));
        assert_eq!(parse_watts("Power 12 w."), Some(12.0));
        assert_eq!(parse_watts("12 34"), None, "two bare numbers: which?");
        assert_eq!(parse_watts("Sampling period: 00000001 Seconds."), None);
        assert_eq!(parse_watts(""), None);
        assert_eq!(parse_watts("-5 W"), None);
    }

    #[test]
    fn a_command_prints_its_watts_and_failures_say_why() {
        assert_eq!(
            watts("echo '  Instantaneous power reading: 99 Watts'").unwrap(),
            99.0
        );
        let e = watts("echo hello").unwrap_err();
        assert!(matches!(e, CommandError::NoWatts { .. }), "{e}");
        let e = watts("echo broken >&2; exit 2").unwrap_err();
        assert!(e.to_string().contains("broken"), "{e}");
    }

    #[test]
    fn a_slow_command_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let cmd = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let e = watts_until(&cmd, Duration::from_millis(300), &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(e, CommandError::Timeout { .. }), "{e}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The sleep was in the killed group: gone, or a zombie until init
        // reaps it (SIGKILL lands when it is next scheduled: wait for that).
        let dead = || crate::procfs::pid::has_exited(pid as u32);
        let until = Instant::now() + Duration::from_secs(20);
        while !dead() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(dead(), "the command's child {pid} outlived the kill");
    }

    /// The command's child `pid` is gone (or a zombie until init reaps it).
    fn gone(pid_file: &std::path::Path) -> bool {
        let pid = std::fs::read_to_string(pid_file).unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if crate::procfs::pid::has_exited(pid.trim().parse().unwrap()) {
                return true;
            }
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_child_holding_stdout_holds_neither_the_reading_nor_the_group() {
        // Issue 36: `echo 100 W; sleep 20 &` held the probe for 20 s (a
        // 40 s window). The reading is bounded by its limit, whatever the
        // children do, and they are killed with the group.
        let dir = tempfile::tempdir().unwrap();
        for (cmd, want) in [
            ("sleep 60 & echo $! > {pid}; echo 100 W", 100.0),
            ("sleep 60 & echo $! > {pid}; echo 42", 42.0),
        ] {
            let pid = dir.path().join("pid");
            let cmd = cmd.replace("{pid}", &pid.display().to_string());
            let limit = Duration::from_secs(4);
            let t = Instant::now();
            let w = watts_until(&cmd, limit, &AtomicBool::new(false));
            assert!(t.elapsed() < limit, "{cmd}: took {:?}", t.elapsed());
            assert_eq!(w.unwrap(), want, "{cmd}");
            assert!(gone(&pid), "{cmd}: its child outlived the reading");
        }
    }

    #[test]
    fn output_is_bounded_and_read_until_the_first_reading() {
        // A reading first, then endless output: read, not a timeout.
        assert_eq!(watts("echo 7 W; yes filler").unwrap(), 7.0);
        // More than MAX_OUTPUT before any reading: refused as such (it was
        // reported as "took longer than 5s").
        let e = watts("head -c 100000 /dev/zero | tr '\\0' x; echo; echo 9 W").unwrap_err();
        assert!(matches!(e, CommandError::TooMuchOutput { .. }), "{e}");
        assert!(e.to_string().contains("65536 bytes"), "{e}");
    }

    #[test]
    fn an_implausible_reading_is_refused_and_named() {
        // `1e308 W` made the window's joules infinite (stored as null, and
        // the trial's whole probe summary no longer loaded); 1e300 passed.
        for text in ["1e308 W", "1e300 W", "inf W", "0 W", "-5 W", "250000 W"] {
            let e = watts(&format!("echo '{text}'")).unwrap_err();
            assert!(matches!(e, CommandError::Implausible { .. }), "{text}: {e}");
            assert!(e.to_string().contains("not a plausible reading"), "{e}");
            assert_eq!(parse_watts(text), None, "{text}");
        }
        assert_eq!(watts("echo '99999 W'").unwrap(), 99999.0);
    }

    #[test]
    fn a_reading_is_cut_off_when_asked() {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let setter = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            setter.store(true, Ordering::Relaxed);
        });
        let e = watts_until("sleep 60", COMMAND_TIMEOUT, &stop).unwrap_err();
        t.join().unwrap();
        assert!(matches!(e, CommandError::Stopped { .. }), "{e}");
    }
}
