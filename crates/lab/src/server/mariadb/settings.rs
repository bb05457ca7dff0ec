//! The `[server]` settings of a managed MariaDB and the `my.cnf` they
//! become.

use crate::server::ServerError;
use std::fmt::Write;
use std::path::Path;

/// The server's unix socket, in its private directory.
pub const SOCKET: &str = "mysqld.sock";

const KIND: &str = "mariadb";

/// Options scalelab itself writes; `extra` cannot override them.
const MANAGED: &[&str] = &[
    "port",
    "bind-address",
    "bind_address",
    "socket",
    "datadir",
    "pid-file",
    "pid_file",
    "log-error",
    "log_error",
    "user",
    "init-file",
    "init_file",
    "tmpdir",
];

/// How MariaDB maps connections to threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadHandling {
    /// One server thread per client connection (the default).
    #[default]
    OneThreadPerConnection,
    /// A pool of `thread_pool_size` thread groups serving all connections.
    PoolOfThreads,
}

impl ThreadHandling {
    /// The value as `my.cnf` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ThreadHandling::OneThreadPerConnection => "one-thread-per-connection",
            ThreadHandling::PoolOfThreads => "pool-of-threads",
        }
    }
}

/// `[server]` for `kind = "mariadb"`. Unset settings keep MariaDB's
/// defaults; nothing is derived from the host.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MariadbSettings {
    /// `thread_handling`; default one thread per connection.
    #[serde(default)]
    pub thread_handling: ThreadHandling,
    /// Thread groups of the pool (pool-of-threads only; default: CPUs).
    pub thread_pool_size: Option<u32>,
    /// e.g. "256M", "1G".
    pub innodb_buffer_pool_size: Option<String>,
    /// `max_connections`; unset: MariaDB's default (151).
    pub max_connections: Option<u32>,
    /// 0, 1 (durable, MariaDB's default) or 2.
    pub innodb_flush_log_at_trx_commit: Option<u8>,
    /// Any other `my.cnf` lines for `[mysqld]`, e.g. `["table_open_cache = 4000"]`.
    #[serde(default)]
    pub extra: Vec<String>,
    /// Fixed loopback port; default: a free one at each start.
    pub port: Option<u16>,
    /// Address to listen on; default 127.0.0.1. A multi-host run sets it
    /// to the server host's address from `[hosts]`.
    pub listen: Option<std::net::IpAddr>,
    /// Serve TLS (`ssl_cert`, `ssl_key`) with a CA and certificate made at
    /// each start in its private directory, which go with it; the endpoint
    /// hands the load the CA (`ssl_mode` then defaults to
    /// `verify_identity`).
    #[serde(default)]
    pub tls: bool,
    /// The certificate's key: `"ecdsa-p256"` (default) or `"rsa-2048"`.
    #[serde(default)]
    pub tls_key: crate::tls::cert::KeyType,
}

fn settings_err(message: String) -> ServerError {
    ServerError::Settings {
        kind: KIND,
        message,
    }
}

