//! The MySQL/MariaDB load driver: sysbench's OLTP scripts over server-side
//! prepared statements, from a native client (no libmysqlclient).
//!
//! The wire protocol (codec, `mysql://` URLs, the blocking client, the
//! sysbench dataset and the setup session) is [`crate::wire::mysql`].
//!
//! - `script`: the scripts as data.
//! - `conn`: the mysql protocol of one connection, a
//!   `load::reqresp::Protocol` whose lifecycle the request/response drivers
//!   share, run by their shared event loop (one `mio` poll per thread);
//!   `ctx` holds what it reads.

mod conn;
mod ctx;
pub(crate) mod script;
pub mod tls;

pub use script::{Options, ScriptKind};

use crate::load::{Driver, ErrorKind, LoadError, LoadResult, LoadSpec};
use crate::shutdown::Shutdown;
use crate::wire::mysql::client::{Client, ClientError};
use crate::wire::mysql::{dataset, MysqlUrl};
use std::time::Duration;

/// The `mysql` load kind.
pub const LOAD_KIND: crate::load::LoadKind = crate::load::LoadKind {
    name: "mysql",
    protocol: crate::model::Protocol::MYSQL,
    unit: crate::units::RateUnit::Transactions,
    error_kinds: ErrorKind::SQL_LOCKING,
    requires: &[],
    compile: |t| {
        let settings = MysqlSettings::parse(t)?;
        Ok(crate::load::kind::plan(
            settings,
            |s, endpoint| Ok(Box::new(MysqlDriver::new(s.clone(), endpoint)?)),
            MysqlSettings::dataset,
        ))
    },
    facts: None,
};

/// The mysql driver's settings (the `[load]` keys besides the common ones).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MysqlSettings {
    /// oltp_read_only | oltp_read_write | oltp_point_select |
    /// oltp_write_only | oltp_update_index.
    #[serde(default = "default_script")]
    pub script: ScriptKind,
    /// Tables to spread over (`--tables`). Given, it declares the workload's
    /// dataset, which a managed server is loaded with (`sysbench prepare`);
    /// left out, the load spreads over every sbtest table it finds.
    #[serde(default)]
    pub tables: Option<u32>,
    /// Rows per table (`--table-size`): of the declared dataset (default
    /// sysbench's 10000), else the rows of sbtest1.
    #[serde(default)]
    pub table_size: Option<u32>,
    /// `--range_size` of the range selects.
    #[serde(default = "default_range_size")]
    pub range_size: u32,
    /// TLS, as the MySQL client's `--ssl-mode`: `"disabled"`,
    /// `"required"` (sysbench's `--mysql-ssl=on`), `"verify_ca"` or
    /// `"verify_identity"`; by default `"verify_identity"` where the run's
    /// managed server serves TLS (`ca_pem`), else `"disabled"`.
    #[serde(default)]
    pub ssl_mode: Option<String>,
    /// The CA file the server's certificate is checked against.
    #[serde(default)]
    pub ca_file: Option<std::path::PathBuf>,
    /// The CA as PEM text. A run sets it to its managed server's own CA.
    #[serde(default)]
    pub ca_pem: Option<String>,
}

fn default_script() -> ScriptKind {
    ScriptKind::OltpReadWrite
}
fn default_range_size() -> u32 {
    100
}

impl Default for MysqlSettings {
    fn default() -> Self {
        MysqlSettings {
            script: default_script(),
            tables: None,
            table_size: None,
            range_size: default_range_size(),
            ssl_mode: None,
            ca_file: None,
            ca_pem: None,
        }
    }
}

impl MysqlSettings {
    pub(crate) fn parse(t: &toml::Table) -> Result<Self, LoadError> {
        let s: MysqlSettings = crate::kinds::parse_settings(t).map_err(LoadError::Spec)?;
        use crate::load::limits::{MYSQL_TABLES, MYSQL_TABLE_SIZE};
        for (range, v) in [(MYSQL_TABLES, s.tables), (MYSQL_TABLE_SIZE, s.table_size)] {
            if let Some(v) = v {
                range.check(v.into()).map_err(|e| {
                    LoadError::Spec(format!("{e} (or leave it out to use what the schema has)"))
                })?;
            }
        }
        if s.range_size == 0 {
            return Err(LoadError::Spec("range_size must be at least 1".into()));
        }
        s.ssl()?;
        Ok(s)
    }

