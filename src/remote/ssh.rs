//! The ssh command line: the user's client, one multiplexed connection per
//! host, and remote commands bounded in time.
//!
//! The control sockets live in `$TMPDIR/scalelab-ssh-<PID>-<random>/`
//! ([`crate::owned::OwnedDir`]). Each host's master is stopped with
//! `ssh -O exit` (which ends its remote sshd session at once, rather than
//! after `ControlPersist`): by [`Ssh::close`], by the reaper when scalelab
//! is killed (the command is registered with it when the host is first
//! reached), and by [`reclaim_stale`] at the next run for the sockets in a
//! dead owner's directory, which it then removes.

use super::{Host, RemoteError};
use crate::owned::{self, OwnedDir, Removal};
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The start of a control directory's name; the owner's PID follows.
const CONTROL_DIR: &str = "scalelab-ssh-";

/// Environment variable that replaces `ssh` (with its options), as
/// `GIT_SSH_COMMAND` does for git.
pub const SSH_COMMAND_ENV: &str = "SCALELAB_SSH_COMMAND";

/// How to run ssh: the base command and the control socket directory that
/// lets every command to one host share one connection.
#[derive(Clone, Debug)]
pub struct Ssh {
    base: Vec<String>,
    control_dir: Arc<OwnedDir>,
    /// Hosts whose `ssh -O exit` the reaper holds.
    guarded: Arc<Mutex<HashSet<String>>>,
}

impl Ssh {
    /// `$SCALELAB_SSH_COMMAND` split into words, else `ssh`, with a fresh
    /// control directory (after stopping the masters of dead owners' ones).
    pub fn from_env() -> Result<Ssh, RemoteError> {
        let base = base_from_env()?;
        reclaim_stale_with(&base);
        let control_dir =
            OwnedDir::create(&std::env::temp_dir(), CONTROL_DIR).map_err(|e| RemoteError::Ssh {
                host: "(all)".into(),
                message: format!(
                    "cannot make a control directory in {}: {e}",
                    std::env::temp_dir().display()
                ),
            })?;
        Ok(Ssh {
            base,
            control_dir: Arc::new(control_dir),
            guarded: Arc::default(),
        })
    }

    /// The `ControlPath` option's value: one socket per connection.
    fn control_path(&self) -> String {
        format!("{}/%C", self.control_dir.path().display())
    }

    /// `ssh -O exit` for `host`'s master, as argv (the program first).
    fn exit_argv(&self, host: &Host) -> Vec<OsString> {
        exit_argv(&self.base, &self.control_path(), &host.destination)
    }

    /// Registers `host`'s `ssh -O exit` with the reaper, once.
    fn guard(&self, host: &Host) {
        let mut guarded = crate::remote::lock(&self.guarded);
        if guarded.insert(host.destination.clone()) {
            let argv = self.exit_argv(host);
            let words: Vec<&OsStr> = argv.iter().map(OsString::as_os_str).collect();
            owned::register(Removal::Command, &words);
        }
    }

