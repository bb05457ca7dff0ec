//! BIND 9 as the lab's resolver (kind `bind`): `named -n THREADS` as in the
//! seed, forwarding only to a dead address, a root hints file naming only
//! that address, and a static stub per lab zone pointing at NSD.

use super::nsd::Nsd;
use super::{binary, check_threads, zones, DnsLab, LabServer, Launch, Prepare};
use crate::server::ServerError;
use std::path::Path;

const KIND: &str = "bind";

/// BIND's `named`, a resolver of the `bind` and `resolver` labs.
pub(crate) const BIND_PACKAGE: crate::kinds::Requirement = crate::kinds::Requirement {
    what: "BIND 9 (named)",
    package: "bind9",
    paths: &["/usr/sbin/named"],
};

/// The `bind` entry of the server-kind registry.
pub const SERVER_KIND: crate::server::ServerKind = crate::server::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::DNS),
    parallelism: &["threads", "nsd_threads"],
    requires: &[super::NSD_PACKAGE, BIND_PACKAGE, super::IPROUTE],
    compile: |t| {
        let settings = BindSettings::parse(t)?;
        Ok(crate::server::plan::of(settings, |s, base| {
            Ok(Box::new(lab(s.clone(), base)))
        }))
    },
    runs_under_agent: true,
    listens_on_host_address: false,
    dns_lab: Some(target),
    start_estimate: std::time::Duration::from_millis(3000),
    facts: None,
};

/// `[server]` settings of kind `bind`.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BindSettings {
    /// `named -n`: worker threads.
    #[serde(default = "super::one")]
    pub threads: u32,
    /// `max-cache-size`, such as "256m" or "90%".
    pub max_cache_size: Option<String>,
    /// NSD server processes behind the resolver.
    #[serde(default = "super::one")]
    pub nsd_threads: u32,
    /// Raw statements appended inside `options { }`.
    pub extra: Option<String>,
}

impl BindSettings {
    /// Reads and checks the `[server]` table of kind `bind`; errors name
    /// the field.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: BindSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        check_threads(KIND, "threads", s.threads)?;
        check_threads(KIND, "nsd_threads", s.nsd_threads)?;
        if let Some(v) = &s.max_cache_size {
            let ok = v.ends_with('%') && v[..v.len() - 1].parse::<u8>().is_ok()
                || crate::units::parse_bytes(v).is_ok();
            if !ok {
                return Err(ServerError::Settings {
                    kind: KIND,
                    message: format!(
                        "max_cache_size must be a size such as \"256m\" or a share such as \"50%\", not `{v}`"
                    ),
                });
            }
        }
        Ok(s)
    }
}

/// The BIND target: NSD, then named in front of it.
pub fn target(t: &toml::Table, base_dir: &Path) -> Result<DnsLab, ServerError> {
    Ok(lab(BindSettings::parse(t)?, base_dir))
}

/// The lab of checked settings (see [`target`]).
pub fn lab(s: BindSettings, base_dir: &Path) -> DnsLab {
    let nsd = Nsd {
        threads: s.nsd_threads,
        extra: None,
        tls: None,
    };
    DnsLab::new(KIND, vec![Box::new(nsd), Box::new(Bind(s))], base_dir)
}

/// BIND (`named`) as the lab's resolver, in front of NSD.
pub struct Bind(pub BindSettings);

