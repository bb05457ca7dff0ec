//! The network interfaces' settings in the fingerprint (Linux): for every
//! interface that is up (loopback aside), its driver, channels and rings
//! (`ethtool -i`, `-l`, `-g`), offloads (`ethtool -k`) and RPS/XPS CPU
//! masks (`/sys/class/net/IF/queues/*/rps_cpus`, `xps_cpus`). Seed 001's
//! labels differ by rings ("linux4.9-16rxring"): `compare` and the N-run
//! environment table diff these like every other fingerprint key.
//!
//! The parsers are pure (ethtool's text in, maps out); what cannot be read
//! is `unavailable`, never guessed.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

pub use scalelab_record::environment::nic::{NicSettings, UNAVAILABLE};

/// `driver: NAME` of `ethtool -i`.
pub fn parse_driver(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("driver:"))
        .map(|d| d.trim().to_string())
}

/// The `Current hardware settings:` section of `ethtool -l` or `-g`.
pub fn parse_current(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Current hardware settings"))
        .skip(1)
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The `name: on|off [fixed]` lines of `ethtool -k` (nested ones too).
pub fn parse_features(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let v = v.trim();
            (v.starts_with("on") || v.starts_with("off"))
                .then(|| (k.trim().to_string(), v.to_string()))
        })
        .collect()
}

/// `ethtool ARGS`' stdout, or `None` when it fails or is missing.
fn ethtool(args: &[&str]) -> Option<String> {
    let mut child = std::process::Command::new("ethtool")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    while matches!(child.try_wait(), Ok(None)) {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Each queue's mask file (`queues/rx-N/rps_cpus`) as queue → mask.
fn queue_masks(dir: &Path, prefix: &str, file: &str) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir.join("queues")) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            name.starts_with(prefix).then(|| {
                let mask = std::fs::read_to_string(e.path().join(file))
                    .map(|m| m.trim().to_string())
                    .unwrap_or_else(|_| UNAVAILABLE.into());
                (name, mask)
            })
        })
        .collect()
}

/// The settings of every interface of this network namespace that is up,
/// loopback aside.
pub fn capture() -> BTreeMap<String, NicSettings> {
    let Ok(entries) = std::fs::read_dir("/sys/class/net") else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let dir = e.path();
            let up = std::fs::read_to_string(dir.join("operstate")).is_ok_and(|s| s.trim() == "up");
            (up && name != "lo").then(|| (name.clone(), read_nic(&name, &dir)))
        })
        .collect()
}

fn read_nic(name: &str, dir: &Path) -> NicSettings {
    let outputs = EthtoolOutputs {
        info: ethtool(&["-i", name]),
        channels: ethtool(&["-l", name]),
        rings: ethtool(&["-g", name]),
        features: ethtool(&["-k", name]),
    };
    NicSettings {
        rps_cpus: queue_masks(dir, "rx-", "rps_cpus"),
        xps_cpus: queue_masks(dir, "tx-", "xps_cpus"),
        ..outputs.settings()
    }
}

/// What `ethtool -i`, `-l`, `-g` and `-k` printed for one interface
/// (`None`: it failed), whether run here or by a shell on a host
/// without an agent ([`super::nic_script`]).
#[derive(Debug, Default)]
pub struct EthtoolOutputs {
    /// `ethtool -i`.
    pub info: Option<String>,
    /// `ethtool -l`.
    pub channels: Option<String>,
    /// `ethtool -g`.
    pub rings: Option<String>,
    /// `ethtool -k`.
    pub features: Option<String>,
}

impl EthtoolOutputs {
    /// The settings they give (no RPS/XPS masks: those are files).
    pub fn settings(&self) -> NicSettings {
        NicSettings {
            driver: self
                .info
                .as_deref()
                .and_then(parse_driver)
                .unwrap_or_else(|| UNAVAILABLE.into()),
            channels: self
                .channels
                .as_deref()
                .map(parse_current)
                .unwrap_or_default(),
            rings: self.rings.as_deref().map(parse_current).unwrap_or_default(),
            offloads: self
                .features
                .as_deref()
                .map(parse_features)
                .unwrap_or_default(),
            ..NicSettings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machines_interfaces_parse_from_ethtool_as_it_prints_them() {
        // Read here and now from the real ethtool: its shape, not invented.
        let nics = capture();
        let (name, nic) = nics.iter().next().expect("this VM has an interface up");
        assert_ne!(nic.driver, super::UNAVAILABLE, "{name}");
        assert!(!nic.offloads.is_empty(), "{name}: {nic:?}");
        assert!(nic
            .offloads
            .values()
            .all(|v| v.starts_with("on") || v.starts_with("off")));
        assert!(nic.rps_cpus.keys().all(|q| q.starts_with("rx-")));
    }

    #[test]
    fn only_the_current_settings_are_taken() {
        let l = "Channel parameters for x:\nPre-set maximums:\nCombined:\t8\nCurrent hardware settings:\nRX:\t\tn/a\nCombined:\t2\n";
        let c = parse_current(l);
        assert_eq!(c.get("Combined").map(String::as_str), Some("2"));
        assert_eq!(c.get("RX").map(String::as_str), Some("n/a"));
        assert!(parse_current("garbage").is_empty());
        assert_eq!(
            parse_driver("driver: veth\nversion: 1.0\n").as_deref(),
            Some("veth")
        );
    }
}
