//! One worker thread: its own `mio::Poll` owning its connections, a timer
//! heap for reconnect backoffs and open-loop schedules, and its own
//! [`LoadResult`]. Stages as in the pg driver: *warm* (connect,
//! authenticate, prepare: outside the measured window, as sysbench's
//! `thread_init`), *measure*, *drain* (transactions in flight finish,
//! bounded by the timeout).

use super::conn::{Conn, IGNORED_ERRORS};
use super::script::{Options, ScriptKind};
use super::url::MysqlUrl;
use crate::load::gate::Gate;
use crate::load::pg::timerfd::TimerFd;
use crate::load::pg::worker::{interval, pin_thread};
use crate::load::{result::new_histogram, LoadResult, LoadSpec, Pacing};
use crate::shutdown::Shutdown;
use crate::units::Micros;
use hdrhistogram::Histogram;
use mio::{Events, Poll, Registry};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const MAX_SLEEP: Duration = Duration::from_millis(50);
const TIMEOUT_SCAN: Duration = Duration::from_millis(100);
const TIMER_TOKEN: mio::Token = mio::Token(usize::MAX - 1);

/// What every worker of one run reads.
pub(super) struct Shared {
    pub url: MysqlUrl,
    pub script: ScriptKind,
    pub opts: Options,
    pub spec: LoadSpec,
    pub shutdown: Shutdown,
    pub claimed: AtomicU64,
    pub gate: Gate,
    pub seed: u64,
    /// Statements each connection prepares: (slot, SQL).
    pub prepares: Vec<(usize, String)>,
    /// Slot of the prepared BEGIN; COMMIT is the next one.
    pub begin_slot: usize,
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
    pub lag: Histogram<u64>,
    pub stage: Stage,
    pub start: Instant,
    pub interval: Option<Duration>,
    /// Ignored (retried) errors, by position in [`IGNORED_ERRORS`].
    pub ignored: [u64; 3],
}

impl Ctx<'_> {
    pub fn claim(&self) -> bool {
        match self.shared.spec.max_requests {
            None => true,
            Some(max) => self.shared.claimed.fetch_add(1, Ordering::Relaxed) < max,
        }
    }

    pub fn record(&mut self, latency: Micros, now: Instant) {
        let mut since = now.saturating_duration_since(self.start);
        let duration = self.shared.spec.duration;
        if !duration.is_zero() {
            since = since.min(duration - Duration::from_nanos(1));
        }
        self.result.record(latency, since);
    }

    pub fn note_ignored(&mut self, code: u16) {
        if let Some(i) = IGNORED_ERRORS.iter().position(|&c| c == code) {
            self.ignored[i] += 1;
        }
    }
}

pub(super) struct WorkerOutput {
    pub result: LoadResult,
    pub lag: Histogram<u64>,
    pub ignored: [u64; 3],
}

pub(super) fn run(
    shared: &Shared,
    index: u32,
    first_client: u32,
    count: u32,
) -> std::io::Result<WorkerOutput> {
    pin_thread(shared.spec.client_cpus.as_deref());
    let warmed = Worker::new(shared, index, first_client, count).and_then(|(mut poll, mut w)| {
        w.warm(&mut poll)?;
        Ok((poll, w))
    });
    shared.gate.arrive_and_wait();
    let (mut poll, mut w) = warmed?;
    w.measure(&mut poll)?;
    let mut result = w.ctx.result;
    result.elapsed = w.ctx.start.elapsed();
    result.target_rate = match shared.spec.pacing {
        Pacing::Open { rate } => Some(rate),
        Pacing::Closed => None,
    };
    Ok(WorkerOutput {
        result,
        lag: w.ctx.lag,
        ignored: w.ctx.ignored,
    })
}

struct Worker<'a> {
    events: Events,
    timer: TimerFd,
    conns: Vec<Conn>,
    ctx: Ctx<'a>,
}

