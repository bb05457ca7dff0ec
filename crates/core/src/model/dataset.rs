//! The dataset seam: what data a workload needs on the server
//! ([`Dataset`]), and the setup session ([`SetupSession`]) through which a
//! server target checks readiness, loads that data and reads its settings.
//!
//! The workload declares its dataset: each load kind's registry entry
//! turns its `[load]` settings into one (`crate::load::LoadKind::dataset`),
//! and the runner hands it to the server target when it starts it. The
//! target owns how the data is built and cached. Each protocol's session is
//! implemented beside its client in `crate::wire` (`wire::pg::setup` and so
//! on), which a target calls directly, so no target imports a load
//! driver's modules.

use std::time::Duration;

/// The data a workload runs against: one of the shared datasets that
/// several kinds hold (pgbench's tables, sysbench's, the DNS lab's zones),
/// or a kind's own ([`Dataset::Own`]), which touches no other file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Dataset {
    /// pgbench's four tables at `scale` (100,000 accounts per unit).
    Pgbench {
        /// pgbench's scale factor.
        scale: u32,
    },
    /// sysbench's `sbtest1..tables`, `table_size` rows each.
    Sysbench {
        /// How many tables.
        tables: u32,
        /// Rows per table.
        table_size: u32,
    },
    /// The DNS lab's zones ([`super::dns_names`]) holding `hosts` hosts.
    DnsZones {
        /// Hosts in the forward zone (and PTRs in the reverse zones).
        hosts: u32,
        /// The load reaches the lab over a veth from a client namespace,
        /// not over the lab's loopback (the xdp generator has no path
        /// over loopback).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        veth: bool,
    },
    /// A dataset of a kind's own, described and estimated by the load kind
    /// that declares it; the server kind that holds it knows it by name.
    Own(OwnDataset),
}

/// A kind's own dataset: what its load kind declares, whole, so that the
/// runner, the estimate and the trial's record need nothing of the kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct OwnDataset {
    /// Its name, unique among the kinds' datasets (`redis-keys`): the
    /// server kind that holds it matches on it.
    pub name: String,
    /// Its size settings from `[load]`, by name (`keys` → 100000).
    pub settings: std::collections::BTreeMap<String, u64>,
    /// What it is, for people (`redis 100000 keys`), recorded with every
    /// trial.
    pub description: String,
    /// How long building it takes on this project's 2-CPU VM, in
    /// milliseconds (what `run`'s estimate adds per dataset).
    pub build_estimate_ms: u64,
}

impl Dataset {
    /// What it is, for people (recorded with every trial).
    pub fn describe(&self) -> String {
        match self {
            Dataset::Pgbench { scale } => format!("pgbench scale {scale}"),
            Dataset::Sysbench { tables, table_size } => {
                format!("sysbench {tables} tables x {table_size} rows")
            }
            Dataset::DnsZones { hosts, veth } => format!(
                "DNS zones with {hosts} hosts{}",
                if *veth { ", reached over a veth" } else { "" }
            ),
            Dataset::Own(own) => own.description.clone(),
        }
    }

    /// How long building it takes on this project's 2-CPU VM, the first
    /// time (a target keeps a built dataset for later starts and runs):
    /// what `run`'s estimate adds per dataset (`bench/estimates.sh`
    /// checks it). pgbench: 100,000 accounts per scale unit; sysbench:
    /// rows; zones: a few thousand records a second.
    pub fn build_estimate(&self) -> std::time::Duration {
        let secs = match self {
            Dataset::Pgbench { scale } => 1.0 + 0.4 * f64::from(*scale),
            Dataset::Sysbench { tables, table_size } => {
                1.0 + f64::from(*tables) * f64::from(*table_size) / 40_000.0
            }
            Dataset::DnsZones { hosts, .. } => 0.2 + f64::from(*hosts) / 20_000.0,
            Dataset::Own(own) => own.build_estimate_ms as f64 / 1000.0,
        };
        std::time::Duration::from_secs_f64(secs)
    }
}

/// The `[load]` settings through which workloads declare their dataset
/// (pg's `scale`, mysql's `tables` and `table_size`, dns's `names`). They
/// were `[server]` settings once; [`refuse_in_server`] says where they went.
pub const FIELDS: &[&str] = &["scale", "tables", "table_size", "names"];

