//! The `[server]` settings of a managed PostgreSQL and the
//! `postgresql.conf` lines they become.

use crate::server::ServerError;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// Settings scalelab itself writes; users cannot override them.
const MANAGED: &[&str] = &[
    "listen_addresses",
    "port",
    "unix_socket_directories",
    "data_directory",
    "hba_file",
    "ident_file",
    "config_file",
    "include",
    "include_dir",
    "include_if_exists",
];

/// A postgresql.conf value as TOML spells it.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfValue {
    /// `on`/`off`.
    Bool(bool),
    /// An integer, in the setting's own unit.
    Int(i64),
    /// A real number.
    Float(f64),
    /// Anything else, quoted in postgresql.conf (`'128MB'`).
    Text(String),
}

impl<'de> serde::Deserialize<'de> for ConfValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ConfValue;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a PostgreSQL setting: text such as \"128MB\", a number, or true/false")
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<ConfValue, E> {
                Ok(ConfValue::Bool(b))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ConfValue, E> {
                Ok(ConfValue::Int(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ConfValue, E> {
                i64::try_from(n)
                    .map(ConfValue::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_f64<E: serde::de::Error>(self, x: f64) -> Result<ConfValue, E> {
                Ok(ConfValue::Float(x))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ConfValue, E> {
                Ok(ConfValue::Text(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl ConfValue {
    fn render(&self) -> String {
        match self {
            ConfValue::Bool(b) => if *b { "on" } else { "off" }.to_string(),
            ConfValue::Int(i) => i.to_string(),
            ConfValue::Float(f) => f.to_string(),
            ConfValue::Text(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''")),
        }
    }
}

/// `[server]` for `kind = "postgres"`. Unset settings keep PostgreSQL's
/// defaults; nothing is derived from the host's memory.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSettings {
    /// e.g. "128MB" (or a number of 8 kB pages).
    pub shared_buffers: Option<ConfValue>,
    /// `max_connections`; unset: PostgreSQL's default (100).
    pub max_connections: Option<u32>,
    /// `fsync`; unset: on.
    pub fsync: Option<bool>,
    /// on | off | local | remote_write | remote_apply (or true/false).
    pub synchronous_commit: Option<ConfValue>,
    /// Any other postgresql.conf settings, passed through.
    #[serde(default)]
    pub settings: BTreeMap<String, ConfValue>,
    /// Loopback port; default: a free one at each start.
    pub port: Option<u16>,
    /// Address to listen on; default 127.0.0.1. A multi-host run sets it to
    /// the server host's address from `[hosts]`.
    pub listen: Option<std::net::IpAddr>,
    /// Directory with postgres and initdb; default: the newest
    /// /usr/lib/postgresql/*/bin.
    pub bin_dir: Option<PathBuf>,
    /// Serve TLS (`ssl = on`) with a CA and certificate made at each start
    /// in its private socket directory, which go with it; the endpoint
    /// then asks for `sslmode=verify-full` and hands the load the CA.
    #[serde(default)]
    pub tls: bool,
    /// The certificate's key: `"ecdsa-p256"` (default) or `"rsa-2048"`.
    #[serde(default)]
    pub tls_key: crate::tls::cert::KeyType,
}

fn bad(message: String) -> ServerError {
    ServerError::Settings {
        kind: "postgres",
        message,
    }
}

impl PostgresSettings {
    /// Reads and checks the `[server]` table of kind `postgres`; errors name
    /// the field, and refuse the settings scalelab writes itself (port,
    /// listen address, socket directory, config files).
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: PostgresSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings("postgres", m))?;
        s.check()?;
        Ok(s)
    }

    fn check(&self) -> Result<(), ServerError> {
        for (name, value) in &self.settings {
            let valid_name = name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
                && name.starts_with(|c: char| c.is_ascii_lowercase());
            if !valid_name {
                return Err(bad(format!(
                    "settings.{name}: not a PostgreSQL setting name (lowercase letters, digits, \
                     `_` and `.`)"
                )));
            }
            if MANAGED.contains(&name.as_str()) {
                return Err(bad(format!(
                    "settings.{name} is managed by scalelab (it runs the server on a private \
                     loopback port and socket); remove it"
                )));
            }
            if self.typed().iter().any(|(n, _)| n == name) {
                return Err(bad(format!(
                    "`{name}` is set both as a server setting and in `settings`; keep one"
                )));
            }
            if let ConfValue::Text(t) = value {
                if t.chars().any(char::is_control) {
                    return Err(bad(format!(
                        "settings.{name}: the value has a control character"
                    )));
                }
            }
        }
        if let Some(name) = self
            .settings
            .keys()
            .find(|n| self.tls && ["ssl", "ssl_cert_file", "ssl_key_file"].contains(&n.as_str()))
        {
            return Err(bad(format!(
                "settings.{name} is set by `tls = true` (this start's own certificate); remove it"
            )));
        }
        if self.max_connections == Some(0) {
            return Err(bad("max_connections must be at least 1".into()));
        }
        if self.port == Some(0) {
            return Err(bad(
                "port must be 1-65535, or left out for a free port".into()
            ));
        }
        Ok(())
    }

    /// The first-class settings that are set, as (name, value).
    fn typed(&self) -> Vec<(String, ConfValue)> {
        let mut out = Vec::new();
        if let Some(v) = &self.shared_buffers {
            out.push(("shared_buffers".to_string(), v.clone()));
        }
        if let Some(n) = self.max_connections {
            out.push(("max_connections".to_string(), ConfValue::Int(i64::from(n))));
        }
        if let Some(b) = self.fsync {
            out.push(("fsync".to_string(), ConfValue::Bool(b)));
        }
        if let Some(v) = &self.synchronous_commit {
            out.push(("synchronous_commit".to_string(), v.clone()));
        }
        out
    }

    /// The address the server listens on.
    pub fn listen_addr(&self) -> std::net::IpAddr {
        self.listen.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into())
    }

    /// `pg_hba.conf`: local and loopback connections trusted, and the
    /// lab's own subnet too when it listens on a `[hosts]` address (a
    /// multi-host run: the load comes from the client hosts).
    pub fn hba_rules(&self) -> String {
        let mut rules = String::from(
            "# Written by scalelab: local and loopback connections are trusted.\n\
             local all all trust\n\
             host all all 127.0.0.1/32 trust\n",
        );
        if self.listen.is_some() {
            rules.push_str("host all all samenet trust\n");
        }
        rules
    }

    /// The configuration file of a server on a host without an agent:
    /// initdb's own `postgresql.conf` in `data_dir`, then the lines
    /// [`Self::render_conf`] writes on Linux.
    pub fn render_bare_conf(
        &self,
        data_dir: &std::path::Path,
        port: u16,
        socket_dir: &std::path::Path,
    ) -> String {
        let initdb = ConfValue::Text(data_dir.join("postgresql.conf").display().to_string());
        format!(
            "# initdb's settings, then scalelab's.\ninclude {}\n{}",
            initdb.render(),
            self.render_conf(port, socket_dir)
        )
    }

    /// The conf include written at every start: the private listener, then
    /// the user's settings.
    pub fn render_conf(&self, port: u16, socket_dir: &std::path::Path) -> String {
        let mut out = String::from("# Written by scalelab at each start; edits are overwritten.\n");
        let socket = ConfValue::Text(socket_dir.display().to_string());
        let _ = writeln!(out, "listen_addresses = '{}'", self.listen_addr());
        let _ = writeln!(out, "port = {port}");
        let _ = writeln!(out, "unix_socket_directories = {}", socket.render());
        if self.tls {
            let file = |name: &str| {
                ConfValue::Text(socket_dir.join("tls").join(name).display().to_string())
            };
            let _ = writeln!(out, "ssl = on");
            let _ = writeln!(out, "ssl_cert_file = {}", file("server.pem").render());
            let _ = writeln!(out, "ssl_key_file = {}", file("server.key").render());
        }
        let user = self.typed().into_iter().chain(self.settings.clone());
        for (name, value) in user {
            let _ = writeln!(out, "{name} = {}", value.render());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<PostgresSettings, ServerError> {
        PostgresSettings::parse(&s.parse::<toml::Table>().unwrap())
    }

    /// `tls = true` writes `ssl = on` and the start's files, and refuses
    /// the settings it writes itself.
    #[test]
    fn tls_serves_the_starts_certificate_and_owns_its_settings() {
        let s = parse("tls = true").unwrap();
        let conf = s.render_conf(5432, std::path::Path::new("/tmp/scalelab-pg-1"));
        assert!(conf.contains("ssl = on\n"), "{conf}");
        assert!(
            conf.contains("ssl_cert_file = '/tmp/scalelab-pg-1/tls/server.pem'\n"),
            "{conf}"
        );
        assert!(
            conf.contains("ssl_key_file = '/tmp/scalelab-pg-1/tls/server.key'\n"),
            "{conf}"
        );
        assert!(!parse("")
            .unwrap()
            .render_conf(5432, std::path::Path::new("/x"))
            .contains("ssl"));
        let e = parse("tls = true\nsettings = { ssl_key_file = \"/k\" }").unwrap_err();
        assert!(e.to_string().contains("set by `tls = true`"), "{e}");
    }

    #[test]
    fn settings_render_into_conf_lines() {
        let s = parse(
            r#"shared_buffers = "64MB"
               fsync = false
               synchronous_commit = "off"
               max_connections = 300
               settings = { work_mem = "4MB", default_transaction_isolation = "serializable", jit = false, random_page_cost = 1.5, application_name = "it's" }"#,
        )
        .unwrap();
        let conf = s.render_conf(5433, std::path::Path::new("/tmp/sock"));
        for line in [
            "listen_addresses = '127.0.0.1'",
            "port = 5433",
            "unix_socket_directories = '/tmp/sock'",
            "shared_buffers = '64MB'",
            "fsync = off",
            "synchronous_commit = 'off'",
            "max_connections = 300",
            "work_mem = '4MB'",
            "jit = off",
            "random_page_cost = 1.5",
            "application_name = 'it''s'",
        ] {
            assert!(
                conf.lines().any(|l| l == line),
                "missing `{line}` in\n{conf}"
            );
        }
    }

    #[test]
    fn defaults_set_nothing() {
        let s = parse("").unwrap();
        let conf = s.render_conf(1, std::path::Path::new("/s"));
        assert_eq!(conf.lines().count(), 4, "{conf}");
    }

    #[test]
    fn bad_settings_name_the_field_and_the_fix() {
        let e = parse("shared_buffer = \"1GB\"").unwrap_err().to_string();
        assert!(e.contains("shared_buffer"), "{e}");
        let e = parse("settings = { port = 5 }").unwrap_err().to_string();
        assert!(e.contains("managed by scalelab"), "{e}");
        let e = parse("fsync = false\nsettings = { fsync = true }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("both"), "{e}");
        let e = parse("settings = { \"Work Mem\" = 1 }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a PostgreSQL setting name"), "{e}");
        let e = parse("settings = { work_mem = \"4MB\\n#x\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("control character"), "{e}");
        assert!(parse("max_connections = -1").is_err());
    }
}
