//! What one worker's connections see and update: the run's [`Shared`]
//! settings, the worker's [`Ctx`] (its registry, timers and result) and the
//! [`Stage`] it is in. Kept apart from `worker` (which owns the event loop)
//! and `conn` (one connection's state machine), so both depend on this and
//! not on each other.

use super::conninfo::ConnConfig;
use super::script::ScriptKind;
use crate::load::{LoadResult, LoadSpec};
use crate::shutdown::Shutdown;
use crate::units::Micros;
use bytes::BytesMut;
use hdrhistogram::Histogram;
use mio::Registry;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub(crate) use crate::load::gate::Gate;

/// What every worker of one run reads.
pub(super) struct Shared {
    pub cfg: ConnConfig,
    pub script: ScriptKind,
    pub mode: super::script::QueryMode,
    /// Completed transactions, counted live for a progress display.
    pub progress: Option<std::sync::Arc<AtomicU64>>,
    pub scale: i64,
    pub max_tries: u32,
    pub spec: LoadSpec,
    pub shutdown: Shutdown,
    /// Transactions started so far, when `spec.max_requests` caps them.
    pub claimed: AtomicU64,
    /// Workers meet here after the warm stage, so all start measuring
    /// together.
    pub gate: Gate,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stage {
    Warm,
    Measure,
    Drain,
}

/// A worker's state that its connections update.
pub(super) struct Ctx<'a> {
    pub shared: &'a Shared,
    pub registry: Registry,
    pub timers: BinaryHeap<Reverse<(Instant, usize)>>,
    pub result: LoadResult,
    /// Open loop: how late transactions started against their schedule.
    pub lag: Histogram<u64>,
    pub stage: Stage,
    pub start: Instant,
    /// Open loop: time between one connection's scheduled transactions.
    pub interval: Option<Duration>,
    /// Parse messages for the script's statements, then Sync.
    pub prepare: BytesMut,
    pub rollback: BytesMut,
    /// One closed-loop, keep-alive connection on this thread: it blocks in
    /// read instead of polling, one syscall less per round trip.
    pub blocking_io: bool,
    /// Whether the ephemeral-port note was already added.
    pub ports_noted: bool,
}

impl Ctx<'_> {
    /// Takes one transaction from the `max_requests` budget.
    pub fn claim(&self) -> bool {
        match self.shared.spec.max_requests {
            None => true,
            Some(max) => self.shared.claimed.fetch_add(1, Ordering::Relaxed) < max,
        }
    }

    /// Records a completed transaction. Transactions that finish while
    /// draining count in the last second of the timeline.
    pub fn record(&mut self, latency: Micros, now: Instant) {
        let mut since = now.saturating_duration_since(self.start);
        let duration = self.shared.spec.duration;
        if !duration.is_zero() {
            since = since.min(duration - Duration::from_nanos(1));
        }
        self.result.record(latency, since);
        if let Some(p) = &self.shared.progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn note_connect_error(&mut self, e: &std::io::Error) {
        if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) && !self.ports_noted {
            self.ports_noted = true;
            self.result.notes.push(
                "ephemeral ports exhausted (EADDRNOTAVAIL) while reconnecting: connect errors \
                 include these; wait between short-connection trials or widen \
                 net.ipv4.ip_local_port_range"
                    .into(),
            );
        }
    }
}
