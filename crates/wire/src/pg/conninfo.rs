//! Connection strings, as libpq reads them: `key=value` pairs
//! (`host=127.0.0.1 port=5432 user=postgres`) or URIs
//! (`postgresql://postgres@127.0.0.1:5432/postgres`). Missing keys fall back
//! to libpq's environment variables (`PGHOST`, `PGPORT`, `PGUSER`, ...) and
//! then to libpq's defaults.
//!
//! Load goes only to this machine: a TCP host must be a loopback address (or
//! `localhost`); a host starting with `/` is a Unix-socket directory.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// libpq's socket directory on Debian when no host is given.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
const DEFAULT_PORT: u16 = 5432;
const KEYS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "user",
    "dbname",
    "password",
    "application_name",
    "connect_timeout",
    "sslmode",
    "sslrootcert",
];

/// libpq's `sslmode`: whether the connection is encrypted, and what of
/// the server's certificate is checked. Over a Unix socket there is no TLS
/// in any mode, as in libpq.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SslMode {
    /// Cleartext (scalelab's default, and `allow`, which tries cleartext
    /// first).
    #[default]
    Disable,
    /// TLS where the server offers it, cleartext where it answers `N`; the
    /// certificate is not checked (libpq's `prefer`).
    Prefer,
    /// TLS or no connection; the certificate is not checked.
    Require,
    /// TLS, the certificate checked against `sslrootcert` (or the run's
    /// CA), not its name.
    VerifyCa,
    /// TLS, the certificate checked against the CA and the host's address.
    VerifyFull,
}

impl SslMode {
    /// The mode `text` names, as libpq spells them.
    pub fn parse(text: &str) -> Result<SslMode, String> {
        Ok(match text {
            "disable" | "allow" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode={other}: use disable, allow, prefer, require, verify-ca or \
                     verify-full"
                ))
            }
        })
    }

    /// Whether the connection asks the server for TLS.
    pub fn asks_tls(self) -> bool {
        self != SslMode::Disable
    }

    /// Whether a server that answers the SSLRequest with `N` is refused.
    pub fn needs_tls(self) -> bool {
        !matches!(self, SslMode::Disable | SslMode::Prefer)
    }

    /// Whether the server's certificate is checked against a CA.
    pub fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }

    /// libpq's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// `host` (or `hostaddr`) as an IP address that `wire::policy` allows
    /// (loopback, `localhost` being 127.0.0.1, or a `[hosts]` address), with
    /// `port` (default 5432).
    Tcp(SocketAddr),
    /// The socket file itself, e.g. `/var/run/postgresql/.s.PGSQL.5432`.
    Unix(PathBuf),
}

/// A parsed connection string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnConfig {
    /// `hostaddr`, else `host`, else `PGHOST`; default the socket in
    /// `/var/run/postgresql`.
    pub host: Host,
    /// `user`, else `PGUSER`, else the operating-system user.
    pub user: String,
    /// `dbname`, else `PGDATABASE`, else the user name.
    pub dbname: String,
    /// `password`, else `PGPASSWORD`; `None` when the server needs none
    /// (trust). Never shown in messages.
    pub password: Option<String>,
    /// Sent in the StartupMessage (shows in `pg_stat_activity`); default
    /// `scalelab`.
    pub application_name: String,
    /// `connect_timeout` in whole seconds; `None` when unset. Parsed and
    /// checked only: connections are bounded by the caller's timeout.
    pub connect_timeout: Option<Duration>,
    /// `sslmode`, else `PGSSLMODE`; default `disable`.
    pub sslmode: SslMode,
    /// `sslrootcert`, else `PGSSLROOTCERT`: the CA file the server's
    /// certificate is checked against (`verify-ca`, `verify-full`).
    pub sslrootcert: Option<PathBuf>,
}

/// Why a connection string was rejected; the text names the key and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConnInfoError(String);

fn err(msg: impl Into<String>) -> ConnInfoError {
    ConnInfoError(msg.into())
}

impl ConnConfig {
    /// Parses `text`, filling gaps from the process environment like libpq.
    pub fn parse(text: &str) -> Result<Self, ConnInfoError> {
        Self::parse_with_env(text, |k| std::env::var(k).ok())
    }

    /// Parses `text`, filling gaps from `env` (tests pass a fixed map).
    pub fn parse_with_env(
        text: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConnInfoError> {
        let t = text.trim();
        let pairs = if t.starts_with("postgresql://") || t.starts_with("postgres://") {
            parse_uri(t)?
        } else {
            parse_key_values(t)?
        };
        build(&pairs, env)
    }

    /// `host=... port=... user=... dbname=...` for messages (no password).
    pub fn describe(&self) -> String {
        let host = match &self.host {
            Host::Tcp(a) => format!("host={} port={}", a.ip(), a.port()),
            Host::Unix(p) => format!("socket={}", p.display()),
        };
        format!("{host} user={} dbname={}", self.user, self.dbname)
    }
}

type Pairs = Vec<(String, String)>;

fn parse_key_values(text: &str) -> Result<Pairs, ConnInfoError> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.next() != Some('=') {
            return Err(err(format!(
                "connection string: `{key}` has no value; write key=value pairs such as \
                 `host=127.0.0.1 port=5432 user=postgres`, or a postgresql:// URI"
            )));
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        out.push((key, read_value(&mut chars)?));
    }
}

