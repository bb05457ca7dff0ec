//! The event loop the database drivers (`pg`, `mysql`) share, generic over
//! a [`Session`]: one connection's protocol state machine, which each
//! driver keeps with its codec.
//!
//! One worker thread owns its own `mio::Poll`, its connections, a timer
//! heap for reconnect backoffs and open-loop schedules, and its own
//! [`LoadResult`]: nothing is shared with other workers on the hot path.
//! Stages: *warm* (connect, authenticate and prepare, outside the measured
//! window, as pgbench and sysbench's `thread_init` exclude them), *measure*
//! (run transactions until the deadline or the budget), *drain* (let the
//! transactions in flight finish, bounded by the timeout).
//!
//! A thread with one closed-loop connection blocks in read instead of
//! polling (as pgbench and sysbench do): one syscall less per round trip.
//! With `LoadSpec::coalesce` (opt-in), a thread with many in flight sleeps
//! until half of them are answered, woken once for all of those replies
//! ([`super::gather`]).

use super::gate::Gate;
use super::gather::{self, Gather, Gathered, ReplyGap, WaitError};
use super::timerfd::TimerFd;
use super::{histogram::new_histogram, LoadError, LoadResult, LoadSpec, Pacing};
use crate::shutdown::Shutdown;
use crate::units::Micros;
use hdrhistogram::Histogram;
use mio::{Events, Poll, Registry};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest the loop sleeps, so shutdown is noticed promptly.
const MAX_SLEEP: Duration = Duration::from_millis(50);
/// How often connections are checked against the timeout.
const TIMEOUT_SCAN: Duration = Duration::from_millis(100);
/// The poll token of the timerfd (connections use 0..count).
const TIMER_TOKEN: mio::Token = mio::Token(usize::MAX - 1);

/// One connection's state machine, driven by socket events and timers.
/// Each session owns its socket (registered under its token) and reports
/// into the worker's [`Ctx`].
pub(crate) trait Session: Sized {
    /// The driver's run-wide settings, read through [`Shared`].
    type Driver: Sync;
    /// Per-worker state of the driver's own, handed back at the end.
    type Local: Send;
    /// The session's socket and a serial that changes with each new
    /// socket (descriptor numbers are reused), if it has one.
    fn socket(&self) -> Option<(std::os::fd::RawFd, u32)>;
    /// Whether a lone closed-loop connection may block in read: the session
    /// then makes its socket blocking (with a short timeout) once ready,
    /// and [`Session::on_event`] with both flags set waits for the reply.
    const BLOCKING_IO: bool;

