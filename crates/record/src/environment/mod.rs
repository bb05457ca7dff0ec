//! The run's environment as the store keeps it: this machine's
//! [`Fingerprint`] and each remote host's, under a format version, written
//! and read back as typed data. Documented in `docs/store-schema.md`.
//!
//! - [`fingerprint`]: one machine's facts ([`Fingerprint`]);
//! - [`nic`]: an interface's settings in it;
//! - [`machine`]: the readings checked before a run;
//! - [`mod@diff`]: the one JSON flattener, and the key-by-key diff `compare`
//!   and the environment tables use.

pub mod diff;
pub mod fingerprint;
pub mod machine;
pub mod nic;

pub use diff::{diff, flatten, flatten_leaves, ScalarLists};
pub use fingerprint::{Fingerprint, Virtualization};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The format version this scalelab writes. Version 1 (no `version` key)
/// had the same fields; a field added later gets `#[serde(default)]` so
/// older JSON still reads.
pub const ENVIRONMENT_VERSION: u32 = 2;

/// A run's environment: everything that could make two runs differ besides
/// the system under test. Stored as `{"version": 2, <Fingerprint fields>,
/// "hosts": {...}}` in the runs table's `environment` column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// The stored format's version; 1 when the JSON has none.
    #[serde(default = "version_1")]
    pub version: u32,
    /// The machine scalelab ran on.
    #[serde(flatten)]
    pub machine: Fingerprint,
    /// Each remote host of `[hosts]` by its `user@address` (none for a
    /// local run).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts: BTreeMap<String, HostFingerprint>,
}

fn version_1() -> u32 {
    1
}

/// A remote host's fingerprint, as far as it could be taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HostFingerprint {
    /// The host could not be fingerprinted, and why.
    Unreachable {
        /// The error met.
        error: String,
    },
    /// The full fingerprint its agent took.
    Agent(Box<Fingerprint>),
    /// A host without an agent (an `external` server, maybe another OS):
    /// what `uname` and `sysctl` told, each `None` when it told nothing.
    Portable(PortableFingerprint),
}

/// What `uname -srm` and a few `sysctl`s tell of a host without an agent
/// (written for FreeBSD; on Linux most `sysctl`s are absent).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortableFingerprint {
    /// `uname -srm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uname: Option<String>,
    /// `sysctl -n hw.model`.
    #[serde(rename = "hw.model", default, skip_serializing_if = "Option::is_none")]
    pub hw_model: Option<String>,
    /// `sysctl -n hw.ncpu`.
    #[serde(rename = "hw.ncpu", default, skip_serializing_if = "Option::is_none")]
    pub hw_ncpu: Option<String>,
    /// `sysctl -n hw.physmem` (bytes).
    #[serde(
        rename = "hw.physmem",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub hw_physmem: Option<String>,
    /// `sysctl -n kern.osrelease`.
    #[serde(
        rename = "kern.osrelease",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kern_osrelease: Option<String>,
    /// `sysctl -n kern.hz`.
    #[serde(rename = "kern.hz", default, skip_serializing_if = "Option::is_none")]
    pub kern_hz: Option<String>,
    /// The BSD host's interfaces that are up, from `ifconfig -m` and
    /// `sysctl dev.DRIVER.UNIT` (`probe::nic_bsd`); empty on Linux and
    /// when they could not be read.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub nics: std::collections::BTreeMap<String, nic::NicSettings>,
}

impl PortableFingerprint {
    /// Reads `key=value` lines; unknown keys are ignored.
    pub fn parse(text: &str) -> PortableFingerprint {
        let mut fp = PortableFingerprint::default();
        for (key, value) in text.lines().filter_map(|l| l.split_once('=')) {
            let slot = match key {
                "uname" => &mut fp.uname,
                "hw.model" => &mut fp.hw_model,
                "hw.ncpu" => &mut fp.hw_ncpu,
                "hw.physmem" => &mut fp.hw_physmem,
                "kern.osrelease" => &mut fp.kern_osrelease,
                "kern.hz" => &mut fp.kern_hz,
                _ => continue,
            };
            *slot = Some(value.trim().to_string());
        }
        fp
    }
}

