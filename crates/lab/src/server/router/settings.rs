//! The router's typed settings (`[server] kind = "router"`), checked before
//! anything is built so a bad value is named with its fix.

use super::super::ServerError;
use serde::Deserialize;

const KIND: &str = "router";

/// Packet filtering in R.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Firewall {
    /// No nftables table at all.
    #[default]
    None,
    /// A small stateful edge ruleset (conntrack, a few accepts, counters).
    Small,
    /// `firewall_rules` rules that never match, then accept: each forwarded
    /// packet walks all of them (the cost of a long linear ruleset).
    Rules,
}

/// `[server] kind = "router"` settings: R's queues, CPU steering,
/// offloads, sysctls and firewall, and the lab's MTU. An unset link field
/// leaves what a fresh veth pair has (one queue, MTU 1500, RPS/XPS off,
/// offloads as created); `rps_cpus` says its own exception.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSettings {
    /// RX and TX queues of every veth (`numrxqueues`/`numtxqueues`).
    pub queues: Option<u32>,
    /// CPUs that RPS steers R's received packets to (both R interfaces).
    /// Unset: RPS off, unless the server's CPUs (`server_cpus`) are set,
    /// which places R's forwarding work on them through RPS.
    pub rps_cpus: Option<Vec<usize>>,
    /// CPUs that RPS steers the hosts' received packets to (A's and B's
    /// interfaces): where the receiving host's IP/UDP stack runs. Unset:
    /// on the CPU that delivered the frame (R's, for forwarded frames).
    pub host_rps_cpus: Option<Vec<usize>>,
    /// CPUs allowed to transmit on each TX queue of R's interfaces (XPS).
    pub xps_cpus: Option<Vec<usize>>,
    /// Generic receive offload on R's interfaces (`ethtool -K gro`).
    pub gro: Option<bool>,
    /// Generic segmentation offload on R's interfaces (`ethtool -K gso`).
    pub gso: Option<bool>,
    /// `net.core.*` and `net.ipv4.*` sysctls set inside R.
    #[serde(default)]
    pub sysctls: toml::Table,
    /// The nftables ruleset R's forwarded packets walk (default none).
    #[serde(default)]
    pub firewall: Firewall,
    /// How many rules `firewall = "rules"` installs.
    pub firewall_rules: Option<u32>,
    /// MTU of every lab link (default 1500, so frames up to 1518 bytes).
    pub mtu: Option<u32>,
    /// The link speed to draw line rate against, in Gbit/s (veth has none).
    pub link_gbit: Option<f64>,
}

/// Most rules `firewall_rules` accepts (nft loads 100k rules in seconds).
pub const MAX_FIREWALL_RULES: u32 = 100_000;

impl RouterSettings {
    /// Reads and checks a `[server]` table: unknown keys, out-of-range
    /// values, CPUs this machine lacks and sysctls this kernel lacks are a
    /// [`ServerError::Settings`] naming the field and its fix.
    pub fn parse(t: &toml::Table) -> Result<Self, ServerError> {
        let s: RouterSettings =
            crate::kinds::parse_settings(t).map_err(|m| ServerError::settings(KIND, m))?;
        s.check()?;
        Ok(s)
    }

    pub(crate) fn queues(&self) -> u32 {
        self.queues.unwrap_or(1)
    }

    pub(crate) fn mtu(&self) -> u32 {
        self.mtu.unwrap_or(1500)
    }