    fn local(shared: &Shared<Self::Driver>) -> Self::Local;
    fn new(token: usize, client: u32, rng: SmallRng, ctx: &Ctx<'_, Self>, now: Instant) -> Self;
    /// Opens a new socket (closing the previous one, if any).
    fn connect(&mut self, ctx: &mut Ctx<'_, Self>, now: Instant);
    /// Connecting, authenticating or preparing.
    fn is_settling(&self) -> bool;
    /// A transaction is in flight.
    fn is_busy(&self) -> bool;
    fn is_finished(&self) -> bool;
    /// The measured window begins: start the schedule and the first
    /// transaction.
    fn kick(&mut self, ctx: &mut Ctx<'_, Self>, now: Instant);
    /// The measured window ended: idle sessions close now, busy ones when
    /// their transaction ends.
    fn wind_down(&mut self);
    /// Closes the connection for good, politely.
    fn finish(&mut self);
    /// A timer this session pushed (reconnect, scheduled start) is due.
    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, at: Instant, now: Instant);
    /// Replaces a connection whose transaction or setup ran past the
    /// timeout.
    fn check_timeout(&mut self, ctx: &mut Ctx<'_, Self>, now: Instant);
    /// Socket readiness.
    fn on_event(&mut self, ctx: &mut Ctx<'_, Self>, readable: bool, writable: bool);
}

/// What every worker of one run reads: the common settings, and the
/// driver's own (reached through `Deref`, as `shared.cfg`).
pub(crate) struct Shared<D> {
    pub spec: LoadSpec,
    pub shutdown: Shutdown,
    /// Transactions started so far, when `spec.max_requests` caps them.
    pub claimed: AtomicU64,
    /// Workers meet here after the warm stage, so all start measuring
    /// together.
    pub gate: Gate,
    pub seed: u64,
    /// Completed and failed transactions, counted live for a progress
    /// display.
    pub progress: Option<Arc<crate::load::live::Live>>,
    /// Each transaction written to a log (pgbench `-l`): the first
    /// worker's to this path, worker N's (N > 0) to `PATH.N`.
    pub txn_log: Option<std::path::PathBuf>,
    /// Rate mode: a transaction already later than this against its
    /// schedule is skipped, not sent (pgbench `-L` with `-R`).
    pub skip_later_than: Option<Duration>,
    pub driver: D,
}

impl<D> Shared<D> {
    /// A run of `threads` workers with a fresh seed (as pgbench's default
    /// `--random-seed=time`).
    pub fn new(spec: &LoadSpec, shutdown: &Shutdown, threads: u32, driver: D) -> Self {
        Shared {
            spec: spec.clone(),
            shutdown: shutdown.clone(),
            claimed: AtomicU64::new(0),
            gate: Gate::new(threads + 1, spec.timeout + Duration::from_secs(5)),
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            progress: None,
            txn_log: None,
            skip_later_than: None,
            driver,
        }
    }
}

impl<D> std::ops::Deref for Shared<D> {
    type Target = D;
    fn deref(&self) -> &D {
        &self.driver
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    Warm,
    Measure,
    Drain,
}

/// A worker's state that its sessions update.
pub(crate) struct Ctx<'a, S: Session> {
    pub shared: &'a Shared<S::Driver>,
    pub registry: Registry,
    pub timers: BinaryHeap<Reverse<(Instant, usize)>>,
    pub result: LoadResult,
    /// Open loop: how late transactions started against their schedule.
    pub lag: Histogram<u64>,
    pub stage: Stage,
    pub start: Instant,
    /// Open loop: time between one connection's scheduled transactions.
    pub interval: Option<Duration>,
    /// One closed-loop, keep-alive connection on this thread, of a session
    /// that supports it: it blocks in read instead of polling.
    pub blocking_io: bool,
    /// Whether the ephemeral-port note was already added.
    pub ports_noted: bool,
    /// The transaction log this worker writes (pgbench `-l`).
    pub txn_log: Option<std::io::BufWriter<std::fs::File>>,
    /// The driver's per-worker state.
    pub local: S::Local,
}

impl<S: Session> Ctx<'_, S> {
    /// Takes one transaction from the `max_requests` budget.
    pub fn claim(&self) -> bool {
        match self.shared.spec.max_requests {
            None => true,
            Some(max) => self.shared.claimed.fetch_add(1, Ordering::Relaxed) < max,
        }
    }

    /// Records a completed transaction. Transactions that finish while
    /// draining count in the last bucket of the timeline.
    pub fn record(&mut self, latency: Micros, now: Instant) {
        let mut since = now.saturating_duration_since(self.start);
        let duration = self.shared.spec.duration;
        if !duration.is_zero() {
            since = since.min(duration - Duration::from_nanos(1));
        }
        self.result.record(latency, since);
        if let Some(p) = &self.shared.progress {
            p.done(latency.0);
        }
    }

    /// Logs transaction `txn` of client `client` (pgbench `-l`'s line:
    /// `client_id transaction_no time script_no time_epoch time_us
    /// [schedule_lag]`, time in microseconds or `failed`, the epoch
    /// fields when it ended, the lag in rate mode). A write error ends the
    /// log and is noted.
    pub fn log_txn(
        &mut self,
        client: u32,
        txn: u64,
        script: u32,
        latency: Option<Micros>,
        lag: Option<Micros>,
    ) {
        use std::io::Write as _;
        let Some(log) = self.txn_log.as_mut() else {
            return;
        };
        let ended = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let time = latency.map_or_else(|| "failed".to_string(), |l| l.0.to_string());
        let lag = lag.map(|l| format!(" {}", l.0)).unwrap_or_default();
        let written = writeln!(
            log,
            "{client} {txn} {time} {script} {} {}{lag}",
            ended.as_secs(),
            ended.subsec_micros()
        );
        if let Err(e) = written {
            self.txn_log = None;
            self.result
                .notes
                .push(format!("the transaction log stopped: {e}"));
        }
    }

    /// Open loop: the scheduled start of a transaction beginning `now`
    /// (recording how late it is) and the next one's; closed loop: `now`.
    pub fn measured_from(&mut self, next_start: &mut Instant, now: Instant) -> Instant {
        match self.interval {
            Some(interval) => {
                let scheduled = *next_start;
                *next_start += interval;
                let lag = Micros::from_duration(now.saturating_duration_since(scheduled));
                let _ = self.lag.record(lag.0.max(1));
                scheduled
            }
            None => now,
        }
    }

    /// Open loop: client `client`'s first scheduled start, staggered.
    pub fn first_start(&self, client: u32) -> Option<Instant> {
        match self.shared.spec.pacing {
            Pacing::Open { rate } => {
                Some(self.start + Duration::from_secs_f64(f64::from(client) / rate))
            }
            Pacing::Closed => None,
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

/// What a worker hands back.
pub(crate) struct WorkerOutput<L> {
    pub result: LoadResult,
    /// Coalescing: what its waits gathered.
    pub gathered: Option<Gathered>,
    pub lag: Histogram<u64>,
    pub local: L,
}

/// Spawns `threads` workers, measures the process's CPU over the measured
/// window, and merges their results (with the open loop's schedule lag as
/// a note); the drivers' per-worker states come back beside it.
pub(crate) fn run_workers<S: Session>(
    shared: &Shared<S::Driver>,
    threads: u32,
) -> Result<(LoadResult, Vec<S::Local>), LoadError> {
    let (outs, cpu) = std::thread::scope(|scope| {
        let mut first = 0;
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let count = shared.spec.connections_for_thread(i);
                let first_client = first;
                first += count;
                scope.spawn(move || run::<S>(shared, i, first_client, count))
            })
            .collect();
        shared.gate.arrive_and_wait();
        let cpu_start = super::process_cpu();
        let outs: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (outs, super::process_cpu() - cpu_start)
    });
    let mut result = LoadResult::new();
    let mut lag = new_histogram();
    let mut locals = Vec::with_capacity(outs.len());
    let mut gathered = None;
    for out in outs {
        let out = out
            .map_err(|_| LoadError::Setup("a load worker thread panicked".into()))?
            .map_err(LoadError::Io)?;
        result.merge(&out.result);
        gathered = Gathered::merge(gathered, out.gathered);
        let _ = lag.add(&out.lag);
        locals.push(out.local);
    }
    result.client_cpu = cpu;
    if let Some(g) = gathered {
        result.notes.push(g.note());
    }
    let _ = result.schedule_lag.add(&lag);
    Ok((result, locals))
}

/// Runs worker `index`, owning clients `first_client..first_client+count`.
fn run<S: Session>(
    shared: &Shared<S::Driver>,
    index: u32,
    first_client: u32,
    count: u32,
) -> std::io::Result<WorkerOutput<S::Local>> {
    pin_thread(shared.spec.client_cpus.as_deref());
    let warmed =
        Worker::<S>::new(shared, index, first_client, count).and_then(|(mut poll, mut w)| {
            w.warm(&mut poll)?;
            Ok((poll, w))
        });
    // Arrive even after an error, so the others are not held up.
    shared.gate.arrive_and_wait();
    let (mut poll, mut w) = warmed?;
    w.measure(&mut poll)?;
    if let Some(log) = w.ctx.txn_log.as_mut() {
        std::io::Write::flush(log)?;
    }
    let mut result = w.ctx.result;
    result.elapsed = w.ctx.start.elapsed();
    result.target_rate = match shared.spec.pacing {
        Pacing::Open { rate } => Some(rate),
        Pacing::Closed => None,
    };
    Ok(WorkerOutput {
        gathered: w.gather.as_ref().map(|g| g.gathered),
        result,
        lag: w.ctx.lag,
        local: w.ctx.local,
    })
}

/// Worker `index`'s transaction log under `path`, as pgbench names them:
/// `path` for the first, `path.N` for the others.
fn open_txn_log(
    path: Option<&std::path::Path>,
    index: u32,
) -> std::io::Result<Option<std::io::BufWriter<std::fs::File>>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let mut name = path.as_os_str().to_owned();
    if index > 0 {
        name.push(format!(".{index}"));
    }
    let file = std::fs::File::create(&name).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot write the transaction log {}: {e}",
                name.to_string_lossy()
            ),
        )
    })?;
    Ok(Some(std::io::BufWriter::new(file)))
}

