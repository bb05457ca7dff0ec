//! Unbound as the lab's resolver (kind `unbound`): `num-threads`, cache
//! sizes, stubs for the lab's zones at NSD, the root stubbed to a dead
//! address and refused, and `remote-control` on a unix socket so tests can
//! read `unbound-control stats_noreset`, and so the limiter reads each
//! thread's queries ([`thread_queries`]).

use super::nsd::Nsd;
use super::{binary, check_threads, zones, DnsLab, LabServer, Launch, Prepare};
use crate::server::ServerError;
use std::path::Path;

const KIND: &str = "unbound";

/// Unbound, a resolver of the `unbound` and `resolver` labs.
pub(crate) const UNBOUND_PACKAGE: crate::kinds::Requirement = crate::kinds::Requirement {
    what: "Unbound",
    package: "unbound",
    paths: &["/usr/sbin/unbound"],
};

/// The `unbound` entry of the server-kind registry.
pub const SERVER_KIND: crate::server::ServerKind = crate::server::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::DNS),
    parallelism: &["threads", "nsd_threads"],
    requires: &[super::NSD_PACKAGE, UNBOUND_PACKAGE, super::IPROUTE],
    compile: |t| {
        let settings = UnboundSettings::parse(t)?;
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

/// `[server]` settings of kind `unbound`.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnboundSettings {
    /// `num-threads`.
    #[serde(default = "super::one")]
    pub threads: u32,
    /// `msg-cache-size`, such as "64m".
    pub msg_cache_size: Option<String>,
    /// `rrset-cache-size`, such as "128m".
    pub rrset_cache_size: Option<String>,
    /// NSD server processes behind the resolver.
    #[serde(default = "super::one")]
    pub nsd_threads: u32,
    /// Raw lines appended to Unbound's `server:` section.
    pub extra: Option<String>,
    /// Also serve DNS over TLS (RFC 7858) on port 853 and DNS over HTTPS
    /// (RFC 8484, HTTP/2) on port 443 of the resolver's address, with this
    /// start's own CA and certificate (`tls-service-pem`); the endpoint
    /// then names the ports (`dot=`, `doh=`) and hands the load the CA.
    #[serde(default)]
    pub tls: bool,
    /// The certificate's key: `"ecdsa-p256"` (default) or `"rsa-2048"`.
    #[serde(default)]
    pub tls_key: crate::tls::cert::KeyType,
}

impl UnboundSettings {
    /// Reads and checks the `[server]` table of kind `unbound`; errors
    /// name the field.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: UnboundSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        check_threads(KIND, "threads", s.threads)?;
        check_threads(KIND, "nsd_threads", s.nsd_threads)?;
        for (field, v) in [
            ("msg_cache_size", &s.msg_cache_size),
            ("rrset_cache_size", &s.rrset_cache_size),
        ] {
            if let Some(v) = v {
                crate::units::parse_bytes(v).map_err(|_| ServerError::Settings {
                    kind: KIND,
                    message: format!("{field} must be a size such as \"64m\", not `{v}`"),
                })?;
            }
        }
        Ok(s)
    }
}

/// The Unbound target: NSD, then Unbound in front of it.
pub fn target(t: &toml::Table, base_dir: &Path) -> Result<DnsLab, ServerError> {
    Ok(lab(UnboundSettings::parse(t)?, base_dir))
}

/// The lab of checked settings (see [`target`]).
pub fn lab(s: UnboundSettings, base_dir: &Path) -> DnsLab {
    let nsd = Nsd {
        threads: s.nsd_threads,
        extra: None,
        tls: None,
    };
    DnsLab::new(KIND, vec![Box::new(nsd), Box::new(Unbound(s))], base_dir)
}

/// Unbound as the lab's resolver, in front of NSD.
pub struct Unbound(pub UnboundSettings);

/// The control socket inside a run directory.
pub fn control_socket(dir: &Path) -> std::path::PathBuf {
    dir.join("unbound.ctl")
}

