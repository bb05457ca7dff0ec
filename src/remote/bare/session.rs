//! One long-lived shell on a host without an agent: a script written to a
//! file there over ssh, then run by `/bin/sh` (whatever the login shell:
//! root's is csh on FreeBSD) with its stdin held open by this process.
//! Lines it prints arrive on a channel; closing its stdin (dropping the
//! session, or this process dying) is its signal to clean up and exit.

use crate::remote::ssh::{shell_quote, Ssh};
use crate::remote::Host;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long writing a script on its host may take.
const WRITE_LIMIT: Duration = Duration::from_secs(20);

/// Why a session could not be started or asked.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The host's file system has no room for the script or its files.
    #[error("{0}")]
    DiskFull(String),
    /// The ssh session failed, or the shell did not answer.
    #[error("{0}")]
    Ssh(String),
}

impl From<String> for SessionError {
    fn from(e: String) -> SessionError {
        SessionError::Ssh(e)
    }
}

impl From<&str> for SessionError {
    fn from(e: &str) -> SessionError {
        SessionError::Ssh(e.to_string())
    }
}

/// The line a script prints before it stops on a full disk: `#full N`,
/// N the bytes free on the file system of its directory.
pub const FULL_MARK: &str = "#full ";

/// The message of a full disk on `dir`'s file system, `free` bytes free.
pub fn disk_full(dir: &str, free: &str) -> String {
    format!("the host's disk is full: {dir} ({free} bytes free); free space there or set SCALELAB_WORKDIR to a directory with room")
}

/// The error of a script whose start printed `#error e` after `lines`: a
/// full disk when a `#full N` line came first.
pub fn written(what: &str, dir: &str, lines: &[String], e: &str) -> SessionError {
    match lines.iter().find_map(|l| l.strip_prefix(FULL_MARK)) {
        Some(free) => SessionError::DiskFull(disk_full(dir, free.trim())),
        None => SessionError::Ssh(format!("{what}: {e}")),
    }
}

/// The `sh` that writes a script of `bytes` bytes from its stdin to
/// `file` (making `dir`) and then runs it on the rest of its stdin: `dd`
/// reads exactly those bytes, one at a time, so nothing of what follows
/// is taken. Until the script runs, a trap removes the file on any exit
/// (a cut connection ends `dd` early, or hangs it up). It prints `#ready`
/// once the file is whole, else `#error` (after [`FULL_MARK`] and the
/// bytes free when the disk is full). One line, quoted by the caller: the
/// login shell may be csh.
pub fn writer(dir: &str, file: &str, bytes: usize) -> String {
    let (d, f) = (shell_quote(dir), shell_quote(file));
    format!(
        "umask 077; d={d}; f={f}; mkdir -p \"$d\" || {{ echo \"#error cannot make $d\"; exit 1; }}; \
         trap 'rm -f \"$f\"' EXIT HUP INT TERM PIPE; \
         if e=$(dd of=\"$f\" bs=1 count={bytes} 2>&1) && [ \"$(wc -c <\"$f\" | tr -d ' ')\" -eq {bytes} ]; then :; else \
         case $e in *'No space left'*) echo \"{FULL_MARK}$(df -P -k \"$d\" | awk 'NR == 2 {{ print $4 * 1024 }}')\" ;; esac; \
         echo \"#error cannot write $f: $e\" | tr '\\n' ' '; echo; exit 1; fi; \
         trap - EXIT HUP INT TERM PIPE; echo '#ready'; exec /bin/sh \"$f\""
    )
}

/// A running script and the lines it printed so far.
pub struct Session {
    child: Child,
    stdin: Mutex<Option<ChildStdin>>,
    lines: Mutex<Receiver<String>>,
    /// What the session is, for messages (`nginx on root@198.18.0.11`).
    pub what: String,
}

