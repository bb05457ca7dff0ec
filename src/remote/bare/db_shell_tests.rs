//! The bare script of a real PostgreSQL under `dash` and `posh`, as root:
//! `shellcheck -s sh` clean, initdb and the server run as `postgres`, a
//! setup session (startup handshake and a query) reaches it, and a stop
//! or a closed stdin leaves no process and no directory.

use super::script::server_script;
use super::script::shells::{euid, shellcheck, spawn};
use crate::model::SetupAddr;
use crate::server::bare::{BareHost, BareReady, HostOs};
use crate::server::plan::ServerPlan;
use crate::server::postgres::PostgresSettings;
use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

/// Lines up to one starting with `mark` (and it).
fn until(out: &mut impl BufRead, mark: &str) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        let mut l = String::new();
        if out.read_line(&mut l).unwrap() == 0 {
            return lines;
        }
        lines.push(l.trim_end().to_string());
        if l.starts_with(mark) {
            return lines;
        }
    }
}

#[test]
fn postgres_runs_as_its_user_under_dash_and_posh_and_leaves_nothing() {
    assert_eq!(euid(), 0, "run as root, as the lab's tests are");
    let settings = PostgresSettings::parse(&"fsync = false".parse().unwrap()).unwrap();
    // Every other shell ends by closing stdin, not by `stop`.
    let shells = crate::kinds::TEST_SHELLS.iter().copied();
    for (shell, close) in shells.zip([false, true].into_iter().cycle()) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("scalelab-bare-t");
        let port = crate::sys::process::free_port().unwrap();
        let host = BareHost {
            dir: dir.clone(),
            port,
            os: HostOs::Linux,
        };
        let bare = settings.bare(&host).unwrap();
        let script = server_script(&bare, &dir.display().to_string(), None).unwrap();
        let said = shellcheck(&script, tmp.path());
        assert!(said.is_empty(), "{said}");
        let mut child = spawn(shell, &script, tmp.path());
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let lines = until(&mut out, "#started");
        assert!(
            lines.last().unwrap().starts_with("#started"),
            "{shell}: {lines:?}"
        );
        let BareReady::Postgres(uri) = &bare.ready else {
            panic!("{:?}", bare.ready)
        };
        let addr = SetupAddr {
            uri,
            netns: None,
            timeout: Duration::from_secs(1),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut session = loop {
            match crate::wire::pg::setup::connect(&addr) {
                Ok(s) => break s,
                Err(e) => assert!(Instant::now() < deadline, "{shell}: {e}"),
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(session.size().unwrap() > 0, "{shell}");
        drop(session);
        let server: u32 = std::fs::read_to_string(dir.join("server.sh.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let owner = crate::procfs::pid::owner(server).unwrap();
        assert_ne!(owner, 0, "{shell}: postgres runs as root");
        let mut stdin = child.stdin.take().unwrap();
        if close {
            drop(stdin);
        } else {
            writeln!(stdin, "stop").unwrap();
            let lines = until(&mut out, "#stopped");
            assert_eq!(
                lines.last().map(String::as_str),
                Some("#stopped"),
                "{shell}"
            );
            drop(stdin);
        }
        child.wait().unwrap();
        assert!(
            !crate::sys::process::is_alive(server),
            "{shell}: {server} left"
        );
        assert!(!dir.exists(), "{shell}: {} left", dir.display());
    }
}

#[test]
fn the_mariadb_script_passes_shellcheck() {
    let settings = crate::server::mariadb::MariadbSettings::parse(&toml::Table::new()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let host = BareHost {
        dir: tmp.path().join("scalelab-bare-m"),
        port: 23306,
        os: HostOs::FreeBsd,
    };
    let bare = settings.bare(&host).unwrap();
    assert_eq!(bare.steps[0].program, "mariadb-install-db");
    let script =
        server_script(&bare, &host.dir.display().to_string(), Some("cpuset -l 0")).unwrap();
    let said = shellcheck(&script, tmp.path());
    assert!(said.is_empty(), "{said}");
}
