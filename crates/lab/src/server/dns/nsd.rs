//! NSD, the lab's authoritative server: the target of kind `nsd`, and the
//! upstream of the resolver kinds. Response rate limiting is off (Debian's
//! default limit answers about 3k qps and drops the rest). With `tls =
//! true` it also serves DNS over TLS on port 853 with its start's own
//! certificate. Its control socket (a Unix socket in the run directory)
//! gives `nsd-control stats_noreset` its counters, `num.tls` among them.

use super::{binary, check_threads, zones, DnsLab, LabServer, Launch, Prepare};
use crate::server::ServerError;
use crate::tls::cert::{KeyType, ServerCert};
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
    /// Also serve DNS over TLS (RFC 7858) on port 853 of its address, with
    /// this start's own CA and certificate (`tls-service-pem`); the
    /// endpoint then names the port (`dot=`) and hands the load the CA.
    #[serde(default)]
    pub tls: bool,
    /// The certificate's key: `"ecdsa-p256"` (default) or `"rsa-2048"`.
    #[serde(default)]
    pub tls_key: KeyType,
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
        tls: s.tls.then_some(s.tls_key),
    };
    DnsLab::new(KIND, vec![Box::new(nsd)], base_dir)
}

/// NSD as one of the lab's servers.
pub struct Nsd {
    /// NSD `server-count`: server processes.
    pub threads: u32,
    /// Raw lines appended to NSD's `server:` section.
    pub extra: Option<String>,
    /// DNS over TLS on [`DOT_PORT`], with a certificate of this key.
    pub tls: Option<KeyType>,
}

/// The port NSD serves DNS over TLS on (RFC 7858's).
pub const DOT_PORT: u16 = 853;

/// The control socket inside a run directory.
pub fn control_socket(dir: &Path) -> std::path::PathBuf {
    dir.join("nsd.ctl")
}

impl Nsd {
    fn render(
        &self,
        dir: &Path,
        zone_list: &[String],
        veth: Option<&str>,
        tls: Option<&ServerCert>,
    ) -> String {
        let d = dir.display();
        let mut c = format!(
            "# written by scalelab\nserver:\n  ip-address: {addr}\n{also}  port: 53\n\
             \x20 server-count: {threads}\n  reuseport: yes\n  username: \"\"\n  chroot: \"\"\n\
             \x20 zonesdir: \"{d}/zones\"\n  database: \"\"\n  zonelistfile: \"{d}/nsd.zonelist\"\n\
             \x20 xfrdfile: \"{d}/nsd.xfrd\"\n  xfrdir: \"{d}\"\n  pidfile: \"{d}/nsd.pid\"\n\
             \x20 logfile: \"{d}/nsd.log\"\n  verbosity: 1\n\
             \x20 rrl-ratelimit: 0\n  rrl-whitelist-ratelimit: 0\n{tls}{extra}\
             remote-control:\n  control-enable: yes\n  control-interface: \"{ctl}\"\n",
            addr = zones::AUTH_ADDR,
            also = veth
                .map(|v| format!("  ip-address: {v}\n"))
                .unwrap_or_default(),
            threads = self.threads,
            ctl = control_socket(dir).display(),
            tls = tls
                .map(|c| {
                    format!(
                        "  ip-address: {}@{DOT_PORT}\n  tls-port: {DOT_PORT}\n\
                         \x20 tls-service-pem: \"{}\"\n  tls-service-key: \"{}\"\n",
                        zones::AUTH_ADDR,
                        c.cert_file.display(),
                        c.key_file.display()
                    )
                })
                .unwrap_or_default(),
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
        crate::server::conf_path::check_socket(KIND, &control_socket(dir))?;
        let cert = match self.tls {
            Some(key) => Some(super::start_cert(KIND, dir, key, zones::AUTH_ADDR)?),
            None => None,
        };
        let config = self.render(dir, at.zones, at.veth, cert.as_ref());
        let conf = dir.join("nsd.conf");
        std::fs::write(&conf, &config).map_err(|e| ServerError::io(&conf, e))?;
        Ok(Launch {
            program,
            args: vec!["-d".into(), "-c".into(), conf.into()],
            config,
            log: Some(dir.join("nsd.log")),
            tls: cert.map(|c| super::LaunchTls {
                ca_pem: c.ca_pem,
                port: DOT_PORT,
                doh_port: None,
            }),
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
            tls: None,
        };
        let c = nsd.render(Path::new("/x"), &["bench.test.".into()], None, None);
        assert!(!c.contains("198.19"), "no veth address unless asked");
        assert!(!c.contains("tls-port"), "no TLS unless asked");
        assert!(c.contains("control-interface: \"/x/nsd.ctl\""), "{c}");
        let v = nsd.render(Path::new("/x"), &[], Some("198.19.254.2"), None);
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
