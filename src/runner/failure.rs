//! Why a trial failed before it could be judged, and whether the cause was
//! its environment (a lost host, a server that could not start, a full
//! disk), which is stored typed so that `--resume` retries those trials.

use crate::remote::RemoteError;
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
}