impl<'a> Worker<'a> {
    fn new(
        shared: &'a Shared,
        index: u32,
        first_client: u32,
        count: u32,
    ) -> std::io::Result<(Poll, Worker<'a>)> {
        let poll = Poll::new()?;
        let interval = interval(&shared.spec);
        let mut w = Worker {
            events: Events::with_capacity(count.clamp(16, 1024) as usize),
            timer: TimerFd::new(poll.registry(), TIMER_TOKEN)?,
            conns: Vec::with_capacity(count as usize),
            ctx: Ctx {
                shared,
                registry: poll.registry().try_clone()?,
                timers: BinaryHeap::new(),
                result: LoadResult::new(),
                lag: new_histogram(),
                stage: Stage::Warm,
                start: Instant::now(),
                interval,
                ignored: [0; 3],
            },
        };
        let now = Instant::now();
        for i in 0..count {
            let client = first_client + i;
            let seed = shared.seed ^ (u64::from(index) << 32) ^ u64::from(client);
            let rng = SmallRng::seed_from_u64(seed);
            let mut conn = Conn::new(i as usize, client, rng, shared.begin_slot + 2, now);
            conn.connect(&mut w.ctx, now);
            w.conns.push(conn);
        }
        Ok((poll, w))
    }

    fn warm(&mut self, poll: &mut Poll) -> std::io::Result<()> {
        let limit = Instant::now() + self.ctx.shared.spec.timeout;
        while self.conns.iter().any(Conn::is_settling)
            && Instant::now() < limit
            && !self.ctx.shared.shutdown.is_triggered()
        {
            self.turn(poll, limit)?;
        }
        Ok(())
    }

    fn measure(&mut self, poll: &mut Poll) -> std::io::Result<()> {
        let spec = &self.ctx.shared.spec;
        let now = Instant::now();
        self.ctx.start = now;
        self.ctx.stage = Stage::Measure;
        let deadline = if spec.duration.is_zero() {
            now + Duration::from_secs(365 * 24 * 3600)
        } else {
            now + spec.duration
        };
        let drain_limit = deadline + spec.timeout;
        for c in &mut self.conns {
            c.kick(&mut self.ctx, now);
        }
        let mut next_scan = now + TIMEOUT_SCAN;
        loop {
            let now = Instant::now();
            if self.ctx.shared.shutdown.is_triggered() || now >= drain_limit {
                break;
            }
            if self.ctx.stage == Stage::Measure && (now >= deadline || self.budget_spent()) {
                self.ctx.stage = Stage::Drain;
                self.conns.iter_mut().for_each(Conn::wind_down);
            }
            if self.ctx.stage == Stage::Drain && self.conns.iter().all(Conn::is_finished) {
                break;
            }
            if now >= next_scan {
                next_scan = now + TIMEOUT_SCAN;
                for c in &mut self.conns {
                    c.check_timeout(&mut self.ctx, now);
                }
            }
            let wake = if self.ctx.stage == Stage::Measure {
                deadline
            } else {
                drain_limit
            };
            self.turn(poll, wake.min(next_scan))?;
        }
        for c in &mut self.conns {
            if c.is_busy() && !self.ctx.shared.shutdown.is_triggered() {
                self.ctx.result.errors.add(crate::load::ErrorKind::Timeout);
            }
            c.finish();
        }
        Ok(())
    }

    fn budget_spent(&self) -> bool {
        let spec = &self.ctx.shared.spec;
        spec.max_requests
            .is_some_and(|max| self.ctx.shared.claimed.load(Ordering::Relaxed) >= max)
    }

    fn turn(&mut self, poll: &mut Poll, wake: Instant) -> std::io::Result<()> {
        let now = Instant::now();
        let next_timer = self.ctx.timers.peek().map(|Reverse((t, _))| *t);
        let until = next_timer.map_or(wake, |t| t.min(wake));
        let sleep = until.saturating_duration_since(now).min(MAX_SLEEP);
        if let Some(t) = next_timer.filter(|&t| t > now && t - now < MAX_SLEEP) {
            self.timer.arm(t, now)?;
        }
        if let Err(e) = poll.poll(&mut self.events, Some(sleep)) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        for ev in self.events.iter() {
            if ev.token() == TIMER_TOKEN {
                self.timer.fired();
            } else if let Some(c) = self.conns.get_mut(ev.token().0) {
                let readable = ev.is_readable() || ev.is_error() || ev.is_read_closed();
                c.on_event(&mut self.ctx, readable, ev.is_writable());
            }
        }
        let now = Instant::now();
        while let Some(&Reverse((at, token))) = self.ctx.timers.peek() {
            if at > now {
                break;
            }
            self.ctx.timers.pop();
            if let Some(c) = self.conns.get_mut(token) {
                c.on_timer(&mut self.ctx, at, now);
            }
        }
        Ok(())
    }
}
