//! The PostgreSQL load driver: pgbench's built-in scripts over the extended
//! protocol with prepared statements (`pgbench -M prepared`), from a native
//! client.
//!
//! The wire protocol (codec, auth, connection strings, the blocking client,
//! the pgbench dataset and the setup session) is [`crate::wire::pg`].
//!
//! - `script`: the built-in scripts and their random values.
//! - `conn`: the pg protocol of one connection, a
//!   `load::reqresp::Protocol` whose lifecycle the request/response drivers
//!   share, run by their shared event loop (one `mio` poll per thread);
//!   `ctx` holds what it reads.

mod conn;
mod ctx;
pub mod custom;
pub(crate) mod script;
mod tls;

pub use script::{QueryMode, Script, ScriptKind};

use crate::load::{Driver, ErrorKind, LoadError, LoadResult, LoadSpec};
use crate::shutdown::Shutdown;
use crate::wire::pg::client::Client;
use crate::wire::pg::conninfo::SslMode;
use crate::wire::pg::{dataset, ConnConfig};
use std::time::Duration;

/// The `pg` load kind.
pub const LOAD_KIND: crate::load::LoadKind = crate::load::LoadKind {
    name: "pg",
    protocol: crate::model::Protocol::POSTGRES,
    unit: crate::units::RateUnit::Transactions,
    error_kinds: ErrorKind::SQL_SERIALIZABLE,
    requires: &[],
    compile: |t| {
        let settings = PgSettings::parse(t)?;
        Ok(crate::load::kind::plan(
            settings,
            |s, endpoint| Ok(Box::new(PgDriver::new(s.clone(), endpoint)?)),
            PgSettings::dataset,
        ))
    },
    facts: None,
};

/// The pg driver's settings (the `[load]` keys besides the common ones).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgSettings {
    /// select-only | simple-update | tpcb-like (pgbench's default).
    #[serde(default = "default_script")]
    pub script: ScriptKind,
    /// Tries per transaction on serialization failure or deadlock
    /// (pgbench `--max-tries`; 1 = no retries).
    #[serde(default = "default_max_tries")]
    pub max_tries: u32,
    /// The dataset's scale: the workload's declared dataset, which a managed
    /// server is loaded with (pgbench `-i -s`) and the scripts draw ids from.
    /// Left out, no dataset is declared and the scale is detected from
    /// `pgbench_branches`, as pgbench does.
    #[serde(default)]
    pub scale: Option<u32>,
    /// pgbench's pre-run cleanup: vacuum branches and tellers, truncate
    /// history (`false` is pgbench `-n`).
    #[serde(default = "default_vacuum")]
    pub vacuum: bool,
    /// prepared | extended | simple (pgbench `-M`); scalelab's default is
    /// prepared, as the recipes and `pgbench -M prepared` measure.
    #[serde(default)]
    pub protocol: QueryMode,
    /// libpq's `sslmode` (disable, allow, prefer, require, verify-ca,
    /// verify-full), over the endpoint's; a managed server with
    /// `tls = true` asks for `verify-full`.
    #[serde(default)]
    pub sslmode: Option<String>,
    /// The CA file the server's certificate is checked against
    /// (`sslrootcert`), over the endpoint's.
    #[serde(default)]
    pub sslrootcert: Option<std::path::PathBuf>,
    /// The CA as PEM text. A run sets it to its managed server's own CA.
    #[serde(default)]
    pub ca_pem: Option<String>,
}

fn default_script() -> ScriptKind {
    ScriptKind::TpcbLike
}
fn default_max_tries() -> u32 {
    1
}
fn default_vacuum() -> bool {
    true
}

impl Default for PgSettings {
    fn default() -> Self {
        PgSettings {
            script: default_script(),
            max_tries: default_max_tries(),
            scale: None,
            vacuum: default_vacuum(),
            protocol: QueryMode::default(),
            sslmode: None,
            sslrootcert: None,
            ca_pem: None,
        }
    }
}

