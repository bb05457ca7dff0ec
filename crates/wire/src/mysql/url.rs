//! `mysql://USER:PASS@HOST:PORT/DB` endpoints.
//!
//! Load goes only to this machine: the host must be a loopback address or
//! `localhost`. User and password may be percent-encoded; the port defaults
//! to 3306 and the database to sysbench's `sbtest`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Where and as whom to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MysqlUrl {
    /// The server: a loopback address (`localhost` is 127.0.0.1), port
    /// 3306 unless given.
    pub addr: SocketAddr,
    /// The account, percent-decoded; `root` when the URL names none.
    pub user: String,
    /// The password, percent-decoded; empty when the URL has none. Never
    /// shown: [`MysqlUrl::describe`] leaves it out.
    pub password: String,
    /// The schema the sbtest tables live in; `sbtest` when the URL names
    /// none.
    pub database: String,
}

/// Why an endpoint is not a usable `mysql://` URL; the text names the part
/// and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UrlError(String);

fn err(msg: impl Into<String>) -> UrlError {
    UrlError(msg.into())
}

impl MysqlUrl {
    /// Reads `mysql://USER:PASS@HOST:PORT/DB`; every part after the
    /// scheme may be left out (see the fields for the defaults).
    pub fn parse(text: &str) -> Result<MysqlUrl, UrlError> {
        let rest = text.strip_prefix("mysql://").ok_or_else(|| {
            err("the endpoint must look like mysql://USER:PASS@127.0.0.1:3306/DB")
        })?;
        let (auth, hostpart) = match rest.rsplit_once('@') {
            Some((a, h)) => (a, h),
            None => ("", rest),
        };
        let (hostport, database) = match hostpart.split_once('/') {
            Some((h, d)) => (h, d),
            None => (hostpart, ""),
        };
        let (user, password) = match auth.split_once(':') {
            Some((u, p)) => (percent_decode(u)?, percent_decode(p)?),
            None => (percent_decode(auth)?, String::new()),
        };
        let database = percent_decode(database.split('?').next().unwrap_or(""))?;
        Ok(MysqlUrl {
            addr: resolve(hostport)?,
            user: if user.is_empty() { "root".into() } else { user },
            password,
            database: if database.is_empty() {
                "sbtest".into()
            } else {
                database
            },
        })
    }

    /// The endpoint without its password, for messages.
    pub fn describe(&self) -> String {
        format!("mysql://{}@{}/{}", self.user, self.addr, self.database)
    }
}

fn resolve(hostport: &str) -> Result<SocketAddr, UrlError> {
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, p) = v6
            .split_once(']')
            .ok_or_else(|| err(format!("unclosed `[` in host `{hostport}`")))?;
        (h, p.strip_prefix(':').unwrap_or(""))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p),
            None => (hostport, ""),
        }
    };
    let port: u16 = if port.is_empty() {
        3306
    } else {
        port.parse()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| err(format!("port `{port}` is not a number from 1 to 65535")))?
    };
    let ip: IpAddr = match host {
        "" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        h if crate::policy::is_localhost(h) => IpAddr::V4(Ipv4Addr::LOCALHOST),
        h => h.parse().map_err(|_| {
            err(format!(
                "host `{h}` is not an IP address; scalelab sends load only to loopback, \
                 so use 127.0.0.1 (or localhost)"
            ))
        })?,
    };
    // Loopback, or a server host the experiment's [hosts] names (as
    // PostgreSQL's connection strings: `wire::policy`).
    crate::policy::check(ip).map_err(|e| err(format!("host {e}")))?;
    Ok(SocketAddr::new(ip, port))
}

fn percent_decode(s: &str) -> Result<String, UrlError> {
    crate::pg::conninfo::percent_decode(s)
        .map_err(|e| err(e.to_string().replace("connection URI: ", "")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysbench_style_urls() {
        let u = MysqlUrl::parse("mysql://sb:p%40ss@127.0.0.1:3307/sbtest").unwrap();
        assert_eq!(u.user, "sb");
        assert_eq!(u.password, "p@ss");
        assert_eq!(u.addr, "127.0.0.1:3307".parse().unwrap());
        assert_eq!(u.database, "sbtest");
        assert!(!u.describe().contains("p@ss"));
        let u = MysqlUrl::parse("mysql://localhost").unwrap();
        assert_eq!((u.addr.port(), u.user.as_str()), (3306, "root"));
        let u = MysqlUrl::parse("mysql://localhost.:3307").unwrap();
        assert_eq!(u.addr, "127.0.0.1:3307".parse().unwrap());
        assert!(MysqlUrl::parse("mysql://127.0.0.1:0").is_err());
    }

    #[test]
    fn refuses_remote_hosts_and_other_schemes() {
        let e = MysqlUrl::parse("mysql://a:b@10.0.0.1/db").unwrap_err();
        assert!(e.to_string().contains("loopback"), "{e}");
        let e = MysqlUrl::parse("postgres://x@127.0.0.1").unwrap_err();
        assert!(e.to_string().contains("mysql://"), "{e}");
        let e = MysqlUrl::parse("mysql://a@127.0.0.1:99999/db").unwrap_err();
        assert!(e.to_string().contains("port"), "{e}");
    }
}