/// Refuses a server settings table that declares a dataset, naming the
/// field and the fix: the workload declares its dataset in `[load]`.
pub fn refuse_in_server(settings: &toml::Table) -> Result<(), String> {
    match FIELDS.iter().find(|f| settings.contains_key(**f)) {
        Some(f) => Err(moved_message(f)),
        None => Ok(()),
    }
}

/// "`scale` is not a server setting any more; move `scale` to `[load]`: ..."
pub fn moved_message(field: &str) -> String {
    format!(
        "`{field}` is not a server setting any more; move `{field}` to [load]: \
         the workload declares its dataset"
    )
}

/// Where a setup session goes.
#[derive(Clone, Copy, Debug)]
pub struct SetupAddr<'a> {
    /// The endpoint in the form the protocol's driver takes (a libpq
    /// connection string, a `mysql://` URL, `ADDR:PORT` for DNS).
    pub uri: &'a str,
    /// The network namespace the server lives in, if any.
    pub netns: Option<&'a str>,
    /// How long connecting (or one question) may take.
    pub timeout: Duration,
}

/// A short-lived session a target uses to set its server up. Errors are the
/// driver's own messages; the target wraps them in its error type.
pub trait SetupSession {
    /// Checks that the server answers (`select 1`, a DNS question, ...).
    fn ready(&mut self) -> Result<(), String>;
    /// The version the server reported on connecting, if the protocol says.
    fn server_version(&self) -> Option<String> {
        None
    }
    /// Builds `dataset` on the server (dropping an older copy).
    fn load(&mut self, dataset: &Dataset) -> Result<(), String>;
    /// Bytes the loaded data takes on the server.
    fn size(&mut self) -> Result<u64, String>;
    /// The server's effective settings as `# name = value` comment lines;
    /// `names` restricts them where the protocol cannot tell the
    /// non-default ones itself.
    fn settings_dump(&mut self, names: &[String]) -> Result<String, String>;
}

/// The error of a session asked for a dataset its protocol cannot hold.
pub fn unsupported(protocol: super::Protocol, dataset: &Dataset) -> String {
    format!(
        "a server speaking {} cannot hold {}",
        protocol.name(),
        dataset.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_the_ones_trials_recorded() {
        assert_eq!(Dataset::Pgbench { scale: 4 }.describe(), "pgbench scale 4");
        let s = Dataset::Sysbench {
            tables: 2,
            table_size: 100,
        };
        assert_eq!(s.describe(), "sysbench 2 tables x 100 rows");
        let e = unsupported(super::super::Protocol::DNS, &s);
        assert_eq!(
            e,
            "a server speaking DNS cannot hold sysbench 2 tables x 100 rows"
        );
    }

    #[test]
    fn a_kinds_own_dataset_says_itself_and_travels_whole() {
        let own = Dataset::Own(OwnDataset {
            name: "redis-keys".into(),
            settings: [("keys".to_string(), 100_000)].into(),
            description: "redis 100000 keys".into(),
            build_estimate_ms: 2500,
        });
        assert_eq!(own.describe(), "redis 100000 keys");
        assert_eq!(own.build_estimate(), Duration::from_millis(2500));
        // As the agent protocol carries it.
        let text = serde_json::to_string(&own).unwrap();
        assert!(
            text.starts_with(r#"{"kind":"own","name":"redis-keys""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Dataset>(&text).unwrap(), own);
    }

    #[test]
    fn a_server_table_declaring_a_dataset_is_told_where_it_went() {
        let t: toml::Table = "threads = 2\nscale = 10".parse().unwrap();
        let e = refuse_in_server(&t).unwrap_err();
        assert!(e.starts_with("`scale`"), "the field comes first: {e}");
        assert!(e.contains("move `scale` to [load]"), "{e}");
        assert!(refuse_in_server(&"threads = 2".parse().unwrap()).is_ok());
    }

    #[test]
    fn datasets_travel_as_tagged_json() {
        let d = Dataset::DnsZones {
            hosts: 5,
            veth: false,
        };
        let j = serde_json::to_string(&d).unwrap();
        assert_eq!(j, r#"{"kind":"dns_zones","hosts":5}"#);
        assert_eq!(serde_json::from_str::<Dataset>(&j).unwrap(), d);
        let v = Dataset::DnsZones {
            hosts: 5,
            veth: true,
        };
        let j = serde_json::to_string(&v).unwrap();
        assert_eq!(j, r#"{"kind":"dns_zones","hosts":5,"veth":true}"#);
        assert_eq!(serde_json::from_str::<Dataset>(&j).unwrap(), v);
    }
}
