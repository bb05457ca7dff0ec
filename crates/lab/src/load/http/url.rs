//! The small part of URL syntax a loopback load generator needs:
//! `http[s]://host[:port][/path][?query]`.

use std::net::SocketAddr;

/// A parsed `http://` or `https://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpUrl {
    /// `https://`.
    pub tls: bool,
    /// Host as written (brackets kept for IPv6), for the `Host` header.
    pub host: String,
    pub port: u16,
    /// Path and query, always starting with `/`.
    pub path: String,
}

impl HttpUrl {
    pub fn parse(url: &str) -> Result<HttpUrl, String> {
        let (tls, rest) = strip_scheme(url)?;
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err("user names and passwords in the URL are not supported".into());
        }
        let (host, port) = split_host_port(authority, if tls { 443 } else { 80 })?;
        let tail = tail.split('#').next().unwrap_or("");
        let path = match tail.chars().next() {
            None => "/".to_string(),
            Some('?') => format!("/{tail}"),
            Some(_) => tail.to_string(),
        };
        check_path(&path)?;
        Ok(HttpUrl {
            tls,
            host: host.to_string(),
            port,
            path,
        })
    }

    /// `host:port` as the `Host` header carries it (port omitted when it
    /// is the scheme's: 80, or 443 for https).
    pub fn host_header(&self) -> String {
        if self.port == self.default_port() {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn default_port(&self) -> u16 {
        if self.tls {
            443
        } else {
            80
        }
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &'static str {
        if self.tls {
            "https"
        } else {
            "http"
        }
    }

    /// The host's address, by [`crate::wire::policy::resolve`]: an IP
    /// address, `localhost`, or a name from `[hosts]`; no other name is sent
    /// to a resolver. It must be a loopback address or one the experiment
    /// names in `[hosts]`.
    pub fn resolve(&self) -> Result<SocketAddr, String> {
        crate::wire::policy::resolve(&self.host, self.port)
    }
}

/// Whether the URL is `https`, and the rest after `://`.
fn strip_scheme(url: &str) -> Result<(bool, &str), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("expected a URL such as http://127.0.0.1:8080/".into());
    };
    if scheme.eq_ignore_ascii_case("http") {
        Ok((false, rest))
    } else if scheme.eq_ignore_ascii_case("https") {
        Ok((true, rest))
    } else {
        Err(format!(
            "unsupported scheme `{scheme}`; use an http:// or https:// URL"
        ))
    }
}

fn split_host_port(authority: &str, default: u16) -> Result<(&str, u16), String> {
    let (host, port) = if let Some(v6_end) = authority.strip_prefix('[').and(authority.find(']')) {
        let (host, rest) = authority.split_at(v6_end + 1);
        (host, rest.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err("the URL has no host".into());
    }
    let port = match port {
        None => default,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| format!("`{p}` is not a valid port (1-65535)"))?,
    };
    Ok((host, port))
}

/// A request target must be visible ASCII without spaces.
pub fn check_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err(format!("path `{path}` must start with `/`"));
    }
    if path.bytes().any(|b| !b.is_ascii_graphic()) {
        return Err(format!(
            "path `{path}` contains spaces or control characters; percent-encode them"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms() {
        let u = HttpUrl::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/")
        );
        let u = HttpUrl::parse("HTTP://localhost/a/b?c=1#frag").unwrap();
        assert_eq!((u.port, u.path.as_str()), (80, "/a/b?c=1"));
        assert_eq!(u.host_header(), "localhost");
        let u = HttpUrl::parse("http://[::1]:81?x").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("[::1]", 81, "/?x")
        );
        assert_eq!(u.host_header(), "[::1]:81");
        let u = HttpUrl::parse("https://localhost/x").unwrap();
        assert_eq!((u.tls, u.port, u.scheme()), (true, 443, "https"));
        assert_eq!(u.host_header(), "localhost");
        let u = HttpUrl::parse("https://127.0.0.1:80/").unwrap();
        assert_eq!(u.host_header(), "127.0.0.1:80");
    }

    #[test]
    fn rejects_what_it_cannot_do() {
        for (url, why) in [
            ("ftp://127.0.0.1/", "unsupported scheme"),
            ("127.0.0.1:80", "expected a URL"),
            ("http://:80/", "no host"),
            ("http://127.0.0.1:99999/", "valid port"),
            ("http://127.0.0.1:0/", "valid port"),
            ("http://u:p@127.0.0.1/", "passwords"),
        ] {
            let err = HttpUrl::parse(url).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
    }

    #[test]
    fn only_loopback_unless_named_in_hosts() {
        let local = HttpUrl::parse("http://127.0.0.2:8080/").unwrap();
        assert!(local.resolve().is_ok());
        let remote = HttpUrl::parse("http://10.1.2.3:8080/").unwrap();
        let err = remote.resolve().unwrap_err();
        assert!(err.contains("[hosts]"), "{err}");
    }
}
