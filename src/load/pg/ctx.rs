//! What a pg connection (`conn`) reads in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]) and the
//! per-worker messages it sends whole ([`Local`]). The connection is
//! the loop's [`event_loop::Session`]; this module does not know it.

use super::script::{QueryMode, ScriptKind, STATEMENT_NAMES};
use crate::load::event_loop;
use crate::wire::pg::conninfo::ConnConfig;
use bytes::BytesMut;

/// What every pg worker of one run reads.
pub(super) type Shared = event_loop::Shared<Run>;

/// The pg driver's run-wide settings.
pub(super) struct Run {
    pub cfg: ConnConfig,
    pub script: ScriptKind,
    pub mode: QueryMode,
    pub scale: i64,
    pub max_tries: u32,
}

/// Messages built once per worker and sent whole.
pub(super) struct Local {
    /// Parse messages for the script's statements, then Sync.
    pub prepare: BytesMut,
    pub rollback: BytesMut,
}

impl Local {
    pub fn new(shared: &Shared) -> Self {
        Local {
            prepare: prepare_message(shared.script, shared.mode),
            rollback: rollback_message(),
        }
    }
}

/// The statements to parse once per connection: the script's, named, in
/// prepared mode; none otherwise.
fn prepare_message(script: ScriptKind, mode: QueryMode) -> BytesMut {
    let mut out = BytesMut::new();
    if mode != QueryMode::Prepared {
        return out;
    }
    let stmts = script.statements();
    crate::wire::pg::codec::prepare_all(
        STATEMENT_NAMES
            .iter()
            .copied()
            .zip(stmts.iter().map(|s| s.sql)),
        &mut out,
    );
    out
}

fn rollback_message() -> BytesMut {
    let mut out = BytesMut::new();
    // A fixed ASCII query cannot fail to encode.
    let _ = crate::wire::pg::codec::simple_query("ROLLBACK", &mut out);
    out
}