impl MariadbSettings {
    /// Reads and checks the `[server]` table of kind `mariadb`; errors name the field.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: MariadbSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        if s.thread_pool_size == Some(0) || s.thread_pool_size.is_some_and(|n| n > 128) {
            return Err(settings_err(
                "thread_pool_size must be from 1 to 128 (thread groups)".into(),
            ));
        }
        if s.thread_pool_size.is_some() && s.thread_handling != ThreadHandling::PoolOfThreads {
            return Err(settings_err(
                "thread_pool_size needs thread_handling = \"pool-of-threads\"".into(),
            ));
        }
        if let Some(size) = &s.innodb_buffer_pool_size {
            crate::units::parse_bytes(size).map_err(|e| {
                settings_err(format!(
                    "innodb_buffer_pool_size = \"{size}\": {e} (write a size such as \"256M\")"
                ))
            })?;
        }
        if s.max_connections == Some(0) {
            return Err(settings_err("max_connections must be at least 1".into()));
        }
        if s.innodb_flush_log_at_trx_commit.is_some_and(|v| v > 2) {
            return Err(settings_err(
                "innodb_flush_log_at_trx_commit must be 0, 1 or 2".into(),
            ));
        }
        for line in &s.extra {
            let name = option_name(line);
            if name.is_empty() || line.contains('\n') || line.trim_start().starts_with('[') {
                return Err(settings_err(format!(
                    "extra line `{line}` is not one `name = value` my.cnf option"
                )));
            }
            if MANAGED.contains(&name.as_str()) {
                return Err(settings_err(format!(
                    "extra sets `{name}`, which scalelab manages itself; remove it"
                )));
            }
        }
        Ok(s)
    }

    /// The address the server listens on.
    pub fn listen_addr(&self) -> std::net::IpAddr {
        self.listen.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into())
    }

    /// The workload's endpoint on `port`: [`super::USER`] on
    /// [`super::DATABASE`] at the listen address.
    pub fn url(&self, port: u16) -> String {
        let addr = std::net::SocketAddr::new(self.listen_addr(), port);
        format!(
            "mysql://{}:{}@{addr}/{}",
            super::USER,
            super::PASSWORD,
            super::DATABASE
        )
    }

    /// `init.sql`: the workload's database and user, who may connect from
    /// loopback, or from anywhere when the server listens on a `[hosts]`
    /// address (a multi-host run: the load comes from the client hosts).
    pub fn init_sql(&self) -> String {
        let (user, password, db) = (super::USER, super::PASSWORD, super::DATABASE);
        let from = if self.listen.is_some() {
            "%"
        } else {
            "127.0.0.1"
        };
        format!(
            "CREATE DATABASE IF NOT EXISTS {db};\n\
             CREATE USER IF NOT EXISTS '{user}'@'{from}' IDENTIFIED BY '{password}';\n\
             GRANT ALL ON *.* TO '{user}'@'{from}';\n"
        )
    }

    /// The variables to read back with SHOW GLOBAL VARIABLES.
    pub fn variable_names(&self) -> Vec<String> {
        let mut names: Vec<String> = [
            "thread_handling",
            "thread_pool_size",
            "innodb_buffer_pool_size",
            "max_connections",
            "innodb_flush_log_at_trx_commit",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(self.extra.iter().map(|l| option_name(l).replace('-', "_")));
        names
    }

    /// The `my.cnf` for a server in `dir` on `port` (its socket is
    /// `dir/` plus the `SOCKET` name).
    pub fn render(&self, dir: &Path, port: u16, user: &str) -> String {
        // Quoted, so a SCALELAB_WORKDIR with spaces or `#` stays one value.
        let d = |rel: &str| crate::server::conf_path::quoted(&dir.join(rel));
        let mut out = String::from("# written by scalelab\n[mysqld]\n");
        let _ = write!(
            out,
            "user = {user}\ndatadir = {data}\nsocket = {socket}\n\
             pid-file = {pid}\nlog-error = {log}\ntmpdir = {tmp}\n\
             port = {port}\nbind-address = {bind}\nskip-name-resolve\n\
             init-file = {init}\n",
            data = d("data"),
            socket = d(SOCKET),
            pid = d("mysqld.pid"),
            log = d("error.log"),
            tmp = d("tmp"),
            init = d("init.sql"),
            bind = self.listen_addr(),
        );
        let _ = writeln!(out, "thread_handling = {}", self.thread_handling.as_str());
        if self.tls {
            let _ = write!(
                out,
                "ssl_cert = {}\nssl_key = {}\nssl_ca = {}\n",
                d("tls/server.pem"),
                d("tls/server.key"),
                d("tls/ca.pem")
            );
        }
        let mut opt = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                let _ = writeln!(out, "{name} = {v}");
            }
        };
        opt(
            "thread_pool_size",
            self.thread_pool_size.map(|v| v.to_string()),
        );
        let pool = self.innodb_buffer_pool_size.as_deref();
        let pool = pool.and_then(|p| crate::units::parse_bytes(p).ok());
        opt("innodb_buffer_pool_size", pool.map(|b| b.0.to_string()));
        opt(
            "max_connections",
            self.max_connections.map(|v| v.to_string()),
        );
        opt(
            "innodb_flush_log_at_trx_commit",
            self.innodb_flush_log_at_trx_commit.map(|v| v.to_string()),
        );
        for line in &self.extra {
            let _ = writeln!(out, "{}", line.trim());
        }
        out
    }
}

/// The option a `name = value` (or bare `name`) line sets.
fn option_name(line: &str) -> String {
    line.split('=')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<MariadbSettings, ServerError> {
        MariadbSettings::parse(&text.parse().unwrap())
    }

    /// `tls = true` points MariaDB at the start's certificate, key and CA.
    #[test]
    fn tls_serves_the_starts_certificate() {
        let c = parse("tls = true")
            .unwrap()
            .render(Path::new("/w/m"), 3306, "root");
        assert!(c.contains("ssl_cert = \"/w/m/tls/server.pem\"\n"), "{c}");
        assert!(c.contains("ssl_key = \"/w/m/tls/server.key\"\n"), "{c}");
        assert!(c.contains("ssl_ca = \"/w/m/tls/ca.pem\"\n"), "{c}");
        assert!(!parse("")
            .unwrap()
            .render(Path::new("/w/m"), 3306, "root")
            .contains("ssl"));
    }

    #[test]
    fn settings_name_the_bad_field_and_the_fix() {
        let e = parse("thread_handling = \"pool\"").unwrap_err().to_string();
        assert!(e.contains("pool-of-threads"), "{e}");
        let e = parse("thread_pool_size = 4").unwrap_err().to_string();
        assert!(e.contains("pool-of-threads"), "{e}");
        let e = parse("innodb_buffer_pool_size = \"lots\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("256M"), "{e}");
        let e = parse("innodb_flush_log_at_trx_commit = 3")
            .unwrap_err()
            .to_string();
        assert!(e.contains("0, 1 or 2"), "{e}");
        let e = parse("extra = [\"port = 1\"]").unwrap_err().to_string();
        assert!(e.contains("manages"), "{e}");
        let e = parse("thread_count = 4").unwrap_err().to_string();
        assert!(e.contains("thread_count"), "{e}");
    }

    #[test]
    fn config_is_private_and_on_loopback() {
        let s = parse(
            "thread_handling = \"pool-of-threads\"\nthread_pool_size = 2\n\
             innodb_flush_log_at_trx_commit = 2\nextra = [\"table_open_cache = 400\"]",
        )
        .unwrap();
        let cnf = s.render(Path::new("/x"), 3307, "root");
        for line in [
            "datadir = \"/x/data\"",
            "bind-address = 127.0.0.1",
            "port = 3307",
            "thread_handling = pool-of-threads",
            "thread_pool_size = 2",
            "innodb_flush_log_at_trx_commit = 2",
            "table_open_cache = 400",
        ] {
            assert!(cnf.contains(line), "{line} missing from\n{cnf}");
        }
        assert!(s.variable_names().contains(&"table_open_cache".to_string()));
    }
}