/// Why a stored environment could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the stored environment fingerprint is not a version-1 or version-{ENVIRONMENT_VERSION} fingerprint: {0}")]
pub struct EnvironmentError(#[from] serde_json::Error);

impl Environment {
    /// This machine's fingerprint alone, at the current version.
    pub fn local(machine: Fingerprint) -> Environment {
        Environment {
            version: ENVIRONMENT_VERSION,
            machine,
            hosts: BTreeMap::new(),
        }
    }

    /// The JSON the store keeps.
    pub fn to_stored(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// Reads the store's JSON, of this version or an older one.
    pub fn from_stored(json: &str) -> Result<Environment, EnvironmentError> {
        Ok(serde_json::from_str(json)?)
    }

    /// The OS and kernel release of the server host, for a run's default
    /// label: `Linux 6.1.0-18-amd64` for this machine (scalelab runs on
    /// Linux), the agent's kernel release for a remote `server` host with
    /// an agent, `uname -srm` for one without. `server` is the `[hosts]
    /// server` name (`user@address`), `None` for a local run.
    pub fn os_label(&self, server: Option<&str>) -> String {
        let linux = |fp: &Fingerprint| format!("Linux {}", fp.kernel_release);
        match server.and_then(|s| self.hosts.get(s).map(|h| (s, h))) {
            None => linux(&self.machine),
            Some((_, HostFingerprint::Agent(fp))) => linux(fp),
            Some((host, HostFingerprint::Portable(p))) => {
                p.uname.clone().unwrap_or_else(|| host.to_string())
            }
            Some((host, HostFingerprint::Unreachable { .. })) => host.to_string(),
        }
    }

    /// The facts as JSON without the format version: what the report's
    /// table, `compare` and the JSON export show (the same for a version-1
    /// and a version-2 store).
    pub fn facts(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = v.as_object_mut() {
            map.remove("version");
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Fingerprint {
        Fingerprint {
            kernel_release: "6.1.0".into(),
            mem_total_bytes: Some(1 << 30),
            sysctls: BTreeMap::from([("net.core.somaxconn".into(), "4096".into())]),
            ..Fingerprint::default()
        }
    }

    #[test]
    fn round_trips_with_every_kind_of_host() {
        let mut env = Environment::local(machine());
        env.hosts.insert(
            "root@198.18.0.2".into(),
            HostFingerprint::Agent(Box::new(machine())),
        );
        env.hosts.insert(
            "root@198.18.0.3".into(),
            HostFingerprint::Portable(PortableFingerprint::parse(
                "uname=FreeBSD 14.0-RELEASE amd64\nhw.ncpu=2\nnoise\nother=x\n",
            )),
        );
        env.hosts.insert(
            "root@198.18.0.4".into(),
            HostFingerprint::Unreachable {
                error: "ssh: timeout".into(),
            },
        );
        let stored = env.to_stored().unwrap();
        assert!(stored.starts_with(r#"{"version":2,"#), "{stored}");
        assert_eq!(Environment::from_stored(&stored).unwrap(), env);
        let facts = env.facts();
        assert!(facts.get("version").is_none());
        assert_eq!(facts["hosts"]["root@198.18.0.3"]["hw.ncpu"], "2");
        assert!(facts["hosts"]["root@198.18.0.3"].get("hw.model").is_none());
        assert_eq!(facts["hosts"]["root@198.18.0.4"]["error"], "ssh: timeout");
    }

    #[test]
    fn version_1_json_reads_as_version_1_and_shows_the_same() {
        let v1 = serde_json::to_value(machine()).unwrap();
        let env = Environment::from_stored(&v1.to_string()).unwrap();
        assert_eq!((env.version, &env.machine), (1, &machine()));
        assert_eq!(env.facts(), v1);
    }

    #[test]
    fn json_that_is_no_fingerprint_is_an_error_that_says_so() {
        let e = Environment::from_stored(r#"{"kernel": "6.1"}"#).unwrap_err();
        assert!(e.to_string().contains("not a version-1"), "{e}");
    }

    #[test]
    fn the_label_is_the_server_hosts_os_and_kernel() {
        let mut env = Environment::local(machine());
        assert_eq!(env.os_label(None), "Linux 6.1.0");
        let remote = Fingerprint {
            kernel_release: "6.12.1".into(),
            ..machine()
        };
        env.hosts.insert(
            "root@198.18.0.2".into(),
            HostFingerprint::Agent(Box::new(remote)),
        );
        env.hosts.insert(
            "root@198.18.0.3".into(),
            HostFingerprint::Portable(PortableFingerprint::parse(
                "uname=FreeBSD 14.0-RELEASE amd64",
            )),
        );
        assert_eq!(env.os_label(Some("root@198.18.0.2")), "Linux 6.12.1");
        assert_eq!(
            env.os_label(Some("root@198.18.0.3")),
            "FreeBSD 14.0-RELEASE amd64"
        );
        // A server host missing from the fingerprint: this machine's.
        assert_eq!(env.os_label(Some("root@198.18.0.9")), "Linux 6.1.0");
    }
}
