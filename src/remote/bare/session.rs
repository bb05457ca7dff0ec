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
    /// there with `/bin/sh`; the script removes its own file.
    pub fn start_remote(
        ssh: &Ssh,
        host: &Host,
        dir: &str,
        name: &str,
        script: &str,
        what: String,
    ) -> Result<Session, String> {
        let file = format!("{dir}/{name}");
        let write = format!(
            "umask 077; mkdir -p {} && cat > {}",
            shell_quote(dir),
            shell_quote(&file)
        );
        ssh.run(
            host,
            &write,
            Some(script.as_bytes()),
            Duration::from_secs(20),
        )
        .map_err(|e| e.to_string())?;
        let run = format!("exec /bin/sh {}", shell_quote(&file));
        Session::spawn(ssh.command(host, &run), what)
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
