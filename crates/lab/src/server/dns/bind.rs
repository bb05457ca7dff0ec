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
    /// Also serve DNS over TLS (RFC 7858) on port 853 and DNS over HTTPS
    /// (RFC 8484, HTTP/2) on port 443 of the resolver's address, with this
    /// start's own CA and certificate (BIND 9.18's `tls` and `http`
    /// statements); the endpoint then names the ports (`dot=`, `doh=`) and
    /// hands the load the CA.
    #[serde(default)]
    pub tls: bool,
    /// The certificate's key: `"ecdsa-p256"` (default) or `"rsa-2048"`.
    #[serde(default)]
    pub tls_key: crate::tls::cert::KeyType,
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

/// The port BIND serves DNS over TLS on (RFC 7858's).
pub const DOT_PORT: u16 = 853;
/// The port it serves DNS over HTTPS on, with HTTP/2 from its libnghttp2.
pub const DOH_PORT: u16 = 443;
/// DoH's path (RFC 8484's example, BIND's default endpoint).
const DOH_PATH: &str = "/dns-query";
/// The port of BIND's statistics channel, on the resolver's address inside
/// the lab's namespace: `GET /json/v1/server` gives its counters.
pub const STATS_PORT: u16 = 8053;
/// Connections BIND serves at once over DoH (`listener-clients`; BIND's
/// default of 300 would close the load's connections past it) and over
/// TCP and DoT (`tcp-clients`, default 150), as for Unbound.
const CLIENTS: u32 = 1024;

impl Bind {
    /// The `tls` and `http` statements and the listeners of DoT and DoH.
    fn tls_statements(cert: &crate::tls::cert::ServerCert) -> (String, String) {
        let top = format!(
            "tls scalelab-tls {{ cert-file \"{}\"; key-file \"{}\"; }};\n\
             http scalelab-doh {{ endpoints {{ \"{DOH_PATH}\"; }}; listener-clients {CLIENTS}; }};\n",
            cert.cert_file.display(),
            cert.key_file.display(),
        );
        let listen = format!(
            "    listen-on port {DOT_PORT} tls scalelab-tls {{ {addr}; }};\n\
             \x20   listen-on port {DOH_PORT} tls scalelab-tls http scalelab-doh {{ {addr}; }};\n\
             \x20   tcp-clients {CLIENTS};\n",
            addr = zones::RESOLVER_ADDR,
        );
        (top, listen)
    }

    fn render(
        &self,
        dir: &Path,
        zone_list: &[String],
        veth: Option<&str>,
        tls: Option<&crate::tls::cert::ServerCert>,
    ) -> String {
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
        let (tls_top, tls_listen) = tls.map(Self::tls_statements).unwrap_or_default();
        let mut c = format!(
            "# written by scalelab\n{tls_top}options {{\n    directory \"{d}\";\n    pid-file \"{d}/named.pid\";\n\
             \x20   session-keyfile \"{d}/session.key\";\n    managed-keys-directory \"{d}\";\n\
             \x20   listen-on port 53 {{ {addr};{also} }};\n{tls_listen}    listen-on-v6 {{ none; }};\n\
             \x20   recursion yes;\n    allow-query {{ 127.0.0.0/8;{net} }};\n    allow-recursion {{ 127.0.0.0/8;{net} }};\n\
             \x20   forward only;\n    forwarders {{ {dead}; }};\n    dnssec-validation no;\n\
             \x20   empty-zones-enable no;\n    notify no;\n{cache}{extra}}};\n\
             controls {{ }};\n\
             statistics-channels {{ inet {addr} port {STATS_PORT} allow {{ {addr}; }}; }};\n\
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
            tls: cert.map(|c| super::LaunchTls {
                ca_pem: c.ca_pem,
                port: DOT_PORT,
                doh_port: Some(DOH_PORT),
            }),
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
        let c = b.render(Path::new("/x"), &[], Some("198.19.254.2"), None);
        assert!(
            c.contains("listen-on port 53 { 127.0.0.1; 198.19.254.2; };"),
            "{c}"
        );
        assert!(
            c.contains("allow-recursion { 127.0.0.0/8; 198.19.254.0/24; };"),
            "{c}"
        );
        let plain = b.render(Path::new("/x"), &[], None, None);
        assert!(
            plain.contains("listen-on port 53 { 127.0.0.1; };"),
            "{plain}"
        );
    }

    #[test]
    fn config_forwards_only_to_a_dead_root() {
        let t: toml::Table = toml::from_str("threads = 8\nmax_cache_size = \"50%\"").unwrap();
        let b = Bind(BindSettings::parse(&t).unwrap());
        let c = b.render(Path::new("/x"), &["bench.test.".into()], None, None);
        assert!(c.contains("forward only;\n    forwarders { 127.0.0.9; };"));
        assert!(c.contains("zone \"bench.test.\" { type static-stub; server-addresses { 127.0.0.2; }; forwarders { }; };"));
        assert!(c.contains("dnssec-validation no;"));
        assert!(c.contains("max-cache-size 50%;"));
        assert!(root_hints().contains("127.0.0.9"));
        let bad: toml::Table = toml::from_str("max_cache_size = \"huge\"").unwrap();
        assert!(BindSettings::parse(&bad).is_err());
    }

    /// `tls = true` serves DoT on port 853 and DoH on 443 of the
    /// resolver's address, with the start's certificate and key.
    #[test]
    fn with_tls_it_serves_dns_over_tls_and_https() {
        let t: toml::Table = toml::from_str("tls = true").unwrap();
        let b = Bind(BindSettings::parse(&t).unwrap());
        let cert = super::super::paths_only_cert();
        let c = b.render(Path::new("/x"), &[], None, Some(&cert));
        assert!(
            c.contains("tls scalelab-tls { cert-file \"/x/tls/server.pem\"; key-file \"/x/tls/server.key\"; };"),
            "{c}"
        );
        assert!(
            c.contains("listen-on port 853 tls scalelab-tls { 127.0.0.1; };"),
            "{c}"
        );
        assert!(
            c.contains("listen-on port 443 tls scalelab-tls http scalelab-doh { 127.0.0.1; };"),
            "{c}"
        );
        assert!(c.contains("endpoints { \"/dns-query\"; }"), "{c}");
        let plain = b.render(Path::new("/x"), &[], None, None);
        assert!(!plain.contains("853") && !plain.contains("tls "), "{plain}");
        assert!(plain.contains("statistics-channels { inet 127.0.0.1 port 8053"));
    }
}