impl Unbound {
    fn render(
        &self,
        dir: &Path,
        zone_list: &[String],
        veth: Option<&str>,
        tls: Option<&crate::tls::cert::ServerCert>,
    ) -> String {
        let s = &self.0;
        let d = dir.display();
        let mut c = format!(
            "# written by scalelab\nserver:\n  interface: {addr}@53\n  num-threads: {threads}\n\
             \x20 so-reuseport: yes\n  username: \"\"\n  chroot: \"\"\n  directory: \"{d}\"\n\
             \x20 pidfile: \"{d}/unbound.pid\"\n  use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n\
             \x20 access-control: 127.0.0.0/8 allow\n  do-not-query-localhost: no\n\
             \x20 module-config: \"iterator\"\n  qname-minimisation: no\n\
             \x20 local-zone: \".\" refuse\n  local-zone: \"test.\" nodefault\n\
             \x20 incoming-num-tcp: {INCOMING_TCP}\n",
            addr = zones::RESOLVER_ADDR,
            threads = s.threads,
        );
        if let Some(v) = veth {
            c.push_str(&format!(
                "  interface: {v}@53\n  access-control: {} allow\n",
                super::veth::NET
            ));
        }
        if let Some(cert) = tls {
            c.push_str(&format!(
                "  interface: {addr}@{DOT_PORT}\n  tls-port: {DOT_PORT}\n\
                 \x20 interface: {addr}@{DOH_PORT}\n  https-port: {DOH_PORT}\n\
                 \x20 http-endpoint: \"{DOH_PATH}\"\n\
                 \x20 tls-service-pem: \"{}\"\n  tls-service-key: \"{}\"\n",
                cert.cert_file.display(),
                cert.key_file.display(),
                addr = zones::RESOLVER_ADDR,
            ));
        }
        if let Some(v) = &s.msg_cache_size {
            c.push_str(&format!("  msg-cache-size: {v}\n"));
        }
        if let Some(v) = &s.rrset_cache_size {
            c.push_str(&format!("  rrset-cache-size: {v}\n"));
        }
        for z in zone_list {
            c.push_str(&format!("  local-zone: \"{z}\" transparent\n"));
        }
        if let Some(e) = &s.extra {
            c.push_str(&format!("  {e}\n"));
        }
        c.push_str(&format!(
            "stub-zone:\n  name: \".\"\n  stub-addr: {}\n",
            zones::DEAD_ROOT_ADDR
        ));
        for z in zone_list {
            c.push_str(&format!(
                "stub-zone:\n  name: \"{z}\"\n  stub-addr: {}\n",
                zones::AUTH_ADDR
            ));
        }
        c.push_str(&format!(
            "remote-control:\n  control-enable: yes\n  control-interface: \"{}\"\n  control-use-cert: no\n",
            control_socket(dir).display()
        ));
        c
    }
}

/// Connections over TCP, TLS and HTTPS each Unbound thread serves at
/// once. Unbound's default, 10, closes the 11th connection of a sweep at
/// once, so a TCP, DoT or DoH sweep past 10 connections would measure
/// reconnections; a recipe's `extra = "incoming-num-tcp: 10"` puts the
/// default back (Unbound takes the last value it reads).
const INCOMING_TCP: u32 = 1024;

/// The port Unbound serves DNS over TLS on (RFC 7858's).
pub const DOT_PORT: u16 = 853;
/// The port it serves DNS over HTTPS on (HTTPS's), with HTTP/2 from its
/// libnghttp2.
pub const DOH_PORT: u16 = 443;
/// DoH's path (RFC 8484's example, Unbound's default).
const DOH_PATH: &str = "/dns-query";

impl LabServer for Unbound {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn prepare(&self, at: &Prepare<'_>) -> Result<Launch, ServerError> {
        let dir = at.dir;
        let program = binary(KIND, &["/usr/sbin/unbound"], "unbound")?;
        crate::server::conf_path::check_socket(KIND, &control_socket(dir))?;
        let cert = match self.0.tls {
            true => Some(super::start_cert(
                KIND,
                dir,
                self.0.tls_key,
                zones::RESOLVER_ADDR,
            )?),
            false => None,
        };
        let config = self.render(dir, at.zones, at.veth, cert.as_ref());
        let conf = dir.join("unbound.conf");
        std::fs::write(&conf, &config).map_err(|e| ServerError::io(&conf, e))?;
        Ok(Launch {
            program,
            args: vec!["-d".into(), "-c".into(), conf.into()],
            config,
            log: None,
            tls: cert.map(|c| super::LaunchTls {
                ca_pem: c.ca_pem,
                port: DOT_PORT,
                doh_port: Some(DOH_PORT),
            }),
        })
    }

    fn version(&self) -> Option<String> {
        super::version_line("/usr/sbin/unbound", &["-V"])
            .map(|v| format!("unbound {}", v.trim_start_matches("Version ")))
    }