impl Session {
    /// Writes `script` to `dir/name` on `host` (making `dir`) and runs it
    /// there with `/bin/sh`, in one ssh session ([`writer`]): the file
    /// exists only while that session's shell holds it (a cut connection
    /// while it is written removes it; the script removes its own file as
    /// it starts). A full disk there is its own error.
    pub fn start_remote(
        ssh: &Ssh,
        host: &Host,
        dir: &str,
        name: &str,
        script: &str,
        what: String,
    ) -> Result<Session, SessionError> {
        let file = format!("{dir}/{name}");
        let run = format!(
            "/bin/sh -c {}",
            shell_quote(&writer(dir, &file, script.len()))
        );
        let session = Session::spawn(ssh.command(host, &run), what).map_err(SessionError::Ssh)?;
        {
            let mut guard = crate::remote::lock(&session.stdin);
            let stdin = guard.as_mut().ok_or("the session is closed")?;
            stdin
                .write_all(script.as_bytes())
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("{}: cannot send the script: {e}", session.what))?;
        }
        let lines = session.until(&["#ready", "#error"], WRITE_LIMIT)?;
        match lines.last().and_then(|l| l.strip_prefix("#error ")) {
            None => Ok(session),
            Some(e) => Err(written(&session.what, dir, &lines, e)),
        }
    }

    /// Runs `command` (a shell running a script) as a session.
    pub fn spawn(mut command: Command, what: String) -> Result<Session, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{what}: could not start the shell: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Session {
            child,
            stdin: Mutex::new(stdin),
            lines: Mutex::new(lines),
            what,
        })
    }

    /// Sends one command line.
    pub fn send(&self, line: &str) -> Result<(), String> {
        let mut guard = crate::remote::lock(&self.stdin);
        let stdin = guard.as_mut().ok_or("the session is closed")?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: the shell is gone: {e}", self.what))
    }

    /// The next line, waiting at most `limit`; `Ok(None)` on timeout.
    pub fn next_line(&self, limit: Duration) -> Result<Option<String>, String> {
        match crate::remote::lock(&self.lines).recv_timeout(limit) {
            Ok(l) => Ok(Some(l)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(format!("{}: the shell exited", self.what)),
        }
    }

    /// Every line up to the first that starts with one of `marks`, and
    /// that line, within `limit`.
    pub fn until(&self, marks: &[&str], limit: Duration) -> Result<Vec<String>, String> {
        let deadline = Instant::now() + limit;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_line(left)? {
                Some(l) => {
                    let done = marks.iter().any(|m| l.starts_with(m));
                    out.push(l);
                    if done {
                        return Ok(out);
                    }
                }
                None => {
                    return Err(format!(
                        "{}: no {} within {:.0}s",
                        self.what,
                        marks.join(" or "),
                        limit.as_secs_f64()
                    ))
                }
            }
        }
    }

    /// Closes its stdin (the script cleans up and exits) and waits for it
    /// at most `limit`, then kills the local end.
    pub fn close(&mut self, limit: Duration) {
        *crate::remote::lock(&self.stdin) = None;
        let deadline = Instant::now() + limit;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close(Duration::from_secs(15));
    }
}

/// The writer under the real shells: a whole script runs on the rest of
/// its stdin; a cut one is removed, never run.
#[cfg(test)]
mod writer_tests {
    use super::writer;
    use crate::remote::bare::script::shells::shellcheck;
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};

    const SCRIPT: &str = "rm -f \"$0\"\necho hi\nwhile IFS= read -r l; do echo \"got $l\"; done\n";

    /// Runs the writer with `shell`, feeding it `input`; what it printed.
    fn run(shell: &str, file: &std::path::Path, input: &[u8]) -> String {
        let dir = file.parent().unwrap().display().to_string();
        let line = writer(&dir, &file.display().to_string(), SCRIPT.len());
        let mut child = Command::new(shell)
            .args(["-c", &line])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        child.wait().unwrap();
        out
    }

    #[test]
    fn a_whole_script_runs_on_the_rest_of_stdin_and_a_cut_one_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let line = writer("/d ir", "/d ir/s.sh", 10);
        let said = shellcheck(&format!("#!/bin/sh\n{line}\n"), tmp.path());
        assert!(said.is_empty(), "{said}");
        for shell in crate::kinds::TEST_SHELLS.iter().copied() {
            let file = tmp.path().join(format!("w {shell}/s.sh"));
            let out = run(shell, &file, format!("{SCRIPT}x\ny\n").as_bytes());
            assert_eq!(out, "#ready\nhi\ngot x\ngot y\n", "{shell}");
            assert!(!file.exists(), "{shell}: the script removes itself");
            // The connection cut while the script is written: not run, gone.
            let out = run(shell, &file, &SCRIPT.as_bytes()[..20]);
            assert!(out.starts_with("#error cannot write "), "{shell}: {out}");
            assert!(!out.contains("#ready"), "{shell}: {out}");
            assert!(!file.exists(), "{shell}: a cut script is removed");
        }
    }
}