    /// The dataset these settings declare: `tables` sbtest tables of
    /// `table_size` rows (sysbench's default 10000), when `tables` is given.
    pub fn dataset(&self) -> Option<crate::model::Dataset> {
        self.tables.map(|tables| crate::model::Dataset::Sysbench {
            tables,
            table_size: self.table_size.unwrap_or(DEFAULT_TABLE_SIZE),
        })
    }
}

impl MysqlSettings {
    /// The TLS mode asked for, or the default.
    pub fn ssl(&self) -> Result<tls::SslMode, LoadError> {
        match (&self.ssl_mode, &self.ca_pem) {
            (Some(m), _) => tls::SslMode::parse(m).map_err(LoadError::Spec),
            (None, Some(_)) => Ok(tls::SslMode::VerifyIdentity),
            (None, None) => Ok(tls::SslMode::Disabled),
        }
    }
}

/// sysbench's `--table-size` default.
const DEFAULT_TABLE_SIZE: u32 = 10_000;

const SETUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The `mysql` load's driver: runs a sysbench OLTP script against one
/// MySQL or MariaDB server. It keeps no connection between runs: each run
/// reads the schema over a setup connection, then opens the workers' own.
pub struct MysqlDriver {
    settings: MysqlSettings,
    url: MysqlUrl,
    /// Transactions are counted here while a run goes (`--report-interval`).
    progress: Option<std::sync::Arc<crate::load::live::Live>>,
    /// The workers' TLS, as `ssl_mode` asks.
    tls: Option<tls::MysqlTls>,
}

impl MysqlDriver {
    /// A driver for the server `endpoint` names (a [`MysqlUrl`]). A URL that
    /// does not parse, or names a host off loopback, is a
    /// [`LoadError::Target`] that never shows the password. Nothing
    /// connects until a run.
    pub fn new(settings: MysqlSettings, endpoint: &str) -> Result<Self, LoadError> {
        let url = MysqlUrl::parse(endpoint).map_err(|e| LoadError::Target {
            target: "(mysql endpoint)".into(),
            reason: e.to_string(),
        })?;
        let tls = tls::MysqlTls::new(
            settings.ssl()?,
            url.addr,
            settings.ca_pem.as_deref(),
            settings.ca_file.as_deref(),
            SETUP_TIMEOUT.min(Duration::from_secs(10)),
        )
        .map_err(LoadError::Spec)?;
        Ok(MysqlDriver {
            settings,
            url,
            progress: None,
            tls,
        })
    }