impl PgSettings {
    pub(crate) fn parse(t: &toml::Table) -> Result<Self, LoadError> {
        let s: PgSettings = crate::kinds::parse_settings(t).map_err(LoadError::Spec)?;
        if s.max_tries == 0 {
            return Err(LoadError::Spec(
                "max_tries must be at least 1 (1 means no retries)".into(),
            ));
        }
        if let Some(m) = &s.sslmode {
            SslMode::parse(m).map_err(|e| LoadError::Spec(format!("`sslmode`: {e}")))?;
        }
        if let Some(scale) = s.scale {
            crate::load::limits::PG_SCALE
                .check(scale.into())
                .map_err(|e| LoadError::Spec(format!("{e} (or leave `scale` out to detect it)")))?;
        }
        Ok(s)
    }

    /// The dataset these settings declare: pgbench's tables at `scale`.
    pub fn dataset(&self) -> Option<crate::model::Dataset> {
        self.scale
            .map(|scale| crate::model::Dataset::Pgbench { scale })
    }
}

/// Bound on setup statements (connect, scale detection, vacuum).
const SETUP_TIMEOUT: Duration = Duration::from_secs(60);

/// The `pg` load's driver: runs a pgbench script against one server. It
/// keeps no connection between runs: each run opens a setup connection
/// (scale detection, vacuum), then the workers' own.
pub struct PgDriver {
    settings: PgSettings,
    config: ConnConfig,
    /// Transactions are counted here while a run goes (`-P`).
    progress: Option<std::sync::Arc<crate::load::live::Live>>,
    /// Scripts run instead of the settings' built-in one, with their
    /// weights: a custom script (`-f`), or a mix of built-in ones
    /// (`-b NAME@WEIGHT` given several times).
    custom: Option<Vec<(Script, u32)>>,
    /// Every transaction logged here (pgbench `-l`; see
    /// [`PgDriver::log_into`]).
    txn_log: Option<std::path::PathBuf>,
    /// Rate mode: skip transactions later than this (pgbench `-L`).
    skip_later_than: Option<Duration>,
    /// The workers' TLS, as `sslmode` asks (TCP only: over a Unix socket
    /// there is none, as in libpq).
    tls: Option<tls::PgTls>,
}

/// One statement's latency over a run (pgbench `-r`).
#[derive(Clone, Debug)]
pub struct StatementLatency {
    /// The statement's SQL.
    pub sql: String,
    /// Its latency, in microseconds: from sending it to its reply.
    pub latency: hdrhistogram::Histogram<u64>,
}

impl PgDriver {
    #[cfg(test)]
    pub(crate) fn from_settings(t: &toml::Table, endpoint: &str) -> Result<Self, LoadError> {
        Self::new(PgSettings::parse(t)?, endpoint)
    }

    /// A driver for the server `endpoint` names (a libpq connection string
    /// or URI, its gaps filled from `PG*` variables). A string that does not
    /// parse, or names a host `wire::policy` refuses, is a [`LoadError::Target`] whose
    /// text hides any password. Nothing connects until a run.
    pub fn new(settings: PgSettings, endpoint: &str) -> Result<Self, LoadError> {
        let config = ConnConfig::parse(endpoint).map_err(|e| LoadError::Target {
            target: redact(endpoint),
            reason: e.to_string(),
        })?;
        let tls = Self::tls_of(&settings, &config)?;
        Ok(PgDriver {
            settings,
            config,
            progress: None,
            custom: None,
            txn_log: None,
            skip_later_than: None,
            tls,
        })
    }

    /// The TLS the settings (over the endpoint's `sslmode` and
    /// `sslrootcert`) ask for; `None` for `disable` or a Unix socket.
    fn tls_of(settings: &PgSettings, config: &ConnConfig) -> Result<Option<tls::PgTls>, LoadError> {
        let mode = match &settings.sslmode {
            Some(m) => SslMode::parse(m).map_err(LoadError::Spec)?,
            None => config.sslmode,
        };
        let crate::wire::pg::conninfo::Host::Tcp(addr) = config.host else {
            return Ok(None);
        };
        let rootcert = settings
            .sslrootcert
            .as_deref()
            .or(config.sslrootcert.as_deref());
        tls::PgTls::new(
            mode,
            addr,
            settings.ca_pem.as_deref(),
            rootcert,
            SETUP_TIMEOUT.min(Duration::from_secs(10)),
        )
        .map_err(LoadError::Spec)
    }