    /// A `Command` that runs `remote` on `host` over the shared connection.
    /// ssh's own options come first so a user's `-o` in the base wins.
    pub fn command(&self, host: &Host, remote: &str) -> Command {
        self.guard(host);
        let mut c = Command::new(&self.base[0]);
        c.args(&self.base[1..]);
        c.args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "ServerAliveInterval=2",
            "-o",
            "ServerAliveCountMax=3",
            "-o",
            "ControlMaster=auto",
            "-o",
            "ControlPersist=30",
        ]);
        c.arg("-o")
            .arg(format!("ControlPath={}", self.control_path()));
        c.arg("--").arg(&host.destination).arg(remote);
        c
    }

    /// Runs `remote` on `host` with `input` on its stdin, and returns its
    /// stdout. Fails with ssh's own error text when the command fails, and
    /// kills ssh after `limit`.
    pub fn run(
        &self,
        host: &Host,
        remote: &str,
        input: Option<&[u8]>,
        limit: Duration,
    ) -> Result<String, RemoteError> {
        let mut child = self
            .command(host, remote)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RemoteError::Ssh {
                host: host.to_string(),
                message: format!("could not run `{}`: {e}", self.base[0]),
            })?;
        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            let bytes = bytes.to_vec();
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&bytes);
            });
        }
        let out = wait_bounded(child, limit).map_err(|message| RemoteError::Ssh {
            host: host.to_string(),
            message: format!("`{remote}`: {message}"),
        })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(RemoteError::Ssh {
                host: host.to_string(),
                message: format!(
                    "`{remote}` exited with {}: {}",
                    out.status,
                    if err.is_empty() { "(no message)" } else { &err }
                ),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Closes every shared connection (`ssh -O exit`) and empties the
    /// control directory (removed with the last clone of this `Ssh`).
    pub fn close(&self, hosts: &[Host]) {
        for h in hosts {
            let argv = self.exit_argv(h);
            run_quietly(&argv);
            if crate::remote::lock(&self.guarded).remove(&h.destination) {
                let words: Vec<&OsStr> = argv.iter().map(OsString::as_os_str).collect();
                owned::forget(Removal::Command, &words);
            }
        }
        if let Ok(entries) = std::fs::read_dir(self.control_dir.path()) {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// `$SCALELAB_SSH_COMMAND` split into words, else `["ssh"]`.
fn base_from_env() -> Result<Vec<String>, RemoteError> {
    let text = std::env::var(SSH_COMMAND_ENV).unwrap_or_else(|_| "ssh".into());
    let base = split_words(&text).map_err(|message| RemoteError::Ssh {
        host: "(all)".into(),
        message: format!("{SSH_COMMAND_ENV}: {message}"),
    })?;
    if base.is_empty() {
        return Err(RemoteError::Ssh {
            host: "(all)".into(),
            message: format!(
                "{SSH_COMMAND_ENV} is empty; unset it or name a command such as `ssh -i KEY`"
            ),
        });
    }
    Ok(base)
}

/// `ssh -O exit` argv for the master at `control_path` (a `ControlPath`
/// value) of `destination`, the program resolved to an absolute path (the
/// reaper runs it with `execv`, without a `PATH` search).
fn exit_argv(base: &[String], control_path: &str, destination: &str) -> Vec<OsString> {
    let program = resolve_program(&base[0]).unwrap_or_else(|| PathBuf::from(&base[0]));
    let mut argv = vec![program.into_os_string()];
    argv.extend(base[1..].iter().map(OsString::from));
    for w in [
        "-o",
        &format!("ControlPath={control_path}"),
        "-O",
        "exit",
        "--",
        destination,
    ] {
        argv.push(w.into());
    }
    argv
}

/// `name` as an absolute path: itself if it has a `/`, else the first
/// executable file called `name` in `$PATH`.
fn resolve_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return std::path::absolute(name).ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Runs argv with no input or output, for at most 3 s.
fn run_quietly(argv: &[OsString]) {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Ok(child) = c.spawn() {
        let _ = wait_bounded(child, Duration::from_secs(3));
    }
}

/// Stops the masters whose control sockets are in a dead scalelab's
/// control directory (`ssh -O exit`), then removes the directory; returns
/// the directories removed.
pub fn reclaim_stale() -> Vec<PathBuf> {
    match base_from_env() {
        Ok(base) => reclaim_stale_with(&base),
        Err(_) => reclaim_stale_with(&["ssh".to_string()]),
    }
}

fn reclaim_stale_with(base: &[String]) -> Vec<PathBuf> {
    owned::reclaim_stale(&std::env::temp_dir(), CONTROL_DIR, |dir| {
        for socket in std::fs::read_dir(dir)?.flatten() {
            // A literal ControlPath: the destination is not used.
            let path = socket.path().display().to_string();
            run_quietly(&exit_argv(base, &path, "scalelab-reclaim"));
        }
        owned::remove_tree(dir)
    })
}

/// The user's shell commands (an external server's start, stop and
/// pid_command) run on one host over ssh.
pub struct SshShell {
    pub ssh: Ssh,
    pub host: Host,
}

impl crate::server::external::CommandRunner for SshShell {
    /// ssh as [`Ssh::command`] runs it, but never starting a master of its
    /// own (the reaper's run must leave no `ControlPersist` ssh behind):
    /// the shared master when it is still up, else a connection of its own.
    fn argv(&self, command: &str) -> Vec<OsString> {
        let c = self.ssh.command(&self.host, command);
        let program =
            resolve_program(&self.ssh.base[0]).unwrap_or_else(|| PathBuf::from(c.get_program()));
        std::iter::once(program.into_os_string())
            .chain(c.get_args().map(|a| match a.to_str() {
                Some("ControlMaster=auto") => OsString::from("ControlMaster=no"),
                _ => a.to_os_string(),
            }))
            .collect()
    }

    fn run(&self, command: &str, limit: Duration) -> Result<String, String> {
        self.ssh
            .run(&self.host, command, None, limit)
            .map_err(|e| e.to_string())
    }
}

/// Waits for `child` for at most `limit`, then kills it.
fn wait_bounded(
    mut child: std::process::Child,
    limit: Duration,
) -> Result<std::process::Output, String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().map_err(|e| e.to_string()),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {:.0}s", limit.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Splits a command line into words: blanks separate, single and double
/// quotes group, backslash escapes the next character (outside single
/// quotes). Enough for `ssh -i "/path/with space/key" -o X=y`.
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (_, '\\') => {
                cur.push(chars.next().ok_or("ends with a lone backslash")?);
                in_word = true;
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("a quote is not closed".into());
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Quotes `s` for a POSIX shell (the remote side of ssh runs one).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_words(r#"ssh -i "/a b/key" -o 'X=1 2' c\ d"#).unwrap(),
            vec!["ssh", "-i", "/a b/key", "-o", "X=1 2", "c d"]
        );
        assert!(split_words("ssh 'open").is_err());
        assert!(split_words("").unwrap().is_empty());
    }

    #[test]
    fn the_exit_command_names_the_program_by_its_absolute_path() {
        let base = ["sh".to_string(), "-i".to_string(), "/k".to_string()];
        let argv = exit_argv(&base, "/tmp/d/%C", "root@h");
        let words: Vec<&str> = argv.iter().map(|w| w.to_str().unwrap()).collect();
        assert!(
            Path::new(words[0]).is_absolute() && words[0].ends_with("/sh"),
            "{words:?}"
        );
        assert_eq!(
            words[1..],
            [
                "-i",
                "/k",
                "-o",
                "ControlPath=/tmp/d/%C",
                "-O",
                "exit",
                "--",
                "root@h"
            ]
        );
        assert_eq!(resolve_program("no-such-program-here"), None);
    }

    #[test]
    fn quotes_for_the_remote_shell() {
        assert_eq!(shell_quote("/var/tmp/x"), "/var/tmp/x");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
