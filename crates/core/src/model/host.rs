//! A host named in an experiment's `[hosts]`: `user@address` or `address`.

use std::fmt;
use std::net::IpAddr;

/// One remote host, as ssh names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Host {
    /// What is handed to ssh: `root@198.18.0.11`, or an alias from
    /// `~/.ssh/config`.
    pub destination: String,
}

impl Host {
    /// Parses a `[hosts]` entry. The part after `@` must be an IP address or
    /// a host name without spaces.
    pub fn parse(text: &str) -> Result<Host, String> {
        let t = text.trim();
        let addr = t.rsplit_once('@').map_or(t, |(_, a)| a);
        let user_ok = t.rsplit_once('@').map_or(true, |(u, _)| {
            !u.is_empty() && !u.contains(char::is_whitespace)
        });
        if addr.is_empty()
            || addr.contains(char::is_whitespace)
            || !user_ok
            || addr.starts_with('-')
        {
            return Err(format!(
                "`{text}` is not a host; expected `user@address` or `address`, such as \"root@198.18.0.11\""
            ));
        }
        Ok(Host {
            destination: t.to_string(),
        })
    }

    /// The address part (after `@`).
    pub fn address(&self) -> &str {
        self.destination
            .rsplit_once('@')
            .map_or(&self.destination, |(_, a)| a)
    }

    /// The address as an IP, when it is one (not an ssh alias).
    pub fn ip(&self) -> Option<IpAddr> {
        self.address().trim_matches(['[', ']']).parse().ok()
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.destination)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_user_at_address() {
        let h = Host::parse("root@198.18.0.11").unwrap();
        assert_eq!(h.address(), "198.18.0.11");
        assert_eq!(h.ip(), Some("198.18.0.11".parse().unwrap()));
        assert_eq!(Host::parse("lab-a").unwrap().ip(), None);
    }

    #[test]
    fn rejects_what_ssh_would_misread() {
        for bad in ["", "@1.2.3.4", "root@", "a b", "-oProxyCommand=x"] {
            assert!(Host::parse(bad).is_err(), "{bad}");
        }
    }
}