    /// One opening before the run, as the workers' will be: a certificate
    /// that does not verify, or a server that serves no TLS where the mode
    /// needs it, is an error before any load, in words; else what the
    /// handshake settled, for the run's notes.
    fn probe_tls(&self) -> Result<Option<String>, LoadError> {
        let (Some(t), crate::wire::pg::conninfo::Host::Tcp(addr)) = (&self.tls, &self.config.host)
        else {
            return Ok(None);
        };
        let (_, negotiated) = t.open(*addr).map_err(|e| LoadError::Target {
            target: self.config.describe(),
            reason: e.to_string(),
        })?;
        Ok(Some(match negotiated {
            Some(n) => format!(
                "TLS (sslmode={}{}): {} {} {}; client {}",
                t.mode.name(),
                if t.mode.verifies() {
                    ", certificate checked"
                } else {
                    ", certificate not checked"
                },
                n.version,
                n.cipher,
                n.group.as_deref().unwrap_or(""),
                crate::tls::client::LIBRARY
            ),
            None => format!(
                "sslmode={}: the server serves no TLS, so the run is in cleartext",
                t.mode.name()
            ),
        }))
    }

    /// Runs `script` (a custom `-f` file) instead of the built-in script.
    /// A custom script need not use pgbench's tables: the scale is not
    /// detected (the setting, else 1) and there is no pre-run vacuum.
    pub fn use_script(&mut self, script: Script) {
        self.custom = Some(vec![(script, 1)]);
    }

    /// Runs a mix of scripts instead of the built-in script, each
    /// transaction drawn by weight, as pgbench does with several `-b
    /// NAME@WEIGHT` (at most 32 statements in all).
    pub fn use_mix(&mut self, scripts: Vec<(Script, u32)>) -> Result<(), LoadError> {
        let statements: usize = scripts.iter().map(|(s, _)| s.statements().len()).sum();
        if statements > script::STATEMENT_NAMES.len() || scripts.iter().all(|(_, w)| *w == 0) {
            return Err(LoadError::Spec(format!(
                "a mix of scripts needs a weight above 0 and at most {} statements in all",
                script::STATEMENT_NAMES.len()
            )));
        }
        self.custom = Some(scripts);
        Ok(())
    }

    /// The script a run executes (the first of a mix).
    pub fn script(&self) -> Script {
        self.scripts().swap_remove(0).0
    }

    /// The scripts a run executes, with their weights.
    pub fn scripts(&self) -> Vec<(Script, u32)> {
        self.custom
            .clone()
            .unwrap_or_else(|| vec![(self.settings.script.into(), 1)])
    }

    /// Counts transactions into `counter` as runs go, for a progress
    /// display.
    pub fn count_into(&mut self, counter: std::sync::Arc<crate::load::live::Live>) {
        self.progress = Some(counter);
    }

    /// Logs every transaction of a run, one line each in pgbench `-l`'s
    /// format, the first worker thread's to `path`, thread N's to
    /// `path.N` (pgbench's `pgbench_log.PID` and `pgbench_log.PID.N`).
    pub fn log_into(&mut self, path: std::path::PathBuf) {
        self.txn_log = Some(path);
    }

    /// In rate mode, skips (counts in [`LoadResult::skipped`], does not
    /// send) every transaction already later than `limit` against its
    /// schedule, as pgbench `-L` does with `-R`.
    pub fn skip_later_than(&mut self, limit: Duration) {
        self.skip_later_than = Some(limit);
    }

    /// A setup connection, with a message that says where it failed.
    pub fn connect(&self, timeout: Duration) -> Result<Client, LoadError> {
        Client::connect(&self.config, timeout).map_err(|e| {
            LoadError::Setup(format!(
                "cannot connect to PostgreSQL at {}: {e}",
                self.config.describe()
            ))
        })
    }

