//! The coordinator's side of one agent: an ssh session running
//! `scalelab agent`, requests written as lines, replies read by a thread so
//! that every wait is bounded.

use super::clock::{self, Exchange, Offset};
use super::protocol::{request_line, Reply, Request, PROTOCOL_VERSION};
use super::ssh::{shell_quote, Ssh};
use super::{Host, RemoteError};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// How long a plain request (not a load run or a server start) may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Exchanges used for the clock offset; the shortest round trip wins.
const CLOCK_EXCHANGES: usize = 8;

/// Facts the agent gave at hello.
#[derive(Clone, Debug)]
pub struct AgentFacts {
    /// The host's online CPUs: how many load threads it can run.
    pub cpus: usize,
    /// The agent's PID on its host, when it said.
    pub pid: Option<u32>,
}

/// One connected agent.
pub struct AgentConn {
    pub host: Host,
    pub facts: AgentFacts,
    /// The agent's clock minus the coordinator's.
    pub offset: Offset,
    child: Child,
    stdin: Option<ChildStdin>,
    replies: mpsc::Receiver<Result<Reply, String>>,
}

impl AgentConn {
    /// Starts the agent at `path` on `host` over `ssh`, checks its protocol
    /// version and measures its clock offset.
    pub fn connect(
        ssh: &Ssh,
        host: &Host,
        path: &str,
        workdir: &str,
    ) -> Result<AgentConn, RemoteError> {
        let remote = format!(
            "exec {} agent --workdir {}",
            shell_quote(path),
            shell_quote(workdir)
        );
        let mut child = ssh
            .command(host, &remote)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| RemoteError::Ssh {
                host: host.to_string(),
                message: e.to_string(),
            })?;
        let stdout = child.stdout.take().ok_or_else(|| RemoteError::Lost {
            host: host.to_string(),
            detail: ": no stdout".into(),
        })?;
        let mut conn = AgentConn::over(host, child, stdout);
        conn.hello(path)?;
        conn.offset = conn.measure_clock()?;
        Ok(conn)
    }

    /// The connection over a started session, its replies read by a
    /// thread of their own; nothing is exchanged yet.
    fn over(host: &Host, mut child: Child, stdout: std::process::ChildStdout) -> AgentConn {
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let parsed = serde_json::from_str::<Reply>(&line)
                    .map_err(|e| format!("unreadable reply `{line}`: {e}"));
                if tx.send(parsed).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        AgentConn {
            host: host.clone(),
            facts: AgentFacts { cpus: 0, pid: None },
            offset: Offset {
                offset_ns: 0,
                bound_ns: 0,
            },
            child,
            stdin,
            replies,
        }
    }

    fn hello(&mut self, path: &str) -> Result<(), RemoteError> {
        match self.call(Request::Hello, Duration::from_secs(20))? {
            Reply::Hello {
                protocol,
                cpus,
                pid,
                ..
            } => {
                if protocol != PROTOCOL_VERSION {
                    return Err(RemoteError::Version {
                        host: self.host.to_string(),
                        ours: PROTOCOL_VERSION,
                        theirs: protocol,
                        path: path.into(),
                    });
                }
                self.facts = AgentFacts { cpus, pid };
                Ok(())
            }
            other => Err(self.unexpected("hello", &other)),
        }
    }

    fn measure_clock(&mut self) -> Result<Offset, RemoteError> {
        let mut exchanges = Vec::with_capacity(CLOCK_EXCHANGES);
        for _ in 0..CLOCK_EXCHANGES {
            let sent = clock::now_ns();
            let reply = self.call(Request::Clock, CALL_TIMEOUT)?;
            let received = clock::now_ns();
            match reply {
                Reply::Clock { unix_ns } => exchanges.push(Exchange {
                    sent,
                    remote: unix_ns as i128,
                    received,
                }),
                other => return Err(self.unexpected("clock", &other)),
            }
        }
        clock::estimate(&exchanges).ok_or_else(|| RemoteError::Agent {
            host: self.host.to_string(),
            message: "the local clock went backwards while measuring the offset".into(),
        })
    }

    /// Sends `request` without waiting for its reply.
    pub fn send(&mut self, request: Request) -> Result<(), RemoteError> {
        let line = request_line(request);
        let stdin = self.stdin.as_mut().ok_or_else(|| RemoteError::Lost {
            host: self.host.to_string(),
            detail: String::new(),
        })?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| RemoteError::Lost {
                host: self.host.to_string(),
                detail: format!(": {e}"),
            })
    }

    /// Waits up to `limit` for the next reply. An `error` reply becomes a
    /// [`RemoteError::Agent`].
    pub fn receive(&mut self, limit: Duration, what: &str) -> Result<Reply, RemoteError> {
        match self.replies.recv_timeout(limit) {
            Ok(Ok(Reply::Error { message })) => Err(RemoteError::Agent {
                host: self.host.to_string(),
                message,
            }),
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(message)) => Err(RemoteError::Agent {
                host: self.host.to_string(),
                message,
            }),
            Err(RecvTimeoutError::Timeout) => Err(RemoteError::Timeout {
                host: self.host.to_string(),
                waited_s: limit.as_secs_f64(),
                what: what.into(),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(RemoteError::Lost {
                host: self.host.to_string(),
                detail: self.exit_detail(),
            }),
        }
    }

    /// Sends `request` and waits up to `limit` for its reply.
    pub fn call(&mut self, request: Request, limit: Duration) -> Result<Reply, RemoteError> {
        let what = format!("{request:?}");
        let what = what
            .split([' ', '(', '{'])
            .next()
            .unwrap_or("request")
            .to_string();
        self.send(request)?;
        let reply = self.receive(limit, &what);
        if matches!(reply, Err(RemoteError::Timeout { .. })) {
            self.abandon();
        }
        reply
    }

    /// Ends a session whose reply did not come in time. Its reply may still
    /// come, and would then be read as the answer to the next request (a
    /// last trial's numbers stored as this one's): so the session is ended,
    /// and the next trial reconnects ([`super::cluster::Cluster::heal`]).
    pub fn abandon(&mut self) {
        self.stdin.take();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the ssh session is still up.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn exit_detail(&mut self) -> String {
        std::thread::sleep(Duration::from_millis(50));
        match self.child.try_wait() {
            Ok(Some(status)) => format!(" (ssh exited with {status})"),
            _ => String::new(),
        }
    }

    fn unexpected(&self, what: &str, reply: &Reply) -> RemoteError {
        RemoteError::Agent {
            host: self.host.to_string(),
            message: format!("unexpected reply to {what}: {reply:?}"),
        }
    }

    /// Asks the agent to stop its server and exit, then ends the session.
    pub fn close(&mut self) {
        if self.stdin.is_some() && self.is_alive() {
            let _ = self.send(Request::Exit);
            let _ = self.receive(Duration::from_secs(10), "exit");
        }
        self.stdin.take();
        for _ in 0..50 {
            if !self.is_alive() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for AgentConn {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session that answers every request line with a clock reply, 300 ms
    /// late.
    fn late_session() -> AgentConn {
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                r#"while read -r line; do sleep 0.3; echo '{"reply":"clock","unix_ns":7}'; done"#,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        AgentConn::over(&Host::parse("root@198.18.0.11").unwrap(), child, stdout)
    }

    #[test]
    fn a_reply_that_comes_too_late_never_answers_the_next_request() {
        let mut conn = late_session();
        assert!(matches!(
            conn.call(Request::Clock, Duration::from_millis(50)),
            Err(RemoteError::Timeout { .. })
        ));
        assert!(!conn.is_alive(), "the session out of step is ended");
        // Without that, this call would read the first request's late reply.
        std::thread::sleep(Duration::from_millis(400));
        let next = conn.call(Request::Clock, Duration::from_secs(2));
        assert!(matches!(next, Err(RemoteError::Lost { .. })), "{next:?}");
    }

    #[test]
    fn a_reply_in_time_keeps_the_session() {
        let mut conn = late_session();
        let reply = conn.call(Request::Clock, Duration::from_secs(5)).unwrap();
        assert!(matches!(reply, Reply::Clock { unix_ns: 7 }), "{reply:?}");
        assert!(conn.is_alive());
    }
}
