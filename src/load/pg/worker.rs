//! One worker thread: its own `mio::Poll` owning its connections, a timer
//! heap for reconnect backoffs and open-loop schedules, and its own
//! [`LoadResult`]. Nothing is shared with other workers on the hot path.
//!
//! Stages: *warm* (connect, authenticate and prepare, outside the measured
//! window, as pgbench excludes its initial connection time), *measure* (run
//! transactions until the deadline), *drain* (let transactions in flight
//! finish, bounded by the timeout, as pgbench finishes them).

use super::conn::Conn;
use super::ctx::{Ctx, Shared, Stage};
use super::script::{QueryMode, ScriptKind, STATEMENT_NAMES};
use super::timerfd::TimerFd;
use crate::load::{result::new_histogram, LoadResult, LoadSpec, Pacing};
use bytes::BytesMut;
use hdrhistogram::Histogram;
use mio::{Events, Poll};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The longest the loop sleeps, so shutdown is noticed promptly.
const MAX_SLEEP: Duration = Duration::from_millis(50);
/// How often connections are checked against the timeout.
const TIMEOUT_SCAN: Duration = Duration::from_millis(100);

/// What a worker hands back.
pub(super) struct WorkerOutput {
    pub result: LoadResult,
    pub lag: Histogram<u64>,
}

/// Runs worker `index`, owning clients `first_client..first_client+count`.
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
    // Arrive even after an error, so the others are not held up.
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
    })
}

/// The poll token of the timerfd (connections use 0..count).
const TIMER_TOKEN: mio::Token = mio::Token(usize::MAX - 1);

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
                interval: interval(&shared.spec),
                prepare: prepare_message(shared.script, shared.mode),
                rollback: rollback_message(),
                blocking_io: count == 1
                    && shared.spec.pacing == Pacing::Closed
                    && shared.spec.requests_per_connection.is_none(),
                ports_noted: false,
            },
        };
        let now = Instant::now();
        for i in 0..count {
            let client = first_client + i;
            let seed = shared.seed ^ (u64::from(index) << 32) ^ u64::from(client);
            let mut conn = Conn::new(i as usize, client, SmallRng::seed_from_u64(seed), now);
            conn.connect(&mut w.ctx, now);
            w.conns.push(conn);
        }
        Ok((poll, w))
    }

    /// Connects and prepares every connection, bounded by the timeout.
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
        // With a transaction cap and no duration, the cap alone ends the run.
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
            // Connections only finish for good while draining (or when the
            // budget, which starts the drain, is spent).
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
        self.finish_all();
        Ok(())
    }

    /// All of this run's `max_requests` have been handed out.
    fn budget_spent(&self) -> bool {
        let spec = &self.ctx.shared.spec;
        spec.max_requests
            .is_some_and(|max| self.ctx.shared.claimed.load(Ordering::Relaxed) >= max)
    }

    /// Transactions still in flight at the end count as timeouts.
    fn finish_all(&mut self) {
        for c in &mut self.conns {
            if c.is_busy() && !self.ctx.shared.shutdown.is_triggered() {
                self.ctx.result.errors.add(crate::load::ErrorKind::Timeout);
            }
            c.finish();
        }
    }

    /// One poll: waits for socket events or the next timer (at most until
    /// `wake`), then dispatches them.
    fn turn(&mut self, poll: &mut Poll, wake: Instant) -> std::io::Result<()> {
        if self.ctx.blocking_io {
            if let [conn] = self.conns.as_mut_slice() {
                if conn.is_busy() {
                    conn.wait_blocking(&mut self.ctx);
                    self.fire_timers(Instant::now());
                    return Ok(());
                }
            }
        }
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
        self.fire_timers(Instant::now());
        Ok(())
    }

    /// Runs the timers that are due: reconnects and scheduled starts.
    fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((at, token))) = self.ctx.timers.peek() {
            if at > now {
                break;
            }
            self.ctx.timers.pop();
            if let Some(c) = self.conns.get_mut(token) {
                c.on_timer(&mut self.ctx, at, now);
            }
        }
    }
}

/// Open loop: time between one connection's scheduled transactions.
pub(crate) fn interval(spec: &LoadSpec) -> Option<Duration> {
    match spec.pacing {
        Pacing::Open { rate } => Some(Duration::from_secs_f64(
            f64::from(spec.connections.max(1)) / rate,
        )),
        Pacing::Closed => None,
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

/// Pins the calling thread to `cpus` (no-op for `None`).
pub(crate) fn pin_thread(cpus: Option<&[usize]>) {
    let Some(cpus) = cpus.filter(|c| !c.is_empty()) else {
        return;
    };
    // SAFETY: sched_setaffinity on the calling thread with a set we built.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}