    /// The configured scale, or pgbench's detection: rows in
    /// `pgbench_branches`.
    pub fn scale(&self) -> Result<u32, LoadError> {
        if let Some(s) = self.settings.scale {
            return Ok(s);
        }
        if self.custom.is_some() {
            return Ok(1);
        }
        let mut c = self.connect(SETUP_TIMEOUT)?;
        detect_scale(&mut c)
    }

    /// pgbench's pre-run cleanup.
    fn vacuum(&self, c: &mut Client) -> Result<(), LoadError> {
        // One statement per query: VACUUM refuses an implicit transaction.
        for sql in [
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ] {
            c.execute(sql)
                .map_err(|e| LoadError::Setup(format!("pre-run `{sql}` failed: {e}")))?;
        }
        Ok(())
    }
}

fn detect_scale(c: &mut Client) -> Result<u32, LoadError> {
    match dataset::detect_scale(c) {
        Ok(0) => Err(LoadError::Setup(
            "pgbench_branches is empty; initialize with `scalelab load pg CONNINFO --init --scale N`"
                .into(),
        )),
        Ok(n) => Ok(n),
        Err(e) => Err(LoadError::Setup(format!(
            "cannot read the pgbench dataset ({e}); initialize it with \
             `scalelab load pg CONNINFO --init --scale N`"
        ))),
    }
}

/// Hides a password in a connection string shown in an error.
fn redact(endpoint: &str) -> String {
    if endpoint.contains("password") || endpoint.contains('@') {
        "(connection string)".into()
    } else {
        endpoint.into()
    }
}

impl Driver for PgDriver {
    fn name(&self) -> &'static str {
        "pg"
    }

    fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadResult, LoadError> {
        Ok(self.run_timed(spec, shutdown, false)?.result)
    }
}

/// What [`PgDriver::run_timed`] measured.
pub struct Timed {
    /// The run's result.
    pub result: LoadResult,
    /// With `per_statement`, each statement's latency, in script order
    /// (pgbench `-r`); empty without.
    pub statements: Vec<StatementLatency>,
    /// Completed transactions per script, in [`PgDriver::scripts`] order.
    pub by_script: Vec<u64>,
}

impl PgDriver {
    /// A run, and with `per_statement` each statement's latency.
    pub fn run_timed(
        &self,
        spec: &LoadSpec,
        shutdown: &Shutdown,
        per_statement: bool,
    ) -> Result<Timed, LoadError> {
        spec.validate()?;
        crate::load::raise_fd_limit();
        let scripts = self.scripts();
        let builtin = scripts.iter().any(|(s, _)| s.builtin.is_some());
        let tls_note = self.probe_tls()?;
        let mut setup = self.connect(SETUP_TIMEOUT)?;
        let scale = match (self.settings.scale, builtin) {
            (Some(s), _) => s,
            (None, true) => detect_scale(&mut setup)?,
            (None, false) => 1,
        };
        if self.settings.vacuum && builtin {
            self.vacuum(&mut setup)?;
        }
        drop(setup);
        let threads = spec.effective_threads();
        let run = ctx::Run {
            cfg: self.config.clone(),
            scripts,
            mode: self.settings.protocol,
            scale: i64::from(scale),
            max_tries: self.settings.max_tries,
            per_statement,
            tls: self.tls.clone(),
        };
        let mut shared = ctx::Shared::new(spec, shutdown, threads, run);
        shared.progress = self.progress.clone();
        shared.txn_log = self.txn_log.clone();
        shared.skip_later_than = self.skip_later_than;
        let (mut result, locals) =
            crate::load::event_loop::run_workers::<conn::Conn>(&shared, threads)?;
        result.notes.extend(tls_note);
        let by_script = (0..shared.scripts.len())
            .map(|i| locals.iter().map(|l| l.done_by_script[i]).sum())
            .collect();
        if !per_statement {
            return Ok(Timed {
                result,
                statements: Vec::new(),
                by_script,
            });
        }
        let statements = shared
            .all_statements()
            .enumerate()
            .map(|(i, s)| {
                let mut latency = crate::load::histogram::new_histogram();
                for h in locals.iter().filter_map(|l| l.statements.as_ref()?.get(i)) {
                    let _ = latency.add(h);
                }
                StatementLatency {
                    sql: s.sql.to_string(),
                    latency,
                }
            })
            .collect();
        Ok(Timed {
            result,
            statements,
            by_script,
        })
    }
}