    fn worker_requests(&self, dir: &Path) -> Option<Vec<u64>> {
        let mut child = std::process::Command::new("unbound-control")
            .arg("-c")
            .arg(dir.join("unbound.conf"))
            .arg("stats_noreset")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        // Read at the window's ends: a server that does not answer costs
        // the trial at most this long, and gives no figure.
        let deadline = std::time::Instant::now() + CONTROL_TIMEOUT;
        while matches!(child.try_wait(), Ok(None)) {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let out = child
            .wait_with_output()
            .ok()
            .filter(|o| o.status.success())?;
        thread_queries(&String::from_utf8_lossy(&out.stdout))
    }
}

/// How long `unbound-control stats_noreset` may take (it answers in
/// milliseconds over its unix socket).
const CONTROL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Each thread's queries so far, in thread order, from `unbound-control
/// stats_noreset`'s `threadN.num.queries=COUNT` lines; `None` when a
/// thread is missing or a count unreadable.
pub fn thread_queries(stats: &str) -> Option<Vec<u64>> {
    let mut counts: Vec<(usize, u64)> = Vec::new();
    for line in stats.lines() {
        let Some(rest) = line.strip_prefix("thread") else {
            continue;
        };
        let Some((thread, count)) = rest.split_once(".num.queries=") else {
            continue;
        };
        counts.push((thread.parse().ok()?, count.trim().parse().ok()?));
    }
    counts.sort_unstable();
    let in_order = counts.iter().enumerate().all(|(i, (t, _))| i == *t);
    (in_order && !counts.is_empty()).then(|| counts.into_iter().map(|(_, c)| c).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_a_veth_path_it_also_listens_there_and_answers_that_net() {
        let u = Unbound(UnboundSettings::parse(&toml::Table::new()).unwrap());
        let c = u.render(Path::new("/x"), &[], Some("198.19.254.2"), None);
        assert!(c.contains("interface: 198.19.254.2@53\n"), "{c}");
        assert!(c.contains("access-control: 198.19.254.0/24 allow\n"), "{c}");
        assert!(!u
            .render(Path::new("/x"), &[], None, None)
            .contains("198.19"));
    }

    /// `tls = true` serves DoT on the resolver's address, port 853, with
    /// the start's certificate and key.
    #[test]
    fn with_tls_it_serves_dns_over_tls_on_853() {
        let t: toml::Table = toml::from_str("tls = true").unwrap();
        let u = Unbound(UnboundSettings::parse(&t).unwrap());
        let cert = super::super::paths_only_cert();
        let c = u.render(Path::new("/x"), &[], None, Some(&cert));
        assert!(
            c.contains("interface: 127.0.0.1@853\n  tls-port: 853\n"),
            "{c}"
        );
        assert!(
            c.contains("tls-service-pem: \"/x/tls/server.pem\"\n"),
            "{c}"
        );
        assert!(
            c.contains("tls-service-key: \"/x/tls/server.key\"\n"),
            "{c}"
        );
        assert!(!u.render(Path::new("/x"), &[], None, None).contains("853"));
    }

    #[test]
    fn each_threads_queries_are_read_from_stats_noreset() {
        // Unbound 1.17.1, 2 threads, after 300 queries over loopback.
        let stats =
            include_str!("../../../../../tests/fixtures/unbound/stats_noreset-2-threads.txt");
        assert_eq!(thread_queries(stats), Some(vec![134, 166]));
        let total = stats
            .lines()
            .find_map(|l| l.strip_prefix("total.num.queries="));
        assert_eq!(total, Some("300"));
        assert_eq!(
            thread_queries("thread1.num.queries=5\n"),
            None,
            "thread0 missing"
        );
        assert_eq!(thread_queries("thread0.num.queries=x\n"), None);
        assert_eq!(thread_queries("total.num.queries=3\n"), None);
    }

    #[test]
    fn config_cannot_leave_the_lab() {
        let t: toml::Table = toml::from_str("threads = 4\nmsg_cache_size = \"8m\"").unwrap();
        let u = Unbound(UnboundSettings::parse(&t).unwrap());
        let c = u.render(Path::new("/x"), &["bench.test.".into()], None, None);
        assert!(c.contains("num-threads: 4\n"));
        assert!(c.contains("local-zone: \".\" refuse\n"));
        assert!(c.contains("stub-zone:\n  name: \".\"\n  stub-addr: 127.0.0.9\n"));
        assert!(c.contains("stub-zone:\n  name: \"bench.test.\"\n  stub-addr: 127.0.0.2\n"));
        assert!(c.contains("msg-cache-size: 8m\n"));
        let bad: toml::Table = toml::from_str("msg_cache_size = \"lots\"").unwrap();
        let e = UnboundSettings::parse(&bad).unwrap_err().to_string();
        assert!(e.contains("msg_cache_size"), "{e}");
    }
}
