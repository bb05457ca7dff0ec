//! The environments of N runs side by side: one row per fingerprint key,
//! one column per run. Rows whose values differ come first, those a
//! reader looks at first (kernel, sysctls, CPU, memory, server version,
//! NIC settings) at their top; then the rows every run shares.

use crate::store::RunData;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Key fragments in the order a reader looks at them first; a key takes
/// the rank of the first fragment it contains.
const FIRST: &[&[&str]] = &[
    &["kernel"],
    &["sysctls."],
    &[
        "cpu_model",
        "online_cpu",
        "smt",
        "cpufreq",
        "cpuidle",
        "haltpoll",
        "virtualization",
        "clocksource",
        "hw.model",
        "hw.ncpu",
    ],
    &["mem_total", "swap_total", "thp", "hw.physmem"],
    &["server_version"],
    &["nic", "netdev", "mtu", "offload", "ring"],
];

/// One fingerprint key across the runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnvRow {
    /// The dotted key (`sysctls.net.core.somaxconn`).
    pub key: String,
    /// Each run's value, in the runs' order; `None` where a run lacks it.
    pub values: Vec<Option<String>>,
    /// Whether any two runs differ in it.
    pub differs: bool,
}

/// Every key of the runs' environments (with the server and scalelab
/// versions and the revision under test): differing rows first, in the order
/// kernel, sysctls, CPU, memory, server version, NIC, then by key.
pub fn rows(runs: &[RunData]) -> Vec<EnvRow> {
    let maps: Vec<BTreeMap<String, String>> = runs.iter().map(flat).collect();
    let keys: BTreeSet<&String> = maps.iter().flat_map(|m| m.keys()).collect();
    let mut out: Vec<EnvRow> = keys
        .into_iter()
        .map(|k| {
            let values: Vec<Option<String>> = maps.iter().map(|m| m.get(k).cloned()).collect();
            let differs = values.iter().any(|v| v != &values[0]);
            EnvRow {
                key: k.clone(),
                values,
                differs,
            }
        })
        .collect();
    out.sort_by_key(|r| (!r.differs, rank(&r.key), r.key.clone()));
    out
}

/// A run's environment facts flattened, plus the versions.
fn flat(data: &RunData) -> BTreeMap<String, String> {
    let run = &data.run;
    let mut map = crate::record::environment::flatten(&run.environment_facts());
    if let Some(v) = &run.server_version {
        map.insert("server_version".to_string(), v.clone());
    }
    if let Some(v) = &run.revision {
        map.insert("revision".to_string(), v.clone());
    }
    map.insert("scalelab_version".to_string(), run.scalelab_version.clone());
    map
}

/// Where `key` sorts among the differing rows: its place in that order, or
/// after them all.
pub fn rank(key: &str) -> usize {
    FIRST
        .iter()
        .position(|group| group.iter().any(|f| key.contains(f)))
        .unwrap_or(FIRST.len())
}

/// Whether `key` is one a reader looks at first (its row is highlighted).
pub fn is_key_fact(key: &str) -> bool {
    rank(key) < FIRST.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::run_data;

    #[test]
    fn differing_rows_come_first_and_a_sysctl_before_the_rest() {
        let a = run_data(&["nginx"]);
        let mut b = run_data(&["nginx"]);
        let mut c = run_data(&["nginx"]);
        let set = |d: &mut RunData, k: &str, v: &str| {
            let env = d.run.environment.as_mut().unwrap();
            env.machine.sysctls.insert(k.into(), v.into());
        };
        for d in [&mut b, &mut c] {
            d.run.environment.as_mut().unwrap().machine.hostname = "other".into();
        }
        set(&mut b, "net.core.somaxconn", "128");
        set(&mut c, "net.core.somaxconn", "4096");
        c.run.server_version = Some("nginx/1.25.3".into());
        let rows = rows(&[a, b, c]);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(
            &keys[..3],
            ["sysctls.net.core.somaxconn", "server_version", "hostname"],
            "{rows:?}"
        );
        assert_eq!(
            rows[0].values,
            [None, Some("128".into()), Some("4096".into())]
        );
        assert!(rows[..3].iter().all(|r| r.differs));
        assert!(rows[3..].iter().all(|r| !r.differs), "{rows:?}");
        assert!(rows.iter().any(|r| r.key == "kernel_release"));
    }
}
