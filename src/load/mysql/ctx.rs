//! What a mysql [`Conn`] reads and updates in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]), the
//! per-worker count of retried errors ([`Ignored`]), and the loop's
//! [`Session`] contract, which [`Conn`] fulfils.

use super::conn::{Conn, IGNORED_ERRORS};
use super::script::{Options, ScriptKind};
use super::url::MysqlUrl;
use crate::load::event_loop::{self, Session};
use rand::rngs::SmallRng;
use std::time::Instant;

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

impl Session for Conn {
    type Driver = Run;
    type Local = Ignored;
    const BLOCKING_IO: bool = false;

    fn local(_: &Shared) -> Ignored {
        Ignored::default()
    }

    fn new(token: usize, client: u32, rng: SmallRng, ctx: &Ctx<'_>, now: Instant) -> Self {
        Conn::new(token, client, rng, ctx.shared.begin_slot + 2, now)
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