    /// One opening before the run, as the workers' will be: a certificate
    /// that does not verify, or a server that serves no TLS, is an error
    /// before any load, in words; else what was negotiated, for the notes.
    fn probe_tls(&self) -> Result<Option<String>, LoadError> {
        let Some(t) = &self.tls else { return Ok(None) };
        let (_, n) = t.open(self.url.addr).map_err(|e| LoadError::Target {
            target: self.url.addr.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Some(format!(
            "TLS (ssl_mode {}{}): {} {} {}; client {}",
            t.mode.name(),
            match t.mode {
                tls::SslMode::VerifyIdentity => ", certificate checked",
                _ => ", certificate not checked",
            },
            n.version,
            n.cipher,
            n.group.as_deref().unwrap_or(""),
            crate::tls::client::LIBRARY
        )))
    }

    /// Counts transactions into `counter` as runs go, for a progress
    /// display.
    pub fn count_into(&mut self, counter: std::sync::Arc<crate::load::live::Live>) {
        self.progress = Some(counter);
    }

    /// A setup connection, with a message that says what went wrong and
    /// how to fix it.
    pub fn connect(&self) -> Result<Client, LoadError> {
        Client::connect(&self.url, SETUP_TIMEOUT).map_err(|e| setup_error(&self.url, &e))
    }

    /// The tables and rows the run uses: the settings, checked against the
    /// schema, or what the schema has.
    pub fn options(&self, c: &mut Client) -> Result<Options, LoadError> {
        let (found_tables, found_size) = dataset::detect(c)
            .map_err(|e| LoadError::Setup(format!("cannot read the schema: {e}")))?;
        if found_tables == 0 {
            return Err(LoadError::Setup(format!(
                "database `{}` has no sbtest tables; create them with `scalelab load mysql \
                 URL --init --tables N --table-size M` (or sysbench oltp_read_write prepare)",
                self.url.database
            )));
        }
        let tables = self.settings.tables.unwrap_or(found_tables);
        if tables > found_tables {
            return Err(LoadError::Setup(format!(
                "--tables {tables} is more than the schema has (sbtest1..sbtest{found_tables}); \
                 use --tables {found_tables} or rebuild with --init --tables {tables}"
            )));
        }
        let mut opts = Options::new(tables, self.settings.table_size.unwrap_or(found_size));
        opts.range_size = self.settings.range_size;
        if self.settings.script == ScriptKind::OltpPointSelect {
            opts.point_selects = 1;
        }
        Ok(opts)
    }
}

/// Turns a failed setup connection into an error that names the fix.
fn setup_error(url: &MysqlUrl, e: &ClientError) -> LoadError {
    let at = url.describe();
    let hint = match e.server_code() {
        Some(1045) => format!(
            "wrong user or password for `{}` (check USER:PASS in the URL)",
            url.user
        ),
        Some(1049) => format!(
            "database `{}` does not exist (create it, or name another one in the URL)",
            url.database
        ),
        Some(1044) => format!(
            "user `{}` may not use database `{}` (GRANT it, or name another one)",
            url.user, url.database
        ),
        _ => match e {
            ClientError::Connect { .. } => {
                format!("{e} (is the server running and listening on that port?)")
            }
            other => other.to_string(),
        },
    };
    LoadError::Setup(format!("cannot connect to MySQL at {at}: {hint}"))
}

impl Driver for MysqlDriver {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadResult, LoadError> {
        spec.validate()?;
        crate::load::raise_fd_limit();
        let tls_note = self.probe_tls()?;
        let (opts, caches_metadata) = {
            let mut c = self.connect()?;
            (self.options(&mut c)?, c.caches_metadata())
        };
        let script = self.settings.script;
        let mut prepares = Vec::new();
        for t in 1..=opts.tables {
            for q in script.queries() {
                prepares.push((script::statement_slot(t, q), q.sql(t)));
            }
        }
        let begin_slot = script::statement_slot(opts.tables + 1, script::Query::PointSelect);
        if script.explicit_transaction() {
            prepares.push((begin_slot, "BEGIN".into()));
            prepares.push((begin_slot + 1, "COMMIT".into()));
        }
        let threads = spec.effective_threads();
        let run = ctx::Run {
            url: self.url.clone(),
            script,
            opts,
            prepares,
            begin_slot,
            tls: self.tls.clone(),
        };
        let mut shared = ctx::Shared::new(spec, shutdown, threads, run);
        shared.progress = self.progress.clone();
        let (mut result, ignored) =
            crate::load::event_loop::run_workers::<conn::Conn>(&shared, threads)?;
        note_ignored(&mut result, &ignored);
        result.notes.extend(tls_note);
        if caches_metadata {
            result.notes.push(
                "protocol: MARIADB_CLIENT_CACHE_METADATA negotiated (as libmariadb does): the \
                 server resends result-set column definitions only when they change"
                    .into(),
            );
        }
        Ok(result)
    }
}

/// Notes the errors rolled back and retried, summed over the workers.
fn note_ignored(result: &mut LoadResult, per_worker: &[ctx::Ignored]) {
    let mut ignored = [0u64; ctx::IGNORED_ERRORS.len()];
    for w in per_worker {
        for (sum, n) in ignored.iter_mut().zip(w.0) {
            *sum += n;
        }
    }
    if ignored.iter().any(|&n| n > 0) {
        let parts: Vec<String> = ctx::IGNORED_ERRORS
            .iter()
            .zip(ignored)
            .filter(|(_, n)| *n > 0)
            .map(|(code, n)| format!("{n} x error {code}"))
            .collect();
        result.notes.push(format!(
            "ignored errors (rolled back and retried, as sysbench --mysql-ignore-errors): {}",
            parts.join(", ")
        ));
    }
}

/// Builds sysbench's dataset on the server at `endpoint`.
pub fn init_dataset(
    endpoint: &str,
    tables: u32,
    table_size: u32,
) -> Result<dataset::DatasetSize, LoadError> {
    if tables == 0 || table_size == 0 {
        return Err(LoadError::Spec(
            "--tables and --table-size must be at least 1".into(),
        ));
    }
    let driver = MysqlDriver::new(MysqlSettings::default(), endpoint)?;
    let mut c = driver.connect()?;
    dataset::create(&mut c, tables, table_size)
        .map_err(|e| LoadError::Setup(format!("building the sysbench dataset failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    /// `ssl_mode` takes MySQL's names and sysbench's on/off, refuses
    /// `preferred` (a silent fallback) by name, and defaults to
    /// verify_identity where the run's managed server hands out its CA.
    #[test]
    fn ssl_mode_takes_mysqls_and_sysbenchs_names() {
        let mode = |t: &str| MysqlSettings::parse(&table(t)).and_then(|s| s.ssl());
        assert_eq!(mode("").unwrap(), tls::SslMode::Disabled);
        assert_eq!(mode("ssl_mode = \"on\"").unwrap(), tls::SslMode::Required);
        assert_eq!(
            mode("ssl_mode = \"VERIFY_CA\"").unwrap(),
            tls::SslMode::VerifyIdentity
        );
        assert_eq!(
            mode("ca_pem = \"x\"").unwrap(),
            tls::SslMode::VerifyIdentity
        );
        let e = mode("ssl_mode = \"preferred\"").unwrap_err().to_string();
        assert!(e.contains("fall back to cleartext"), "{e}");
        let e = mode("ssl_mode = \"yes\"").unwrap_err().to_string();
        assert!(e.contains("verify_identity"), "{e}");
        let verify = MysqlSettings {
            ssl_mode: Some("verify_identity".into()),
            ..MysqlSettings::default()
        };
        let e = MysqlDriver::new(verify, "mysql://u@127.0.0.1:3306/db")
            .err()
            .unwrap();
        assert!(e.to_string().contains("--cacert FILE"), "{e}");
    }

    #[test]
    fn settings_default_like_sysbench_and_name_bad_fields() {
        let s = MysqlSettings::parse(&toml::Table::new()).unwrap();
        assert_eq!(s, MysqlSettings::default());
        let s = MysqlSettings::parse(&table("script = \"oltp_read_only\"\ntables = 4")).unwrap();
        assert_eq!((s.script, s.tables), (ScriptKind::OltpReadOnly, Some(4)));
        let e = MysqlSettings::parse(&table("script = \"oltp_insert\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("oltp_read_only"), "{e}");
        let e = MysqlSettings::parse(&table("tables = 0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("tables"), "{e}");
    }

    #[test]
    fn tables_declare_the_dataset() {
        use crate::model::Dataset;
        let s = MysqlSettings::parse(&table("tables = 2\ntable_size = 500")).unwrap();
        let want = Dataset::Sysbench {
            tables: 2,
            table_size: 500,
        };
        assert_eq!(s.dataset(), Some(want));
        let s = MysqlSettings::parse(&table("tables = 3")).unwrap();
        let want = Dataset::Sysbench {
            tables: 3,
            table_size: 10_000,
        };
        assert_eq!(s.dataset(), Some(want), "sysbench's default size");
        let s = MysqlSettings::parse(&table("table_size = 500")).unwrap();
        assert_eq!(s.dataset(), None, "no tables: whatever the schema has");
    }
}
