//! A server kind's compiled settings: the [`ServerPlan`] its registry
//! entry's `compile` makes from a settings table, once, when the
//! experiment is validated; every server is built from one.

use super::bare::{BareHost, BareServer};
use super::{Server, ServerError};
use std::path::Path;
use std::time::Duration;

/// Runs the user's shell commands where the server is: here or over ssh.
pub trait CommandRunner: Send + Sync {
    /// Runs `command` in a POSIX shell and returns its stdout, or why not.
    fn run(&self, command: &str, limit: Duration) -> Result<String, String>;

    /// The argv (absolute program path first) that runs `command` the same
    /// way without this process: the reaper runs an external server's
    /// `stop` with it when scalelab is killed (`owned::Removal::Command`).
    fn argv(&self, command: &str) -> Vec<std::ffi::OsString>;

    /// The processes listening on `port` where the commands run, with
    /// their parents: [`super::listener::LISTENER_SCRIPT`] (`ss`, else
    /// `sockstat`) run through [`Self::run`], unless the runner knows a
    /// better source (here: `/proc`).
    fn listening(&self, port: u16) -> Result<super::listener::Listening, String> {
        let text = self.run(super::listener::LISTENER_SCRIPT, Duration::from_secs(15))?;
        super::listener::parse_report(&text, port)
    }
}

/// A server kind's compiled settings: its typed settings struct, checked,
/// and how a server is built from them. The experiment is compiled into
/// these once, before a run starts; the runner builds every server from
/// its plan, never from a settings table.
pub trait ServerPlan: Send + Sync {
    /// Builds the (not yet started) server; private run directories go
    /// under `base_dir`.
    fn build(&self, base_dir: &Path) -> Result<Box<dyn Server>, ServerError>;
    /// Builds it with its commands run through `shell` (over ssh on a
    /// server host without an agent). Only a kind that does not
    /// [run under an agent](super::ServerKind::runs_under_agent) runs that way.
    fn build_with_shell(
        &self,
        shell: Box<dyn CommandRunner>,
        base_dir: &Path,
    ) -> Result<Box<dyn Server>, ServerError> {
        drop((shell, base_dir));
        Err(ServerError::Settings {
            kind: "server",
            message: "this server kind runs under an agent, not over plain ssh".into(),
        })
    }
    /// Whether the kind can run on a host without an agent ([`Self::bare`]).
    fn runs_bare(&self) -> bool {
        false
    }
    /// What a shell on a host without an agent needs to run this server
    /// there, its configuration written for `host`'s private directory,
    /// port and OS. The default refuses: the kind has no such recipe.
    fn bare(&self, host: &BareHost) -> Result<BareServer, ServerError> {
        let _ = host;
        Err(ServerError::Settings {
            kind: "server",
            message: "this server kind runs only under an agent; give its host `agent = true` (a Linux host)".into(),
        })
    }
}

/// Builds a kind's server from its settings `S` and a base directory.
pub type BuildFrom<S> = fn(&S, &Path) -> Result<Box<dyn Server>, ServerError>;

/// The plan of a kind whose settings are the struct `S` and whose server
/// `build` makes from them (most kinds: `plan::of(Settings::parse(t)?, ...)`).
pub fn of<S: Send + Sync + 'static>(settings: S, build: BuildFrom<S>) -> Box<dyn ServerPlan> {
    Box::new(Compiled { settings, build })
}

struct Compiled<S> {
    settings: S,
    build: BuildFrom<S>,
}

impl<S: Send + Sync> ServerPlan for Compiled<S> {
    fn build(&self, base_dir: &Path) -> Result<Box<dyn Server>, ServerError> {
        (self.build)(&self.settings, base_dir)
    }
}