fn read_value(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<String, ConnInfoError> {
    let mut value = String::new();
    if chars.peek() == Some(&'\'') {
        chars.next();
        loop {
            match chars.next() {
                Some('\\') => value.extend(chars.next()),
                Some('\'') => return Ok(value),
                Some(c) => value.push(c),
                None => return Err(err("connection string: unterminated quoted value")),
            }
        }
    }
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            break;
        }
        chars.next();
        if c == '\\' {
            value.extend(chars.next());
        } else {
            value.push(c);
        }
    }
    Ok(value)
}

/// `postgresql://[user[:password]@][host][:port][/dbname][?key=value&...]`
fn parse_uri(text: &str) -> Result<Pairs, ConnInfoError> {
    let rest = text.split_once("://").map_or(text, |(_, r)| r);
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, db) = rest.split_once('/').unwrap_or((rest, ""));
    let mut out = Vec::new();
    let hostport = match authority.rsplit_once('@') {
        Some((userinfo, hp)) => {
            let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            push_nonempty(&mut out, "user", percent_decode(user)?);
            push_nonempty(&mut out, "password", percent_decode(pass)?);
            hp
        }
        None => authority,
    };
    let (host, port) = split_host_port(hostport)?;
    push_nonempty(&mut out, "host", percent_decode(host)?);
    push_nonempty(&mut out, "port", port.to_string());
    push_nonempty(&mut out, "dbname", percent_decode(db)?);
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            err(format!(
                "connection URI: parameter `{kv}` has no value; write ?key=value"
            ))
        })?;
        out.push((percent_decode(k)?, percent_decode(v)?));
    }
    Ok(out)
}

fn split_host_port(hp: &str) -> Result<(&str, &str), ConnInfoError> {
    if let Some(inner) = hp.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or_else(|| err(format!("connection URI: unclosed `[` in `{hp}`")))?;
        return Ok((host, after.strip_prefix(':').unwrap_or("")));
    }
    if hp.contains(',') {
        return Err(err(
            "connection string: several hosts are not supported; name one host",
        ));
    }
    Ok(hp.split_once(':').unwrap_or((hp, "")))
}

fn push_nonempty(out: &mut Pairs, key: &str, value: String) {
    if !value.is_empty() {
        out.push((key.to_string(), value));
    }
}

/// Decodes `%XX` escapes of a URI component (also used for mysql:// URLs).
pub(crate) fn percent_decode(s: &str) -> Result<String, ConnInfoError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| err(format!("connection URI: bad percent-escape in `{s}`")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| err(format!("connection URI: `{s}` is not UTF-8")))
}

fn build(pairs: &Pairs, env: impl Fn(&str) -> Option<String>) -> Result<ConnConfig, ConnInfoError> {
    for (k, _) in pairs {
        if !KEYS.contains(&k.as_str()) {
            return Err(err(format!(
                "connection string: unknown key `{k}`; known keys: {}",
                KEYS.join(", ")
            )));
        }
    }
    let get = |key: &str, var: &str| -> Option<String> {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| env(var))
            .filter(|v| !v.is_empty())
    };
    let sslmode = match get("sslmode", "PGSSLMODE") {
        Some(m) => SslMode::parse(&m).map_err(|e| err(format!("connection string: {e}")))?,
        None => SslMode::Disable,
    };
    let port = match get("port", "PGPORT") {
        Some(p) => p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| {
            err(format!(
                "connection string: port `{p}` is not a port number (1-65535)"
            ))
        })?,
        None => DEFAULT_PORT,
    };
    let host = match get("hostaddr", "PGHOSTADDR") {
        Some(addr) => resolve_host(&addr, port)?,
        None => resolve_host(
            &get("host", "PGHOST").unwrap_or_else(|| DEFAULT_SOCKET_DIR.to_string()),
            port,
        )?,
    };
    let user = get("user", "PGUSER").unwrap_or_else(os_user);
    let dbname = get("dbname", "PGDATABASE").unwrap_or_else(|| user.clone());
    let connect_timeout = match get("connect_timeout", "PGCONNECT_TIMEOUT") {
        Some(t) => Some(Duration::from_secs(t.parse::<u64>().map_err(|_| {
            err(format!(
                "connection string: connect_timeout `{t}` must be whole seconds"
            ))
        })?)),
        None => None,
    };
    Ok(ConnConfig {
        host,
        user,
        dbname,
        password: get("password", "PGPASSWORD"),
        application_name: get("application_name", "PGAPPNAME")
            .unwrap_or_else(|| "scalelab".to_string()),
        connect_timeout,
        sslmode,
        sslrootcert: get("sslrootcert", "PGSSLROOTCERT").map(PathBuf::from),
    })
}

