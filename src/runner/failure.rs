//! Why a trial failed before it could be judged, and whether the cause was
//! its environment (a lost host, a server that could not start, a full
//! disk), which is stored typed so that `--resume` retries those trials.

use crate::remote::bare::session::SessionError;
use crate::remote::{Host, RemoteError};
use crate::store::FailureCause;

/// A trial's failure: the stored error text and its environmental cause.
#[derive(Debug)]
pub struct Failure {
    /// The error, for people (stored as the trial's `error`).
    pub message: String,
    /// Set when the environment failed rather than the server under test.
    pub cause: Option<FailureCause>,
}

impl Failure {
    /// A failure with no environmental cause.
    pub fn plain(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            cause: None,
        }
    }

    /// A load run over the client hosts failed: a lost host when an agent
    /// or its connection was lost.
    pub fn remote_load(e: &RemoteError) -> Failure {
        if e.is_lost_host() {
            Failure {
                message: format!("lost host: {e}"),
                cause: Some(FailureCause::LostHost),
            }
        } else {
            Failure::plain(e.to_string())
        }
    }

    /// The interval probe of a host without an agent could not start: its
    /// host's disk is full, or the host stopped answering over ssh.
    pub fn probe_start(e: SessionError) -> Failure {
        match e {
            SessionError::DiskFull(message) => Failure {
                message,
                cause: Some(FailureCause::DiskFull),
            },
            SessionError::Ssh(why) => Failure::unanswered(&why),
        }
    }

    /// The host stopped answering over ssh (`why`, the session's error):
    /// a lost host, which `--resume` runs again.
    pub fn unanswered(why: &str) -> Failure {
        Failure {
            message: format!("the host stopped answering over ssh: {why}"),
            cause: Some(FailureCause::LostHost),
        }
    }

    /// A measured trial judged failed for `reason`; a full disk
    /// (`disk_full`: where, and from what) is named first and is its cause.
    pub fn judged(reason: String, disk_full: Option<String>) -> Failure {
        match disk_full {
            Some(where_) => Failure {
                message: format!("{where_}: {reason}"),
                cause: Some(FailureCause::DiskFull),
            },
            None => Failure::plain(reason),
        }
    }

    /// The failure of a trial after which the agents of `lost` hosts were
    /// gone: when it has no cause yet (the server host's agent died with
    /// its server, and the load saw only refused connections), the lost
    /// host is its cause and is named first.
    pub fn or_lost_host(self, lost: &[Host]) -> Failure {
        if self.cause.is_some() || lost.is_empty() {
            return self;
        }
        let hosts: Vec<String> = lost.iter().map(ToString::to_string).collect();
        Failure {
            message: format!("lost host {}: {}", hosts.join(", "), self.message),
            cause: Some(FailureCause::LostHost),
        }
    }

    /// The same failure, its message prefixed with `what`: (kept cause).
    pub fn during(self, what: &str) -> Failure {
        Failure {
            message: format!("{what} failed: {}", self.message),
            cause: self.cause,
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::plain(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::plain(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_agent_is_a_lost_host_and_an_agent_error_is_not() {
        let lost = RemoteError::Lost {
            host: "root@h3".into(),
            detail: String::new(),
        };
        let f = Failure::remote_load(&lost).during("load");
        assert_eq!(f.cause, Some(FailureCause::LostHost));
        assert!(f
            .message
            .starts_with("load failed: lost host: host root@h3"));
        let refused = RemoteError::Agent {
            host: "root@h3".into(),
            message: "load failed: connection refused".into(),
        };
        assert_eq!(Failure::remote_load(&refused).cause, None);
    }

    #[test]
    fn a_failure_after_which_a_host_is_gone_is_that_hosts() {
        let h3 = Host::parse("root@198.18.0.13").unwrap();
        let died = Failure::plain("the server died during the trial");
        let f = died.or_lost_host(std::slice::from_ref(&h3));
        assert_eq!(f.cause, Some(FailureCause::LostHost));
        assert_eq!(
            f.message,
            "lost host root@198.18.0.13: the server died during the trial"
        );
        // No host lost, or a cause already known: unchanged.
        assert_eq!(Failure::plain("x").or_lost_host(&[]).cause, None);
        let full = Failure::judged("the server died".into(), Some("no space".into()));
        assert_eq!(full.or_lost_host(&[h3]).cause, Some(FailureCause::DiskFull));
    }
}
