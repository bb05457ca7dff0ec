//! What a pg connection (`conn`) reads in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]) and the
//! per-worker messages it sends whole ([`Local`]). The connection is
//! the loop's [`event_loop::Session`]; this module does not know it.

use super::script::{QueryMode, Script, STATEMENT_NAMES};
use crate::load::event_loop;
use crate::load::histogram::new_histogram;
use crate::wire::pg::conninfo::ConnConfig;
use bytes::BytesMut;

/// What every pg worker of one run reads.
pub(super) type Shared = event_loop::Shared<Run>;

/// The pg driver's run-wide settings.
pub(super) struct Run {
    pub cfg: ConnConfig,
    pub script: Script,
    pub mode: QueryMode,
    pub scale: i64,
    pub max_tries: u32,
    /// Time each statement (pgbench `-r`).
    pub per_statement: bool,
}

/// Messages built once per worker and sent whole.
pub(super) struct Local {
    /// Parse messages for the script's statements, then Sync.
    pub prepare: BytesMut,
    pub rollback: BytesMut,
    /// With `-r`: each statement's latency, by position in the script.
    pub statements: Option<Vec<hdrhistogram::Histogram<u64>>>,
}

impl Local {
    pub fn new(shared: &Shared) -> Self {
        Local {
            prepare: prepare_message(&shared.script, shared.mode),
            rollback: rollback_message(),
            statements: shared.per_statement.then(|| {
                let n = shared.script.statements().len();
                (0..n).map(|_| new_histogram()).collect()
            }),
        }
    }

    /// With `-r`: records that statement `step` took `took`.
    pub fn statement_took(&mut self, step: usize, took: std::time::Duration) {
        if let Some(h) = self.statements.as_mut().and_then(|v| v.get_mut(step)) {
            let _ = h.record(crate::units::Micros::from_duration(took).0.max(1));
        }
    }
}

/// The statements to parse once per connection: the script's, named, in
/// prepared mode; none otherwise.
fn prepare_message(script: &Script, mode: QueryMode) -> BytesMut {
    let mut out = BytesMut::new();
    if mode != QueryMode::Prepared {
        return out;
    }
    let stmts = script.statements();
    crate::wire::pg::codec::prepare_all(
        STATEMENT_NAMES
            .iter()
            .copied()
            .zip(stmts.iter().map(|s| &*s.sql)),
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