fn resolve_host(host: &str, port: u16) -> Result<Host, ConnInfoError> {
    if host.starts_with('/') {
        return Ok(Host::Unix(
            PathBuf::from(host).join(format!(".s.PGSQL.{port}")),
        ));
    }
    let ip: IpAddr = if crate::policy::is_localhost(host) {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse().map_err(|_| {
            err(format!(
                "connection string: host `{host}` is not an IP address; load goes only to \
                 loopback, so use 127.0.0.1 (or localhost, or a socket directory such as \
                 /var/run/postgresql)"
            ))
        })?
    };
    crate::policy::check(ip).map_err(|e| err(format!("connection string: host {e}")))?;
    Ok(Host::Tcp(SocketAddr::new(ip, port)))
}

/// The effective user's login name, libpq's default user.
fn os_user() -> String {
    // SAFETY: getpwuid returns a pointer to static storage or null; the name
    // is copied out before any other call could overwrite it.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() || (*pw).pw_name.is_null() {
            return "postgres".to_string();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ConnConfig, ConnInfoError> {
        ConnConfig::parse_with_env(s, |_| None)
    }

    #[test]
    fn key_value_strings() {
        let c = parse("host=127.0.0.1 port=6000 user=bench dbname='my db' password=p\\ w").unwrap();
        assert_eq!(c.host, Host::Tcp("127.0.0.1:6000".parse().unwrap()));
        assert_eq!(c.user, "bench");
        assert_eq!(c.dbname, "my db");
        assert_eq!(c.password.as_deref(), Some("p w"));
        let spaced = parse("host = localhost  port =7 user= u").unwrap();
        assert_eq!(spaced.host, Host::Tcp("127.0.0.1:7".parse().unwrap()));
        assert_eq!(spaced.dbname, "u", "dbname defaults to the user");
        let dotted = parse("host=LocalHost. port=7 user=u").unwrap();
        assert_eq!(dotted.host, Host::Tcp("127.0.0.1:7".parse().unwrap()));
        assert!(parse("host=127.0.0.1 port=0").is_err());
    }

    #[test]
    fn uris() {
        let c = parse("postgresql://bench:s%40cret@127.0.0.2:6543/db1?application_name=x").unwrap();
        assert_eq!(c.host, Host::Tcp("127.0.0.2:6543".parse().unwrap()));
        assert_eq!((c.user.as_str(), c.dbname.as_str()), ("bench", "db1"));
        assert_eq!(c.password.as_deref(), Some("s@cret"));
        assert_eq!(c.application_name, "x");
        let v6 = parse("postgres://[::1]:5433/postgres?user=postgres").unwrap();
        assert_eq!(v6.host, Host::Tcp("[::1]:5433".parse().unwrap()));
        let sock = parse("postgresql://%2Ftmp%2Fpg/postgres?user=postgres").unwrap();
        assert_eq!(sock.host, Host::Unix("/tmp/pg/.s.PGSQL.5432".into()));
    }

    #[test]
    fn environment_fills_gaps_but_the_string_wins() {
        let env = |k: &str| match k {
            "PGPORT" => Some("7777".to_string()),
            "PGUSER" => Some("envuser".to_string()),
            "PGHOST" => Some("127.0.0.1".to_string()),
            _ => None,
        };
        let c = ConnConfig::parse_with_env("user=explicit", env).unwrap();
        assert_eq!(c.host, Host::Tcp("127.0.0.1:7777".parse().unwrap()));
        assert_eq!(c.user, "explicit");
        let d = ConnConfig::parse_with_env("", |_| None).unwrap();
        assert_eq!(
            d.host,
            Host::Unix("/var/run/postgresql/.s.PGSQL.5432".into())
        );
    }

    #[test]
    fn rejects_what_it_cannot_honour() {
        let remote = parse("host=10.0.0.1").unwrap_err().to_string();
        assert!(remote.contains("loopback"), "{remote}");
        let name = parse("host=db.example.com").unwrap_err().to_string();
        assert!(name.contains("not an IP address"), "{name}");
        assert!(parse("hots=127.0.0.1")
            .unwrap_err()
            .to_string()
            .contains("unknown key `hots`"));
        assert!(parse("port=http").unwrap_err().to_string().contains("port"));
        assert!(parse("host").unwrap_err().to_string().contains("no value"));
        assert!(parse("sslmode=requir")
            .unwrap_err()
            .to_string()
            .contains("sslmode=requir: use disable"));
        let c = parse("sslmode=verify-full sslrootcert=/x/ca.pem").unwrap();
        assert_eq!(c.sslmode, SslMode::VerifyFull);
        assert_eq!(
            c.sslrootcert.as_deref(),
            Some(std::path::Path::new("/x/ca.pem"))
        );
        assert_eq!(parse("sslmode=allow").unwrap().sslmode, SslMode::Disable);
        assert!(SslMode::Prefer.asks_tls() && !SslMode::Prefer.needs_tls());
        assert!(parse("password='open")
            .unwrap_err()
            .to_string()
            .contains("unterminated"));
        assert!(parse("postgresql://a,b/db").is_err());
    }
}
