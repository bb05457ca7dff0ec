//! The connection lifecycle: one client connection as a state machine
//! driven by socket events and timers, generic over its [`Protocol`]. It
//! connects, lets the protocol authenticate and prepare, runs one
//! transaction at a time, and replaces itself when the connection is lost.

use super::{Awaiting, Protocol, Verdict};
use crate::load::event_loop::{self, Session, Shared, Stage};
use crate::load::reqresp::Stream;
use crate::load::ErrorKind;
use crate::units::Micros;
use bytes::BytesMut;
use rand::rngs::SmallRng;
use std::io;
use std::time::{Duration, Instant};

/// A connection's context in the shared event loop.
pub(crate) type Ctx<'a, P> = event_loop::Ctx<'a, Conn<P>>;
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_millis(100);
/// In blocking-I/O mode, a read or write returns after this long so the
/// worker can check the deadline, timeouts and shutdown.
const BLOCKING_WAIT: Duration = Duration::from_millis(20);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No socket; a reconnect is due at `retry_at`.
    Down {
        retry_at: Instant,
    },
    Connecting,
    /// Authenticating.
    Handshake,
    Preparing,
    /// Connected with no transaction in flight.
    Idle,
    /// A transaction is in flight (a statement, or its ROLLBACK).
    Busy,
    /// Done for this run.
    Finished,
}

/// One client connection of a request/response protocol `P`.
pub(crate) struct Conn<P> {
    token: usize,
    /// This connection's number among all clients (staggers the schedule).
    client: u32,
    stream: Option<Stream>,
    phase: Phase,
    /// Bumped whenever the socket is closed, so a read loop notices (and
    /// a new socket is told from a closed one with the same descriptor).
    epoch: u32,
    send: BytesMut,
    sent: usize,
    /// Transactions finished on the current socket (for `connreqs`).
    served: u32,
    backoff: Duration,
    /// Open loop: when the next transaction is due.
    next_start: Instant,
    /// When the current connect/handshake/prepare began (for timeouts).
    since: Instant,
    /// Latency is measured from here: the send time in a closed loop, the
    /// scheduled time in an open loop.
    measured_from: Instant,
    /// When the transaction (or its restart) began (for timeouts).
    begun: Instant,
    /// Transactions this client ended, on any socket (pgbench `-l`'s
    /// transaction_no).
    ended: u64,
    protocol: P,
}

impl<P: Protocol> Session for Conn<P> {
    type Driver = P::Driver;
    type Local = P::Local;
    const BLOCKING_IO: bool = true;

    fn socket(&self) -> Option<(std::os::fd::RawFd, u32)> {
        self.stream.as_ref().map(|s| (s.raw_fd(), self.epoch))
    }

    fn local(shared: &Shared<P::Driver>) -> P::Local {
        P::local(shared)
    }

    fn new(token: usize, client: u32, rng: SmallRng, ctx: &Ctx<P>, now: Instant) -> Self {
        Conn {
            token,
            client,
            stream: None,
            phase: Phase::Down { retry_at: now },
            epoch: 0,
            send: BytesMut::with_capacity(1024),
            sent: 0,
            served: 0,
            backoff: Duration::ZERO,
            next_start: now,
            since: now,
            measured_from: now,
            begun: now,
            ended: 0,
            protocol: P::new(rng, ctx),
        }
    }