struct Worker<'a, S: Session> {
    /// Coalescing: a closed loop over polled sockets may wait for several
    /// replies at once.
    gather: Option<Gather>,
    /// The smoothed time between socket events, which bounds that wait.
    gap: ReplyGap,
    events: Events,
    timer: TimerFd,
    sessions: Vec<S>,
    ctx: Ctx<'a, S>,
}

impl<'a, S: Session> Worker<'a, S> {
    fn new(
        shared: &'a Shared<S::Driver>,
        index: u32,
        first_client: u32,
        count: u32,
    ) -> std::io::Result<(Poll, Worker<'a, S>)> {
        let poll = Poll::new()?;
        let blocking_io = S::BLOCKING_IO
            && count == 1
            && shared.spec.pacing == Pacing::Closed
            && shared.spec.requests_per_connection.is_none();
        // One connection (blocking I/O) is below MIN_IN_FLIGHT too, so
        // for_run notes it and builds no ring.
        let coalesce = shared.spec.coalesce && shared.spec.pacing == Pacing::Closed;
        let mut result = LoadResult::new();
        let gather = if coalesce {
            Gather::for_run(count as usize, &mut result.notes)
        } else {
            None
        };
        let mut w = Worker {
            gather,
            gap: ReplyGap::default(),
            events: Events::with_capacity(count.clamp(16, 1024) as usize),
            timer: TimerFd::new(poll.registry(), TIMER_TOKEN)?,
            sessions: Vec::with_capacity(count as usize),
            ctx: Ctx {
                shared,
                registry: poll.registry().try_clone()?,
                timers: BinaryHeap::new(),
                result,
                lag: new_histogram(),
                stage: Stage::Warm,
                start: Instant::now(),
                interval: interval(&shared.spec),
                blocking_io,
                ports_noted: false,
                txn_log: open_txn_log(shared.txn_log.as_deref(), index)?,
                local: S::local(shared),
            },
        };
        let now = Instant::now();
        for i in 0..count {
            let client = first_client + i;
            let seed = shared.seed ^ (u64::from(index) << 32) ^ u64::from(client);
            let rng = SmallRng::seed_from_u64(seed);
            let mut session = S::new(i as usize, client, rng, &w.ctx, now);
            session.connect(&mut w.ctx, now);
            w.sessions.push(session);
        }
        Ok((poll, w))
    }

