//! What a mysql connection (`conn`) reads in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]) and the
//! per-worker count of retried errors ([`Ignored`]). The connection is
//! the loop's [`event_loop::Session`]; this module does not know it.

use super::script::{Options, ScriptKind};
use crate::load::event_loop;
use crate::wire::mysql::url::MysqlUrl;

/// What every mysql worker of one run reads.
pub(super) type Shared = event_loop::Shared<Run>;

/// MySQL errors sysbench ignores and retries by default
/// (`--mysql-ignore-errors=1213,1020,1205`).
pub const IGNORED_ERRORS: [u16; 3] = [1213, 1020, 1205];

/// The mysql driver's run-wide settings.
pub(super) struct Run {
    pub url: MysqlUrl,
    pub script: ScriptKind,
    pub opts: Options,
    /// Statements each connection prepares: (slot, SQL).
    pub prepares: Vec<(usize, String)>,
    /// Slot of the prepared BEGIN; COMMIT is the next one.
    pub begin_slot: usize,
    /// TLS, as `ssl_mode` asks.
    pub tls: Option<super::tls::MysqlTls>,
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