    /// Connecting, authenticating or preparing.
    fn is_settling(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting | Phase::Handshake | Phase::Preparing
        )
    }

    /// A transaction is in flight.
    fn is_busy(&self) -> bool {
        self.phase == Phase::Busy
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Opens a new socket (the previous one, if any, is closed).
    fn connect(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        self.close();
        self.since = now;
        let attempt = P::open(ctx.shared).and_then(|mut s| {
            s.register(&ctx.registry, mio::Token(self.token))?;
            Ok(s)
        });
        match attempt {
            Ok(s) => {
                self.stream = Some(s);
                self.phase = Phase::Connecting;
                ctx.result.connections_opened += 1;
            }
            Err(e) => {
                ctx.note_connect_error(&e);
                self.retry_later(ctx, ErrorKind::Connect, now);
            }
        }
    }

    /// The measured window begins: start the schedule and the first
    /// transaction.
    fn kick(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        if let Some(first) = ctx.first_start(self.client) {
            self.next_start = first;
        }
        if self.phase == Phase::Idle {
            self.next(ctx, now);
        }
    }

    /// The measured window ended: idle connections close now, busy ones
    /// when their transaction ends.
    fn wind_down(&mut self) {
        if !self.is_busy() {
            self.finish();
        }
    }

    /// Closes the connection for good, politely.
    fn finish(&mut self) {
        if let Some(s) = self.stream.as_mut() {
            self.send.clear();
            self.protocol.goodbye(&mut self.send);
            let _ = s.write(&self.send);
        }
        self.close();
        self.phase = Phase::Finished;
    }

    fn on_timer(&mut self, ctx: &mut Ctx<P>, at: Instant, now: Instant) {
        match self.phase {
            Phase::Down { retry_at } if retry_at == at => {
                if ctx.stage == Stage::Drain {
                    self.finish();
                } else {
                    self.connect(ctx, now);
                }
            }
            Phase::Idle if ctx.stage == Stage::Measure && self.next_start == at => {
                self.begin(ctx, now);
            }
            _ => {}
        }
    }

    /// Replaces a connection whose transaction or setup ran past the
    /// timeout.
    fn check_timeout(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        let limit = ctx.shared.spec.timeout;
        let expired = match self.phase {
            Phase::Connecting | Phase::Handshake | Phase::Preparing => now - self.since > limit,
            Phase::Busy => now - self.begun > limit,
            _ => false,
        };
        if expired {
            let settling = self.is_settling();
            ctx.result.errors.add(ErrorKind::Timeout);
            self.close();
            if settling {
                self.backoff_then_connect(ctx, now);
            } else {
                self.reconnect_now(ctx, now);
            }
        }
    }

    /// Handles socket readiness. The clock is read after each read, so
    /// latencies end when the response arrived even if the read blocked.
    fn on_event(&mut self, ctx: &mut Ctx<P>, readable: bool, writable: bool) {
        if self.phase == Phase::Connecting {
            self.on_connecting(ctx, Instant::now());
            return;
        }
        if writable {
            if let Some(Err(e)) = self.stream.as_mut().map(Stream::flush_pending) {
                if e.kind() != io::ErrorKind::WouldBlock {
                    return self.lost(ctx, ErrorKind::Write, Instant::now());
                }
            }
        }
        if writable && self.sent < self.send.len() && !self.flush(ctx, Instant::now()) {
            return;
        }
        if readable {
            self.on_readable(ctx);
        }
    }
}

impl<P: Protocol> Conn<P> {
    fn close(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.stream = None;
        self.protocol.reset();
        self.send.clear();
        self.sent = 0;
        self.served = 0;
    }

    fn on_connecting(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        let Some(stream) = self.stream.as_ref() else {
            return;
        };
        match stream.connected() {
            Ok(false) => {}
            Ok(true) => {
                self.phase = Phase::Handshake;
                let hello = self.protocol.hello(ctx, &mut self.send);
                if self.apply(ctx, hello, now) && P::SERVER_SPEAKS_FIRST {
                    // The greeting may already be waiting.
                    self.on_readable(ctx);
                }
            }
            Err(e) => {
                ctx.note_connect_error(&e);
                self.retry_later(ctx, ErrorKind::Connect, now);
            }
        }
    }

