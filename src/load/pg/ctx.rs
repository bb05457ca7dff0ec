//! What a pg [`Conn`] reads and updates in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]), the
//! per-worker messages it sends whole ([`Local`]), and the loop's
//! [`Session`] contract, which [`Conn`] fulfils.

use super::conn::Conn;
use super::conninfo::ConnConfig;
use super::script::{QueryMode, ScriptKind, STATEMENT_NAMES};
use crate::load::event_loop::{self, Session};
use bytes::BytesMut;
use rand::rngs::SmallRng;
use std::time::Instant;

pub(crate) use crate::load::event_loop::Stage;

/// A pg worker's context in the shared event loop.
pub(super) type Ctx<'a> = event_loop::Ctx<'a, Conn>;
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

impl Session for Conn {
    type Driver = Run;
    type Local = Local;
    const BLOCKING_IO: bool = true;

    fn local(shared: &Shared) -> Local {
        Local {
            prepare: prepare_message(shared.script, shared.mode),
            rollback: rollback_message(),
        }
    }

    fn new(token: usize, client: u32, rng: SmallRng, _: &Ctx<'_>, now: Instant) -> Self {
        Conn::new(token, client, rng, now)
    }

    fn connect(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        Conn::connect(self, ctx, now)
    }

    fn is_settling(&self) -> bool {
        Conn::is_settling(self)
    }

    fn is_busy(&self) -> bool {
        Conn::is_busy(self)
    }

    fn is_finished(&self) -> bool {
        Conn::is_finished(self)
    }

    fn kick(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        Conn::kick(self, ctx, now)
    }

    fn wind_down(&mut self) {
        Conn::wind_down(self)
    }

    fn finish(&mut self) {
        Conn::finish(self)
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, at: Instant, now: Instant) {
        Conn::on_timer(self, ctx, at, now)
    }

    fn check_timeout(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        Conn::check_timeout(self, ctx, now)
    }

    fn on_event(&mut self, ctx: &mut Ctx<'_>, readable: bool, writable: bool) {
        Conn::on_event(self, ctx, readable, writable)
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
    super::codec::prepare_all(
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
    let _ = super::codec::simple_query("ROLLBACK", &mut out);
    out
}
