//! `energy_command`: a shell command (`sh -c`) run once per sample that
//! prints the power now. Its output is read by [`parse_watts`]: the first
//! number followed by `W` or `Watts` (any case, with or without a space:
//! ipmitool's `Instantaneous power reading:   220 Watts` gives 220), or
//! else an output that is one number. It may run [`COMMAND_TIMEOUT`];
//! then its process group is killed and the reading is missing.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run of the command may take.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

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
}

/// Runs `cmd` once and reads the watts it prints.
pub fn watts(cmd: &str) -> Result<f64, CommandError> {
    watts_within(cmd, COMMAND_TIMEOUT)
}

/// As [`watts`], killing the command after `limit`.
fn watts_within(cmd: &str, limit: Duration) -> Result<f64, CommandError> {
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
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                // SAFETY: kill has no memory preconditions; the group is the
                // child's own (process_group(0)), which it has not been
                // reaped from yet, so the ID is still ours.
                unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
                let _ = child.wait();
                return Err(CommandError::Timeout {
                    cmd: cmd.into(),
                    limit,
                });
            }
        }
    };
    let text = |pipe: Option<&mut dyn Read>| {
        let mut s = String::new();
        if let Some(p) = pipe {
            let _ = p.read_to_string(&mut s);
        }
        s
    };
    let out = text(child.stdout.as_mut().map(|p| p as &mut dyn Read));
    if !status.success() {
        let err = text(child.stderr.as_mut().map(|p| p as &mut dyn Read));
        return Err(CommandError::Failed {
            cmd: cmd.into(),
            status,
            stderr: err.trim().chars().take(200).collect(),
        });
    }
    parse_watts(&out).ok_or_else(|| CommandError::NoWatts {
        cmd: cmd.into(),
        output: out.trim().chars().take(200).collect(),
    })
}

/// The watts in a meter's output: the first number followed by `W` or
/// `Watts` (any case, attached or after a space), else an output that is
/// one number; `None` otherwise (and for negative or non-finite numbers).
pub fn parse_watts(text: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let number = |w: &str| w.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
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
            .find_map(|u| lower.strip_suffix(u).and_then(&number));
        if attached.is_some() {
            return attached;
        }
    }
    match words.as_slice() {
        [one] => number(one),
        _ => None,
    }
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
        let e = watts_within(&cmd, Duration::from_millis(300)).unwrap_err();
        assert!(matches!(e, CommandError::Timeout { .. }), "{e}");
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The sleep was in the killed group: gone, or a zombie until init
        // reaps it (SIGKILL lands when it is next scheduled: wait for that).
        let dead = || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.is_empty() || stat.contains(") Z ")
        };
        let until = Instant::now() + Duration::from_secs(20);
        while !dead() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(dead(), "the command's child {pid} outlived the kill");
    }
}
