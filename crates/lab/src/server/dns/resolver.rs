//! Kind `resolver`: BIND 9 or Unbound, chosen by the `software` setting, with
//! the settings both share (threads, one cache size, extra lines). It exists
//! so one recipe can compare the two as systems (`server = { software =
//! "unbound" }`) sharing the swept settings (a system with a server kind of
//! its own keeps none of `[server]`'s); the `bind` and `unbound` kinds keep
//! each one's own settings.

use super::bind::{Bind, BindSettings};
use super::nsd::Nsd;
use super::unbound::{Unbound, UnboundSettings};
use super::{check_threads, DnsLab, LabServer};
use crate::server::ServerError;
use std::path::Path;

const KIND: &str = "resolver";

/// The `resolver` entry of the server-kind registry.
pub const SERVER_KIND: crate::server::ServerKind = crate::server::ServerKind {
    name: KIND,
    serves: Some(crate::model::Protocol::DNS),
    parallelism: &["threads", "nsd_threads"],
    requires: &[
        super::NSD_PACKAGE,
        super::bind::BIND_PACKAGE,
        super::unbound::UNBOUND_PACKAGE,
        super::IPROUTE,
    ],
    compile: |t| {
        let settings = ResolverSettings::parse(t)?;
        Ok(crate::server::plan::of(settings, |s, base| {
            Ok(Box::new(lab(s.clone(), base)))
        }))
    },
    runs_under_agent: true,
    listens_on_host_address: false,
    dns_lab: None,
    start_estimate: std::time::Duration::from_millis(4000),
    facts: None,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Software {
    Bind,
    Unbound,
}

/// `[server]` settings of kind `resolver`.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolverSettings {
    pub software: Software,
    /// BIND `named -n`, Unbound `num-threads`.
    #[serde(default = "super::one")]
    pub threads: u32,
    /// BIND `max-cache-size`; Unbound `msg-cache-size` and `rrset-cache-size`.
    pub cache_size: Option<String>,
    #[serde(default = "super::one")]
    pub nsd_threads: u32,
    /// Raw lines for BIND's `options {}` or Unbound's `server:`.
    pub extra: Option<String>,
}

impl ResolverSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: ResolverSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        check_threads(KIND, "threads", s.threads)?;
        check_threads(KIND, "nsd_threads", s.nsd_threads)?;
        if let Some(v) = &s.cache_size {
            crate::units::parse_bytes(v).map_err(|_| {
                ServerError::settings(
                    KIND,
                    format!("cache_size must be a size such as \"64m\", not `{v}`"),
                )
            })?;
        }
        Ok(s)
    }

    fn server(&self) -> Box<dyn LabServer> {
        match self.software {
            Software::Bind => Box::new(Bind(BindSettings {
                threads: self.threads,
                max_cache_size: self.cache_size.clone(),
                nsd_threads: self.nsd_threads,
                extra: self.extra.clone(),
                tls: false,
                tls_key: Default::default(),
            })),
            Software::Unbound => Box::new(Unbound(UnboundSettings {
                threads: self.threads,
                msg_cache_size: self.cache_size.clone(),
                rrset_cache_size: self.cache_size.clone(),
                nsd_threads: self.nsd_threads,
                extra: self.extra.clone(),
                tls: false,
                tls_key: Default::default(),
            })),
        }
    }
}

/// NSD, then the chosen resolver in front of it.
pub fn lab(s: ResolverSettings, base_dir: &Path) -> DnsLab {
    let nsd = Nsd {
        threads: s.nsd_threads,
        extra: None,
        tls: None,
    };
    DnsLab::new(KIND, vec![Box::new(nsd), s.server()], base_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_picks_the_resolver() {
        let t: toml::Table = toml::from_str("software = \"unbound\"\nthreads = 3").unwrap();
        let s = ResolverSettings::parse(&t).unwrap();
        assert_eq!(s.server().kind(), "unbound");
        let t: toml::Table = toml::from_str("software = \"knot\"").unwrap();
        let e = ResolverSettings::parse(&t).unwrap_err().to_string();
        assert!(e.contains("knot"), "{e}");
    }
}
