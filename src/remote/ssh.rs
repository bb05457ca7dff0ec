//! The ssh command line: the user's client, one multiplexed connection per
//! host, and remote commands bounded in time.

use super::{Host, RemoteError};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Environment variable that replaces `ssh` (with its options), as
/// `GIT_SSH_COMMAND` does for git.
pub const SSH_COMMAND_ENV: &str = "SCALELAB_SSH_COMMAND";

/// How to run ssh: the base command and the control socket directory that
/// lets every command to one host share one connection.
#[derive(Clone, Debug)]
pub struct Ssh {
    base: Vec<String>,
    control_dir: PathBuf,
}

impl Ssh {
    /// `$SCALELAB_SSH_COMMAND` split into words, else `ssh`.
    pub fn from_env() -> Result<Ssh, RemoteError> {
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
        let control_dir = std::env::temp_dir().join(format!("scalelab-ssh-{}", std::process::id()));
        Ok(Ssh { base, control_dir })
    }

    /// A `Command` that runs `remote` on `host` over the shared connection.
    /// ssh's own options come first so a user's `-o` in the base wins.
    pub fn command(&self, host: &Host, remote: &str) -> Command {
        let _ = std::fs::create_dir_all(&self.control_dir);
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
            .arg(format!("ControlPath={}/%C", self.control_dir.display()));
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

    /// Closes every shared connection (`ssh -O exit`) and removes the
    /// control directory.
    pub fn close(&self, hosts: &[Host]) {
        for h in hosts {
            let mut c = Command::new(&self.base[0]);
            c.args(&self.base[1..])
                .arg("-o")
                .arg(format!("ControlPath={}/%C", self.control_dir.display()))
                .args(["-O", "exit", "--", &h.destination])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Ok(child) = c.spawn() {
                let _ = wait_bounded(child, Duration::from_secs(3));
            }
        }
        let _ = std::fs::remove_dir_all(&self.control_dir);
    }
}

/// The user's shell commands (an external server's start, stop and
/// pid_command) run on one host over ssh.
pub struct SshShell {
    pub ssh: Ssh,
    pub host: Host,
}

impl crate::target::external::CommandRunner for SshShell {
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
    fn quotes_for_the_remote_shell() {
        assert_eq!(shell_quote("/var/tmp/x"), "/var/tmp/x");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