    /// Connects and prepares every session, bounded by the timeout.
    fn warm(&mut self, poll: &mut Poll) -> std::io::Result<()> {
        let limit = Instant::now() + self.ctx.shared.spec.timeout;
        while self.sessions.iter().any(S::is_settling)
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
        for s in &mut self.sessions {
            s.kick(&mut self.ctx, now);
        }
        let mut next_scan = now + TIMEOUT_SCAN;
        loop {
            let now = Instant::now();
            if self.ctx.shared.shutdown.is_triggered() || now >= drain_limit {
                break;
            }
            if self.ctx.stage == Stage::Measure && (now >= deadline || self.budget_spent()) {
                self.ctx.stage = Stage::Drain;
                self.sessions.iter_mut().for_each(S::wind_down);
            }
            // Sessions only finish for good while draining (or when the
            // budget, which starts the drain, is spent).
            if self.ctx.stage == Stage::Drain && self.sessions.iter().all(S::is_finished) {
                break;
            }
            if now >= next_scan {
                next_scan = now + TIMEOUT_SCAN;
                for s in &mut self.sessions {
                    s.check_timeout(&mut self.ctx, now);
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
        for s in &mut self.sessions {
            if s.is_busy() && !self.ctx.shared.shutdown.is_triggered() {
                self.ctx.result.errors.add(super::ErrorKind::Timeout);
            }
            s.finish();
        }
    }

    /// One poll: waits for socket events or the next timer (at most until
    /// `wake`), then dispatches them. A lone blocking session just waits
    /// for its reply in read.
    fn turn(&mut self, poll: &mut Poll, wake: Instant) -> std::io::Result<()> {
        if self.ctx.blocking_io {
            if let [session] = self.sessions.as_mut_slice() {
                if session.is_busy() {
                    session.on_event(&mut self.ctx, true, true);
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
        match self.coalesced_poll(poll, sleep) {
            Ok(()) => {}
            Err(WaitError::Poll(e)) => return Err(e),
            Err(WaitError::Ring(e)) => {
                // The ring failed: say so, and go on without it.
                gather::give_up(&mut self.gather, &mut self.ctx.result.notes, &e);
                poll_events(poll, &mut self.events, sleep)?;
            }
        }
        for ev in self.events.iter() {
            if ev.token() == TIMER_TOKEN {
                self.timer.fired();
            } else if let Some(s) = self.sessions.get_mut(ev.token().0) {
                let readable = ev.is_readable() || ev.is_error() || ev.is_read_closed();
                s.on_event(&mut self.ctx, readable, ev.is_writable());
            }
        }
        self.fire_timers(Instant::now());
        Ok(())
    }

    /// Waits for events as [`poll_events`] does; when coalescing, first
    /// for half of the replies in flight ([`Gather::turn`]).
    fn coalesced_poll(&mut self, poll: &mut Poll, sleep: Duration) -> Result<(), WaitError> {
        let events = &mut self.events;
        let Some(g) = self.gather.as_mut() else {
            return poll_events(poll, events, sleep).map_err(WaitError::Poll);
        };
        let mut in_flight = 0;
        for (token, s) in self.sessions.iter().enumerate() {
            match s.socket() {
                Some((fd, serial)) if s.is_busy() => {
                    in_flight += 1;
                    g.watch(token, fd, (u64::from(serial) << 32) | fd as u64)
                        .map_err(WaitError::Ring)?;
                }
                _ => g.forget(token).map_err(WaitError::Ring)?,
            }
        }
        g.turn(&self.gap, in_flight, sleep, |timeout| {
            poll_events(poll, events, timeout)?;
            Ok(!events.is_empty())
        })?;
        let replies = events.iter().filter(|e| e.token() != TIMER_TOKEN).count();
        self.gap.add(replies, Instant::now());
        Ok(())
    }

    /// Runs the timers that are due: reconnects and scheduled starts.
    fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((at, token))) = self.ctx.timers.peek() {
            if at > now {
                break;
            }
            self.ctx.timers.pop();
            if let Some(s) = self.sessions.get_mut(token) {
                s.on_timer(&mut self.ctx, at, now);
            }
        }
    }
}

/// Waits up to `timeout` for socket and timer events (an interrupted wait
/// returns none).
fn poll_events(poll: &mut Poll, events: &mut Events, timeout: Duration) -> std::io::Result<()> {
    match poll.poll(events, Some(timeout)) {
        Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Err(e),
        _ => Ok(()),
    }
}

/// Open loop: time between one connection's scheduled transactions.
fn interval(spec: &LoadSpec) -> Option<Duration> {
    match spec.pacing {
        Pacing::Open { rate } => Some(Duration::from_secs_f64(
            f64::from(spec.connections.max(1)) / rate,
        )),
        Pacing::Closed => None,
    }
}

/// Pins the calling thread to `cpus` (no-op for `None`).
fn pin_thread(cpus: Option<&[usize]>) {
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
