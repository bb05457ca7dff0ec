//! What a mysql [`Conn`] reads and updates in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]) and the
//! per-worker count of retried errors ([`Ignored`]). [`Conn`] is the
//! loop's [`event_loop::Session`].

use super::conn::{Conn, IGNORED_ERRORS};
use super::script::{Options, ScriptKind};
use super::url::MysqlUrl;
use crate::load::event_loop;

pub(super) use crate::load::event_loop::Stage;

/// A mysql worker's context in the shared event loop.
pub(super) type Ctx<'a> = event_loop::Ctx<'a, Conn>;
/// What every mysql worker of one run reads.
pub(super) type Shared = event_loop::Shared<Run>;

/// The mysql driver's run-wide settings.
pub(super) struct Run {
    pub url: MysqlUrl,
    pub script: ScriptKind,
    pub opts: Options,
    /// Statements each connection prepares: (slot, SQL).
    pub prepares: Vec<(usize, String)>,
    /// Slot of the prepared BEGIN; COMMIT is the next one.
    pub begin_slot: usize,
}

/// Ignored (rolled back and retried) errors, by position in
/// [`IGNORED_ERRORS`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ignored(pub [u64; IGNORED_ERRORS.len()]);

impl Ignored {
    pub fn note(&mut self, code: u16) {
        if let Some(i) = IGNORED_ERRORS.iter().position(|&c| c == code) {
            self.0[i] += 1;
        }
    }
}