    /// Reads until the pending response is complete. A short read means the
    /// socket is drained, so the edge-triggered poll will report the next
    /// bytes; skipping the read that would return EAGAIN saves a syscall
    /// per statement.
    fn on_readable(&mut self, ctx: &mut Ctx<P>) {
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return;
            };
            let read = self.protocol.receive(stream);
            let now = Instant::now();
            match read {
                Ok(r) if r.bytes == 0 => return self.lost(ctx, ErrorKind::Read, now),
                Ok(r) => {
                    if !self.process(ctx, now) || r.bytes < r.room {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.lost(ctx, ErrorKind::Read, now),
            }
        }
    }

    /// Handles every complete message received; false if the socket was
    /// closed or replaced meanwhile.
    fn process(&mut self, ctx: &mut Ctx<P>, now: Instant) -> bool {
        loop {
            let awaiting = match self.phase {
                Phase::Handshake => Awaiting::Handshake,
                Phase::Preparing => Awaiting::Prepare,
                Phase::Busy => Awaiting::Reply,
                Phase::Down { .. } | Phase::Connecting | Phase::Idle | Phase::Finished => {
                    Awaiting::Nothing
                }
            };
            let Some(verdict) = self.protocol.take_message(awaiting, ctx, &mut self.send) else {
                return true;
            };
            let epoch = self.epoch;
            if !self.apply(ctx, verdict, now) || self.epoch != epoch {
                return false;
            }
        }
    }

    /// Does what the protocol asked; false if the connection was closed.
    fn apply(&mut self, ctx: &mut Ctx<P>, verdict: Verdict, now: Instant) -> bool {
        match verdict {
            Verdict::Wait => true,
            Verdict::Send => self.flush(ctx, now),
            Verdict::Ready => self.on_ready(ctx, now),
            Verdict::Restart => {
                self.begun = now;
                self.flush(ctx, now)
            }
            Verdict::Done => {
                let latency =
                    Micros::from_duration(now.saturating_duration_since(self.measured_from));
                ctx.record(latency, now);
                self.log(ctx, Some(latency));
                self.served += 1;
                self.next(ctx, now);
                true
            }
            Verdict::Failed(kind) if self.is_settling() => {
                self.retry_later(ctx, kind, now);
                false
            }
            Verdict::Failed(kind) => {
                ctx.result.errors.add(kind);
                if let Some(p) = &ctx.shared.progress {
                    p.failed();
                }
                self.log(ctx, None);
                self.served += 1;
                self.next(ctx, now);
                true
            }
            Verdict::Lost(kind) => {
                self.lost(ctx, kind, now);
                false
            }
        }
    }

    /// The handshake or the preparation is complete.
    fn on_ready(&mut self, ctx: &mut Ctx<P>, now: Instant) -> bool {
        match self.phase {
            Phase::Handshake => {
                self.phase = Phase::Preparing;
                let prepare = self.protocol.prepare(ctx, &mut self.send);
                self.apply(ctx, prepare, now)
            }
            Phase::Preparing => self.on_prepared(ctx, now),
            Phase::Down { .. }
            | Phase::Connecting
            | Phase::Idle
            | Phase::Busy
            | Phase::Finished => {
                self.lost(ctx, ErrorKind::Protocol, now);
                false
            }
        }
    }

    fn on_prepared(&mut self, ctx: &mut Ctx<P>, now: Instant) -> bool {
        self.backoff = Duration::ZERO;
        self.phase = Phase::Idle;
        if ctx.blocking_io {
            let blocking = self.stream.as_ref().map(|s| s.set_blocking(BLOCKING_WAIT));
            if !matches!(blocking, Some(Ok(()))) {
                self.lost(ctx, ErrorKind::Other, now);
                return false;
            }
        }
        self.next(ctx, now);
        true
    }

    /// Writes the transaction that just ended to the log, if one is kept.
    fn log(&mut self, ctx: &mut Ctx<P>, latency: Option<Micros>) {
        self.ended += 1;
        if ctx.txn_log.is_some() {
            let lag = ctx.interval.map(|_| {
                Micros::from_duration(self.begun.saturating_duration_since(self.measured_from))
            });
            let script = self.protocol.script_no();
            ctx.log_txn(self.client, self.ended - 1, script, latency, lag);
        }
    }

