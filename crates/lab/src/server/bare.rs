//! A managed server on a host without an agent (`agent = false`, or an OS
//! scalelab cannot run on): what a kind hands the shell that runs it there.
//!
//! The kind writes the same configuration it writes here, for a private
//! directory on that host ([`BareHost::dir`]); the remote side
//! (`remote::bare`) copies the files in, starts the host's own binary
//! (found on `PATH`, in `/usr/local/sbin` or `/usr/local/bin`, or at the
//! recipe's path), waits until it answers, stops it by PID and brings its
//! logs back on failure. A kind that has no such recipe refuses the host
//! with a clear message ([`super::ServerPlan::bare`]'s default).

use std::net::IpAddr;
use std::path::PathBuf;

/// The operating system of a host, from `uname -s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HostOs {
    /// `Linux`.
    Linux,
    /// `FreeBSD`.
    FreeBsd,
    /// `DragonFly`.
    DragonFly,
    /// `NetBSD`.
    NetBsd,
    /// Anything else (`OpenBSD`, `Darwin`, ...): only portable commands.
    Other,
}

impl HostOs {
    /// The OS `uname -s` printed.
    pub fn from_uname(text: &str) -> HostOs {
        match text.trim() {
            "Linux" => HostOs::Linux,
            "FreeBSD" => HostOs::FreeBsd,
            "DragonFly" => HostOs::DragonFly,
            "NetBSD" => HostOs::NetBsd,
            _ => HostOs::Other,
        }
    }

    /// Whether its kernel is a BSD one (kqueue, `sysctl`, BSD `ps`).
    pub fn is_bsd(self) -> bool {
        matches!(self, HostOs::FreeBsd | HostOs::DragonFly | HostOs::NetBsd)
    }

    /// The command that starts a program on `cpus`, or why the OS has
    /// none: `taskset -c` on Linux, `cpuset -l` on FreeBSD, `usched
    /// :MASK` on DragonFly (usched(8): `usched -d dfly:15 true` runs on
    /// CPUs 0 to 3; it has no cpuset(1)).
    pub fn pin_command(self, cpus: &[usize]) -> Result<String, String> {
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        let list = list.join(",");
        match self {
            HostOs::Linux => Ok(format!("taskset -c {list}")),
            HostOs::FreeBsd => Ok(format!("cpuset -l {list}")),
            HostOs::DragonFly => match cpus.iter().all(|c| *c < 64) {
                true => Ok(format!("usched :{}", cpus.iter().fold(0u64, |m, c| m | 1 << c))),
                false => Err(format!("DragonFly's usched takes a 64-bit CPU mask; CPUs {list} do not fit it")),
            },
            HostOs::NetBsd => Err(
                "NetBSD has no command that starts a program on a CPU set (only schedctl(8) on a running PID, per thread); leave server_cpus out for this host"
                    .into(),
            ),
            HostOs::Other => Err(
                "this OS has no known command to pin a server to CPUs; leave server_cpus out for this host"
                    .into(),
            ),
        }
    }
}

/// Where a bare server will run, as its kind needs to know to write its
/// configuration.
#[derive(Clone, Debug)]
pub struct BareHost {
    /// The server's private directory on the host (made empty, mode 700).
    pub dir: PathBuf,
    /// The port it listens on.
    pub port: u16,
    /// The host's OS.
    pub os: HostOs,
}

/// A file the server needs in its private directory.
#[derive(Clone, Debug, PartialEq)]
pub enum BareFile {
    /// A text file, written as is (the configuration).
    Text {
        /// Its path, relative to the private directory.
        path: String,
        /// Its content.
        text: String,
    },
    /// A file of `bytes` bytes of `x` (static files to serve).
    Filler {
        /// Its path, relative to the private directory.
        path: String,
        /// Its size in bytes.
        bytes: u64,
    },
}

/// How the coordinator tells the bare server is ready.
#[derive(Clone, Debug, PartialEq)]
pub enum BareReady {
    /// It answers `GET /` with `HTTP/1.1 200` at this address.
    Http(IpAddr, u16),
    /// A PostgreSQL setup session (startup handshake, then a query) to
    /// this libpq connection string succeeds; the dataset is loaded over
    /// it.
    Postgres(String),
    /// A MySQL setup session (handshake, then a query) to this
    /// `mysql://` URL succeeds; the dataset is loaded over it.
    Mysql(String),
}

/// A command the shell runs to completion in the private directory
/// before it starts the server (`initdb`), as the server's user. Its
/// binary is looked up first beside the server's, then as the server's.
#[derive(Clone, Debug, PartialEq)]
pub struct BareStep {
    /// The binary's name (`initdb`).
    pub program: &'static str,
    /// Its arguments, with absolute paths inside the private directory.
    pub args: Vec<String>,
}

/// Whether a kind's server can hold the dataset a workload declares
/// (`Ok` for none): [`super::refuse_dataset`] for a kind that holds no
/// data.
pub type DatasetCheck = fn(Option<&crate::model::Dataset>) -> Result<(), super::ServerError>;

/// Everything the remote shell needs to run a kind's server.
#[derive(Clone, Debug)]
pub struct BareServer {
    /// The kind's name, for messages.
    pub kind: &'static str,
    /// The binary's name, looked up on `PATH`, then in `/usr/local/sbin`
    /// and `/usr/local/bin`.
    pub program: &'static str,
    /// The recipe's own path to the binary, used instead of the search.
    pub program_path: Option<PathBuf>,
    /// Directories to make inside the private directory.
    pub dirs: Vec<String>,
    /// Files to write inside it.
    pub files: Vec<BareFile>,
    /// The arguments, with absolute paths inside the private directory.
    pub args: Vec<String>,
    /// The commands run before the server, in order (`initdb`).
    pub steps: Vec<BareStep>,
    /// The account the steps and the server run as when the shell runs
    /// as root (PostgreSQL refuses root): `su -m USER`. `None`: the
    /// shell's own.
    pub user: Option<&'static str>,
    /// Whether it can hold the workload's dataset; the coordinator loads
    /// it over the ready session ([`BareReady::Postgres`]).
    pub dataset: DatasetCheck,
    /// The signal name (`QUIT`, `TERM`, `INT`) that stops it gracefully;
    /// `KILL` follows after a grace period.
    pub stop_signal: &'static str,
    /// The argument that makes the binary print its version (`-v`).
    pub version_arg: &'static str,
    /// Log files (relative to the private directory) brought back when it
    /// fails.
    pub logs: Vec<String>,
    /// When it is ready.
    pub ready: BareReady,
    /// Where the load reaches it.
    pub endpoint: String,
    /// The configuration it runs with, as text (recorded with the trial).
    pub config: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_os_pins_with_its_own_command_or_says_why_not() {
        assert_eq!(
            HostOs::Linux.pin_command(&[0, 1]).unwrap(),
            "taskset -c 0,1"
        );
        assert_eq!(HostOs::FreeBsd.pin_command(&[1]).unwrap(), "cpuset -l 1");
        assert_eq!(
            HostOs::DragonFly.pin_command(&[0, 1, 2, 3]).unwrap(),
            "usched :15"
        );
        assert!(HostOs::DragonFly.pin_command(&[64]).is_err());
        assert!(HostOs::NetBsd
            .pin_command(&[0])
            .unwrap_err()
            .contains("NetBSD"));
        assert_eq!(HostOs::from_uname("DragonFly\n"), HostOs::DragonFly);
    }
}
