//! NSD, the lab's authoritative server: the target of kind `nsd`, and the
//! upstream of the resolver kinds. Response rate limiting is off (Debian's
//! default limit answers about 3k qps and drops the rest).

use super::{binary, check_threads, zones, DnsLab, LabServer, Launch, Prepare};
use crate::server::ServerError;
use std::path::Path;

const KIND: &str = "nsd";

/// The `nsd` entry of the server-kind registry.
pub const SERVER_KIND: crate::server::ServerKind = crate::server::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::DNS),
    parallelism: &["threads"],
    requires: &[super::NSD_PACKAGE, super::IPROUTE],
    compile: |t| {
        let settings = NsdSettings::parse(t)?;
        Ok(crate::server::plan::of(settings, |s, base| {
            Ok(Box::new(lab(s.clone(), base)))
        }))
    },
    runs_under_agent: true,
    listens_on_host_address: false,
    dns_lab: Some(target),
    start_estimate: std::time::Duration::from_millis(2000),
    facts: None,
};

/// `[server]` settings of kind `nsd`.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NsdSettings {
    /// NSD `server-count`: server processes.
    #[serde(default = "super::one")]
    pub threads: u32,
    /// Raw lines appended to NSD's `server:` section.
    pub extra: Option<String>,
}

impl NsdSettings {
    /// Reads and checks the `[server]` table of kind `nsd`; errors name the
    /// field.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: NsdSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        check_threads(KIND, "threads", s.threads)?;
        Ok(s)
    }
}

/// The NSD target: a lab whose only server is NSD.
pub fn target(t: &toml::Table, base_dir: &Path) -> Result<DnsLab, ServerError> {
    Ok(lab(NsdSettings::parse(t)?, base_dir))
}

/// The lab of checked settings (see [`target`]).
pub fn lab(s: NsdSettings, base_dir: &Path) -> DnsLab {
    let nsd = Nsd {
        threads: s.threads,
        extra: s.extra,
    };
    DnsLab::new(KIND, vec![Box::new(nsd)], base_dir)
}

/// NSD as one of the lab's servers.
pub struct Nsd {
    /// NSD `server-count`: server processes.
    pub threads: u32,
    /// Raw lines appended to NSD's `server:` section.
    pub extra: Option<String>,
}

impl Nsd {
    fn render(&self, dir: &Path, zone_list: &[String], veth: Option<&str>) -> String {
        let d = dir.display();
        let mut c = format!(
            "# written by scalelab\nserver:\n  ip-address: {addr}\n{also}  port: 53\n\
             \x20 server-count: {threads}\n  reuseport: yes\n  username: \"\"\n  chroot: \"\"\n\
             \x20 zonesdir: \"{d}/zones\"\n  database: \"\"\n  zonelistfile: \"{d}/nsd.zonelist\"\n\
             \x20 xfrdfile: \"{d}/nsd.xfrd\"\n  xfrdir: \"{d}\"\n  pidfile: \"{d}/nsd.pid\"\n\
             \x20 logfile: \"{d}/nsd.log\"\n  verbosity: 1\n\
             \x20 rrl-ratelimit: 0\n  rrl-whitelist-ratelimit: 0\n{extra}\
             remote-control:\n  control-enable: no\n",
            addr = zones::AUTH_ADDR,
            also = veth
                .map(|v| format!("  ip-address: {v}\n"))
                .unwrap_or_default(),
            threads = self.threads,
            extra = self
                .extra
                .as_ref()
                .map(|e| format!("  {e}\n"))
                .unwrap_or_default(),
        );
        for z in zone_list {
            c.push_str(&format!(
                "zone:\n  name: \"{z}\"\n  zonefile: \"{}\"\n",
                zones::file_name(z)
            ));
        }
        c
    }
}

impl LabServer for Nsd {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn prepare(&self, at: &Prepare<'_>) -> Result<Launch, ServerError> {
        let dir = at.dir;
        let program = binary(KIND, &["/usr/sbin/nsd"], "nsd")?;
        let config = self.render(dir, at.zones, at.veth);
        let conf = dir.join("nsd.conf");
        std::fs::write(&conf, &config).map_err(|e| ServerError::io(&conf, e))?;
        Ok(Launch {
            program,
            args: vec!["-d".into(), "-c".into(), conf.into()],
            config,
            log: Some(dir.join("nsd.log")),
            tls: None,
        })
    }

    fn version(&self) -> Option<String> {
        super::version_line("/usr/sbin/nsd", &["-v"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_turns_rrl_off_and_lists_zones() {
        let nsd = Nsd {
            threads: 2,
            extra: None,
        };
        let c = nsd.render(Path::new("/x"), &["bench.test.".into()], None);
        assert!(!c.contains("198.19"), "no veth address unless asked");
        let v = nsd.render(Path::new("/x"), &[], Some("198.19.254.2"));
        assert!(
            v.contains("ip-address: 127.0.0.2\n  ip-address: 198.19.254.2\n"),
            "{v}"
        );
        assert!(c.contains("rrl-ratelimit: 0\n"));
        assert!(c.contains("server-count: 2\n"));
        assert!(c.contains("ip-address: 127.0.0.2\n"));
        assert!(c.contains("name: \"bench.test.\"\n  zonefile: \"bench.test.zone\""));
    }

    #[test]
    fn settings_are_checked() {
        let t: toml::Table = toml::from_str("threads = 0").unwrap();
        assert!(NsdSettings::parse(&t)
            .unwrap_err()
            .to_string()
            .contains("threads"));
        let t: toml::Table = toml::from_str("workers = 1").unwrap();
        assert!(NsdSettings::parse(&t)
            .unwrap_err()
            .to_string()
            .contains("workers"));
    }
}