    /// The connection is free: start the next transaction, wait for its
    /// scheduled time, reconnect (connreqs), or stop.
    fn next(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        self.phase = Phase::Idle;
        match ctx.stage {
            Stage::Warm => return,
            Stage::Drain => return self.finish(),
            Stage::Measure => {}
        }
        if let Some(limit) = ctx.shared.spec.requests_per_connection {
            if self.served >= limit {
                self.finish();
                return self.connect(ctx, now);
            }
        }
        if ctx.interval.is_some() && self.next_start > now {
            ctx.timers
                .push(std::cmp::Reverse((self.next_start, self.token)));
            return;
        }
        self.begin(ctx, now);
    }

    fn begin(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        if self.skip_late(ctx, now) {
            return;
        }
        if !ctx.claim() {
            return self.finish();
        }
        self.measured_from = ctx.measured_from(&mut self.next_start, now);
        self.begun = now;
        self.phase = Phase::Busy;
        let first = self.protocol.begin(ctx, &mut self.send);
        self.apply(ctx, first, now);
    }

    /// Rate mode with a latency limit: skips (counts, does not send) every
    /// scheduled transaction already later than the limit, as pgbench `-L`
    /// with `-R` does; true when the next one is not due yet (its timer is
    /// set).
    fn skip_late(&mut self, ctx: &mut Ctx<P>, now: Instant) -> bool {
        let (Some(limit), Some(interval)) = (ctx.shared.skip_later_than, ctx.interval) else {
            return false;
        };
        while self.next_start + limit < now {
            ctx.result.skipped += 1;
            self.next_start += interval;
        }
        if self.next_start > now {
            self.phase = Phase::Idle;
            ctx.timers
                .push(std::cmp::Reverse((self.next_start, self.token)));
            return true;
        }
        false
    }

    /// Writes what is queued; false if the connection was lost.
    fn flush(&mut self, ctx: &mut Ctx<P>, now: Instant) -> bool {
        while self.sent < self.send.len() {
            let Some(stream) = self.stream.as_mut() else {
                return false;
            };
            match stream.write(&self.send[self.sent..]) {
                Ok(0) => {
                    self.lost(ctx, ErrorKind::Write, now);
                    return false;
                }
                Ok(n) => self.sent += n,
                // The poll reports writable when there is room again.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.lost(ctx, ErrorKind::Write, now);
                    return false;
                }
            }
        }
        self.send.clear();
        self.sent = 0;
        true
    }

    /// The socket failed: count it once and reconnect.
    fn lost(&mut self, ctx: &mut Ctx<P>, kind: ErrorKind, now: Instant) {
        if self.is_settling() {
            return self.retry_later(ctx, ErrorKind::Connect, now);
        }
        ctx.result.errors.add(kind);
        self.close();
        self.reconnect_now(ctx, now);
    }

    fn reconnect_now(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        if ctx.stage == Stage::Drain {
            self.phase = Phase::Finished;
        } else {
            self.connect(ctx, now);
        }
    }

    /// Counts a failed connect and schedules another after a backoff of
    /// 10 ms doubling to 100 ms, so a dead server is not spun on.
    fn retry_later(&mut self, ctx: &mut Ctx<P>, kind: ErrorKind, now: Instant) {
        ctx.result.errors.add(kind);
        self.close();
        self.backoff_then_connect(ctx, now);
    }

    fn backoff_then_connect(&mut self, ctx: &mut Ctx<P>, now: Instant) {
        if ctx.stage == Stage::Drain {
            self.phase = Phase::Finished;
            return;
        }
        self.backoff = (self.backoff * 2).clamp(BACKOFF_MIN, BACKOFF_MAX);
        let retry_at = now + self.backoff;
        self.phase = Phase::Down { retry_at };
        ctx.timers.push(std::cmp::Reverse((retry_at, self.token)));
    }
}