    /// The sysctls as `(dotted.key, value)` text pairs.
    pub fn sysctl_pairs(&self) -> Vec<(String, String)> {
        self.sysctls
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Boolean(b) => u8::from(*b).to_string(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect()
    }

    fn check(&self) -> Result<(), ServerError> {
        let bad = |message: String| {
            Err(ServerError::Settings {
                kind: KIND,
                message,
            })
        };
        if let Some(q) = self.queues {
            if !(1..=64).contains(&q) {
                return bad(format!("`queues` is {q}; use 1 to 64 queues per veth"));
            }
        }
        let online = crate::placement::online_cpus();
        for (field, cpus) in [
            ("rps_cpus", &self.rps_cpus),
            ("host_rps_cpus", &self.host_rps_cpus),
            ("xps_cpus", &self.xps_cpus),
        ] {
            if let Some(cpus) = cpus {
                if cpus.is_empty() {
                    return bad(format!("`{field}` is empty; leave it out to turn it off"));
                }
                if let Some(c) = cpus.iter().find(|&&c| c >= online.min(64)) {
                    return bad(format!(
                        "`{field}` names CPU {c}, but this machine has CPUs 0 to {}",
                        online - 1
                    ));
                }
            }
        }
        for (key, value) in &self.sysctls {
            if !(key.starts_with("net.core.") || key.starts_with("net.ipv4.")) {
                return bad(format!(
                    "sysctl `{key}` is not allowed; only `net.core.*` and `net.ipv4.*` are set inside R"
                ));
            }
            if key.contains('/') || key.contains("..") {
                return bad(format!("sysctl `{key}` is not a sysctl name"));
            }
            if matches!(value, toml::Value::Table(_) | toml::Value::Array(_)) {
                return bad(format!(
                    "sysctl `{key}` needs a number, string or boolean, not {}",
                    value.type_str()
                ));
            }
            if !sysctl_known(key) {
                return bad(format!(
                    "unknown sysctl `{key}`: this kernel has no /proc/sys/{}; \
                     `sysctl -a | grep net.` lists the ones it has",
                    key.replace('.', "/")
                ));
            }
        }
        match (self.firewall, self.firewall_rules) {
            (Firewall::Rules, None) => {
                return bad("`firewall = \"rules\"` needs `firewall_rules = N`".into())
            }
            (Firewall::Rules, Some(n)) if n == 0 || n > MAX_FIREWALL_RULES => {
                return bad(format!(
                "`firewall_rules` is {n}; use 1 to {MAX_FIREWALL_RULES} (or `firewall = \"none\"`)"
            ))
            }
            (Firewall::None | Firewall::Small, Some(_)) => {
                return bad("`firewall_rules` needs `firewall = \"rules\"`".into())
            }
            _ => {}
        }
        if let Some(m) = self.mtu {
            if !(576..=9000).contains(&m) {
                return bad(format!("`mtu` is {m}; use 576 to 9000"));
            }
        }
        if let Some(g) = self.link_gbit {
            if !(g.is_finite() && g > 0.0) {
                return bad(format!(
                    "`link_gbit` is {g}; give a positive speed such as 10"
                ));
            }
        }
        Ok(())
    }
}

/// Whether the kernel has sysctl `key`, checked before any lab is built (in
/// scalelab's own namespace; R's interfaces, which exist only in R, are
/// checked as `default`, whose settings every interface has). A key that
/// exists here but not per namespace is caught when R is configured.
fn sysctl_known(key: &str) -> bool {
    use crate::model::topology::{R_A_IF, R_B_IF};
    let parts: Vec<&str> = key
        .split('.')
        .map(|p| {
            if p == R_A_IF || p == R_B_IF {
                "default"
            } else {
                p
            }
        })
        .collect();
    crate::procfs::sysctl::path_of_parts(&parts).is_file()
}

/// A CPU list as the hex mask sysfs wants (`[1]` → `2`, `[0, 1]` → `3`).
pub fn cpu_mask(cpus: &[usize]) -> String {
    let mask = cpus.iter().fold(0u64, |m, &c| m | (1u64 << c.min(63)));
    format!("{mask:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RouterSettings, String> {
        RouterSettings::parse(&text.parse::<toml::Table>().unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_one_queue_no_firewall() {
        let s = parse("").unwrap();
        assert_eq!((s.queues(), s.mtu(), s.firewall), (1, 1500, Firewall::None));
    }

    #[test]
    fn bad_values_are_named_with_their_fix() {
        assert!(parse("queues = 0").unwrap_err().contains("1 to 64"));
        assert!(parse("rps_cpus = [99]").unwrap_err().contains("CPU 99"));
        assert!(parse("host_rps_cpus = [99]")
            .unwrap_err()
            .contains("`host_rps_cpus` names CPU 99"));
        assert!(parse("sysctls = { \"kernel.panic\" = 1 }")
            .unwrap_err()
            .contains("only `net.core.*`"));
        assert!(parse("firewall = \"rules\"")
            .unwrap_err()
            .contains("firewall_rules"));
        assert!(parse("firewall = \"wall\"").unwrap_err().contains("wall"));
        assert!(parse("firewall_rules = 5")
            .unwrap_err()
            .contains("needs `firewall"));
        assert!(parse("colour = 1").unwrap_err().contains("colour"));
        assert!(parse("sysctls = { \"net.ipv4.no_such_knob\" = 1 }")
            .unwrap_err()
            .contains("unknown sysctl `net.ipv4.no_such_knob`"));
        assert!(parse("sysctls = { \"net.ipv4.conf.r0.rp_filter\" = 0 }").is_ok());
    }

    #[test]
    fn sysctl_values_become_text() {
        let s = parse("sysctls = { \"net.ipv4.conf.all.rp_filter\" = 0, \"net.core.somaxconn\" = \"512\", \"net.ipv4.ip_forward\" = true }").unwrap();
        let pairs = s.sysctl_pairs();
        assert!(pairs.contains(&("net.ipv4.conf.all.rp_filter".into(), "0".into())));
        assert!(pairs.contains(&("net.core.somaxconn".into(), "512".into())));
        assert!(pairs.contains(&("net.ipv4.ip_forward".into(), "1".into())));
    }

    #[test]
    fn masks_are_hex() {
        assert_eq!(cpu_mask(&[1]), "2");
        assert_eq!(cpu_mask(&[0, 1]), "3");
        assert_eq!(cpu_mask(&[4]), "10");
    }
}
