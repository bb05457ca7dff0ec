//! MariaDB on a host without an agent: the host's own `mariadb-install-db`
//! and `mariadbd`, run by the bare shell as `mysql` in a private
//! directory, with the `my.cnf` and `init.sql` the Linux target writes.
//! The data directory is made fresh at every start (it goes with the
//! server); the coordinator loads sysbench's tables over its setup
//! session.

use super::{holds, Mariadb, MariadbSettings, KIND};
use crate::server::bare::{BareFile, BareHost, BareReady, BareServer, BareStep};
use crate::server::{Server, ServerError};
use std::path::Path;

/// The account the server runs as when the shell is root's: `mysql`
/// exists on Debian and with FreeBSD's package.
const USER: &str = "mysql";

/// MariaDB is built from its checked settings, here, or on a host without
/// an agent by a shell there from the same configuration.
impl crate::server::plan::ServerPlan for MariadbSettings {
    fn build(&self, base_dir: &Path) -> Result<Box<dyn Server>, ServerError> {
        Ok(Box::new(Mariadb::with_settings(self.clone(), base_dir)))
    }

    fn runs_bare(&self) -> bool {
        true
    }

    fn bare(&self, host: &BareHost) -> Result<BareServer, ServerError> {
        let dir = &host.dir;
        let cnf = dir.join("my.cnf").display().to_string();
        let port = self.port.unwrap_or(host.port);
        let config = self.render(dir, port, USER);
        let url = self.url(port);
        Ok(BareServer {
            kind: KIND,
            program: "mariadbd",
            program_path: None,
            dirs: vec!["tmp".into()],
            files: vec![
                BareFile::Text {
                    path: "my.cnf".into(),
                    text: config.clone(),
                },
                BareFile::Text {
                    path: "init.sql".into(),
                    text: self.init_sql(),
                },
            ],
            // --defaults-file must come first.
            args: vec![format!("--defaults-file={cnf}")],
            steps: vec![BareStep {
                program: "mariadb-install-db",
                args: vec![
                    format!("--defaults-file={cnf}"),
                    "--skip-test-db".into(),
                    "--auth-root-authentication-method=socket".into(),
                ],
            }],
            user: Some(USER),
            dataset: holds,
            stop_signal: "TERM",
            version_arg: "--version",
            logs: vec!["stderr.log".into(), "error.log".into()],
            ready: BareReady::Mysql(url.clone()),
            endpoint: url,
            config,
        })
    }
}