impl Bind {
    fn render(&self, dir: &Path, zone_list: &[String], veth: Option<&str>) -> String {
        let s = &self.0;
        let (also, net) = match veth {
            Some(v) => (format!(" {v};"), format!(" {};", super::veth::NET)),
            None => (String::new(), String::new()),
        };
        let d = dir.display();
        let cache = s
            .max_cache_size
            .as_ref()
            .map(|v| format!("    max-cache-size {v};\n"))
            .unwrap_or_default();
        let extra = s
            .extra
            .as_ref()
            .map(|e| format!("    {e}\n"))
            .unwrap_or_default();
        let mut c = format!(
            "# written by scalelab\noptions {{\n    directory \"{d}\";\n    pid-file \"{d}/named.pid\";\n\
             \x20   session-keyfile \"{d}/session.key\";\n    managed-keys-directory \"{d}\";\n\
             \x20   listen-on port 53 {{ {addr};{also} }};\n    listen-on-v6 {{ none; }};\n\
             \x20   recursion yes;\n    allow-query {{ 127.0.0.0/8;{net} }};\n    allow-recursion {{ 127.0.0.0/8;{net} }};\n\
             \x20   forward only;\n    forwarders {{ {dead}; }};\n    dnssec-validation no;\n\
             \x20   empty-zones-enable no;\n    notify no;\n{cache}{extra}}};\n\
             controls {{ }};\n\
             zone \".\" {{ type hint; file \"{d}/root.hints\"; }};\n",
            addr = zones::RESOLVER_ADDR,
            dead = zones::DEAD_ROOT_ADDR,
        );
        for z in zone_list {
            c.push_str(&format!(
                "zone \"{z}\" {{ type static-stub; server-addresses {{ {}; }}; forwarders {{ }}; }};\n",
                zones::AUTH_ADDR
            ));
        }
        c
    }
}

/// A root hints file whose only root server is the dead address.
fn root_hints() -> String {
    format!(
        ".                 3600000 NS  dead-root.invalid.\n\
         dead-root.invalid. 3600000 A   {}\n",
        zones::DEAD_ROOT_ADDR
    )
}

impl LabServer for Bind {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn prepare(&self, at: &Prepare<'_>) -> Result<Launch, ServerError> {
        let dir = at.dir;
        let program = binary(KIND, &["/usr/sbin/named"], "bind9")?;
        let hints = dir.join("root.hints");
        std::fs::write(&hints, root_hints()).map_err(|e| ServerError::io(&hints, e))?;
        let config = self.render(dir, at.zones, at.veth);
        let conf = dir.join("named.conf");
        std::fs::write(&conf, &config).map_err(|e| ServerError::io(&conf, e))?;
        Ok(Launch {
            program,
            args: vec![
                "-g".into(),
                "-c".into(),
                conf.into(),
                "-n".into(),
                self.0.threads.to_string().into(),
            ],
            config,
            log: None,
            tls: None,
        })
    }

    fn version(&self) -> Option<String> {
        super::version_line("/usr/sbin/named", &["-v"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_a_veth_path_it_also_listens_there_and_answers_that_net_only() {
        let b = Bind(BindSettings::parse(&toml::Table::new()).unwrap());
        let c = b.render(Path::new("/x"), &[], Some("198.19.254.2"));
        assert!(
            c.contains("listen-on port 53 { 127.0.0.1; 198.19.254.2; };"),
            "{c}"
        );
        assert!(
            c.contains("allow-recursion { 127.0.0.0/8; 198.19.254.0/24; };"),
            "{c}"
        );
        let plain = b.render(Path::new("/x"), &[], None);
        assert!(
            plain.contains("listen-on port 53 { 127.0.0.1; };"),
            "{plain}"
        );
    }

    #[test]
    fn config_forwards_only_to_a_dead_root() {
        let t: toml::Table = toml::from_str("threads = 8\nmax_cache_size = \"50%\"").unwrap();
        let b = Bind(BindSettings::parse(&t).unwrap());
        let c = b.render(Path::new("/x"), &["bench.test.".into()], None);
        assert!(c.contains("forward only;\n    forwarders { 127.0.0.9; };"));
        assert!(c.contains("zone \"bench.test.\" { type static-stub; server-addresses { 127.0.0.2; }; forwarders { }; };"));
        assert!(c.contains("dnssec-validation no;"));
        assert!(c.contains("max-cache-size 50%;"));
        assert!(root_hints().contains("127.0.0.9"));
        let bad: toml::Table = toml::from_str("max_cache_size = \"huge\"").unwrap();
        assert!(BindSettings::parse(&bad).is_err());
    }
}
