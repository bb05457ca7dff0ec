//! PostgreSQL on a host without an agent: the host's own `initdb` and
//! `postgres`, run by the bare shell as `postgres` in a private directory,
//! with the configuration the Linux target writes (initdb's own settings,
//! then scalelab's lines and `pg_hba.conf`). The cluster is made fresh at
//! every start (the directory goes with the server); the coordinator
//! loads pgbench's dataset over its setup session.

use super::{holds, PostgresSettings, INITDB_ARGS, KIND};
use crate::server::bare::{BareFile, BareHost, BareReady, BareServer, BareStep};
use crate::server::{Server, ServerError};
use std::path::Path;

/// The account the server runs as when the shell is root's: it exists on
/// Debian and with FreeBSD's and DragonFly's packages.
const USER: &str = "postgres";

/// PostgreSQL is built from its checked settings, here, or on a host
/// without an agent by a shell there from the same configuration.
impl crate::server::plan::ServerPlan for PostgresSettings {
    fn build(&self, base_dir: &Path) -> Result<Box<dyn Server>, ServerError> {
        Ok(Box::new(super::Postgres::with_settings(
            self.clone(),
            base_dir,
        )?))
    }

    fn runs_bare(&self) -> bool {
        true
    }

    fn bare(&self, host: &BareHost) -> Result<BareServer, ServerError> {
        let dir = &host.dir;
        let at = |rel: &str| dir.join(rel).display().to_string();
        let port = self.port.unwrap_or(host.port);
        let config = self.render_bare_conf(&dir.join("data"), port, &dir.join("sock"));
        let conninfo = format!(
            "host={} port={port} user=postgres dbname=postgres",
            self.listen_addr()
        );
        let mut initdb: Vec<String> = INITDB_ARGS.iter().map(|a| a.to_string()).collect();
        initdb.extend(["-D".into(), at("data")]);
        Ok(BareServer {
            kind: KIND,
            program: "postgres",
            program_path: self.bin_dir.as_ref().map(|d| d.join("postgres")),
            dirs: vec!["sock".into()],
            files: vec![
                BareFile::Text {
                    path: "postgresql.conf".into(),
                    text: config.clone(),
                },
                BareFile::Text {
                    path: "pg_hba.conf".into(),
                    text: self.hba_rules(),
                },
            ],
            args: vec![
                "-D".into(),
                at("data"),
                "-c".into(),
                format!("config_file={}", at("postgresql.conf")),
                "-c".into(),
                format!("hba_file={}", at("pg_hba.conf")),
            ],
            steps: vec![BareStep {
                program: "initdb",
                args: initdb,
            }],
            user: Some(USER),
            dataset: holds,
            // PostgreSQL's fast shutdown: abort transactions, checkpoint.
            stop_signal: "INT",
            version_arg: "--version",
            logs: vec!["stderr.log".into()],
            ready: BareReady::Postgres(conninfo.clone()),
            endpoint: conninfo,
            config,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::bare::HostOs;
    use crate::server::plan::ServerPlan;

    #[test]
    fn the_bare_server_runs_initdb_then_postgres_on_its_private_files() {
        let s = PostgresSettings::parse(&"fsync = false".parse().unwrap()).unwrap();
        let host = BareHost {
            dir: "/tmp/b/scalelab-bare-1-2".into(),
            port: 25432,
            os: HostOs::FreeBsd,
        };
        let b = s.bare(&host).unwrap();
        assert_eq!(b.steps[0].program, "initdb");
        assert!(b.steps[0].args.ends_with(&[
            "-D".to_string(),
            "/tmp/b/scalelab-bare-1-2/data".to_string()
        ]));
        assert!(b
            .args
            .contains(&"config_file=/tmp/b/scalelab-bare-1-2/postgresql.conf".to_string()));
        let lines: Vec<&str> = b.config.lines().collect();
        let include = "include '/tmp/b/scalelab-bare-1-2/data/postgresql.conf'";
        let at = |l: &str| lines.iter().position(|x| *x == l);
        // initdb's settings first, so scalelab's override them.
        assert!(at(include) < at("fsync = off"), "{}", b.config);
        assert!(at("port = 25432").is_some(), "{}", b.config);
        assert_eq!(b.user, Some("postgres"));
        assert!((b.dataset)(Some(&crate::model::Dataset::Pgbench { scale: 1 })).is_ok());
    }
}