/// Builds pgbench's dataset at `scale` on the server at `endpoint`.
pub fn init_dataset(endpoint: &str, scale: u32) -> Result<dataset::DatasetSize, LoadError> {
    let driver = PgDriver::new(PgSettings::default(), endpoint)?;
    let mut c = driver.connect(SETUP_TIMEOUT)?;
    dataset::create(&mut c, scale)
        .map_err(|e| LoadError::Setup(format!("building the pgbench dataset failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn settings_default_like_pgbench() {
        let s = PgSettings::parse(&toml::Table::new()).unwrap();
        assert_eq!(s, PgSettings::default());
        assert_eq!(s.script, ScriptKind::TpcbLike);
        assert_eq!(s.max_tries, 1);
        // Recipes keep prepared statements unless they say (issue 41: only
        // `load pg` took pgbench's -M simple as its default).
        assert_eq!(s.protocol, QueryMode::Prepared);
        let s = PgSettings::parse(&table("script = \"select-only\"\nmax_tries = 5\nscale = 3"))
            .unwrap();
        assert_eq!(
            (s.script, s.max_tries, s.scale),
            (ScriptKind::SelectOnly, 5, Some(3))
        );
    }

    /// `sslmode` is libpq's and overrides the endpoint's; a verifying
    /// mode with no CA names what to give; over a Unix socket there is
    /// no TLS, as in libpq.
    #[test]
    fn sslmode_is_checked_and_overrides_the_endpoints() {
        let e = PgSettings::parse(&table("sslmode = \"on\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`sslmode`") && e.contains("verify-full"), "{e}");
        let tcp = "host=127.0.0.1 port=5 sslmode=verify-full";
        let e = PgDriver::new(PgSettings::default(), tcp)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sslrootcert=FILE"), "{e}");
        let off = PgSettings {
            sslmode: Some("disable".into()),
            ..PgSettings::default()
        };
        assert!(PgDriver::new(off, tcp).unwrap().tls.is_none());
        let req = PgDriver::new(
            PgSettings::default(),
            "host=127.0.0.1 port=5 sslmode=require",
        );
        assert_eq!(req.unwrap().tls.map(|t| t.mode), Some(SslMode::Require));
        let unix = PgDriver::new(PgSettings::default(), "host=/tmp port=5 sslmode=require");
        assert!(unix.unwrap().tls.is_none());
    }

    #[test]
    fn bad_settings_name_the_field() {
        let e = PgSettings::parse(&table("script = \"tpcb\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tpcb-like"), "{e}");
        let e = PgSettings::parse(&table("scripts = \"tpcb-like\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("scripts"), "{e}");
        let e = PgSettings::parse(&table("max_tries = 0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_tries"), "{e}");
        for bad in ["scale = 0", "scale = 100001"] {
            let e = PgSettings::parse(&table(bad)).unwrap_err().to_string();
            assert!(
                e.starts_with("invalid load: `scale` must be 1 to 100000"),
                "{e}"
            );
        }
    }

    #[test]
    fn the_scale_declares_the_dataset() {
        let s = PgSettings::parse(&table("scale = 4")).unwrap();
        assert_eq!(
            s.dataset(),
            Some(crate::model::Dataset::Pgbench { scale: 4 })
        );
        assert_eq!(
            PgSettings::default().dataset(),
            None,
            "detected, not declared"
        );
    }

    #[test]
    fn endpoints_are_checked_up_front_without_leaking_passwords() {
        let e = PgDriver::from_settings(&toml::Table::new(), "host=192.168.1.5 password=hunter2")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("loopback"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
        assert!(PgDriver::from_settings(&toml::Table::new(), "postgresql://127.0.0.1:5/x").is_ok());
    }
}
