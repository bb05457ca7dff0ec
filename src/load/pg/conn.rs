//! One client connection: a small state machine driven by socket events and
//! timers. It connects, authenticates, prepares the script's statements
//! once, then runs transactions one statement per round trip (Bind,
//! Execute, Sync), retries serialization failures and deadlocks, and
//! replaces itself when the connection is lost.

use super::ctx::{Local, Run, Shared};
use super::script::{QueryMode, TxnValues, STATEMENT_NAMES};
use super::stream::Stream;
use crate::load::event_loop::{self, Session, Stage};
use crate::load::ErrorKind;
use crate::units::Micros;
use crate::wire::pg::auth::{Handshake, Progress};
use crate::wire::pg::codec::{self, TxStatus};
use bytes::BytesMut;
use rand::rngs::SmallRng;
use std::io;
use std::time::{Duration, Instant};

/// A pg worker's context in the shared event loop.
type Ctx<'a> = event_loop::Ctx<'a, Conn>;
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_millis(100);
const RECV_CAPACITY: usize = 8 << 10;
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
    Startup,
    Preparing,
    /// Connected with no transaction in flight.
    Idle,
    /// A statement of the current transaction is in flight.
    Busy,
    /// ROLLBACK after a failed statement is in flight.
    RollingBack,
    /// Done for this run.
    Finished,
}

/// The transaction in flight.
#[derive(Clone, Copy, Debug)]
struct Txn {
    values: TxnValues,
    step: usize,
    tries: u32,
    /// Latency is measured from here: the send time in a closed loop, the
    /// scheduled time in an open loop.
    measured_from: Instant,
    begun: Instant,
    /// When the statement in flight was sent (for `-r`).
    statement_sent: Instant,
    failure: Option<ErrorKind>,
}

/// What one backend message means to the connection.
enum Event {
    Ready(TxStatus),
    Error([u8; 5]),
    Ignore,
    Unexpected,
    Startup(Result<Progress, codec::PgError>),
}

pub(super) struct Conn {
    token: usize,
    /// This connection's number among all clients (staggers the schedule).
    client: u32,
    stream: Option<Stream>,
    phase: Phase,
    handshake: Option<Handshake>,
    recv: codec::RecvBuf,
    /// Bumped whenever the socket is closed, so a read loop notices.
    epoch: u32,
    send: BytesMut,
    sent: usize,
    rng: SmallRng,
    txn: Txn,
    /// Transactions finished on the current socket (for `connreqs`).
    served: u32,
    backoff: Duration,
    /// Open loop: when the next transaction is due.
    next_start: Instant,
    /// When the current connect/startup/prepare began (for timeouts).
    since: Instant,
    prepare_failed: bool,
}

impl Session for Conn {
    type Driver = Run;
    type Local = Local;
    const BLOCKING_IO: bool = true;

    fn socket(&self) -> Option<(std::os::fd::RawFd, u32)> {
        self.stream.as_ref().map(|s| (s.raw_fd(), self.epoch))
    }

    fn local(shared: &Shared) -> Local {
        Local::new(shared)
    }

    fn new(token: usize, client: u32, rng: SmallRng, _: &Ctx, now: Instant) -> Self {
        Conn {
            token,
            client,
            stream: None,
            phase: Phase::Down { retry_at: now },
            handshake: None,
            recv: codec::RecvBuf::with_capacity(RECV_CAPACITY),
            epoch: 0,
            send: BytesMut::with_capacity(1024),
            sent: 0,
            rng,
            txn: Txn {
                values: TxnValues::default(),
                step: 0,
                tries: 0,
                measured_from: now,
                begun: now,
                statement_sent: now,
                failure: None,
            },
            served: 0,
            backoff: Duration::ZERO,
            next_start: now,
            since: now,
            prepare_failed: false,
        }
    }

    /// Connecting, authenticating or preparing.
    fn is_settling(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting | Phase::Startup | Phase::Preparing
        )
    }

    /// A transaction is in flight.
    fn is_busy(&self) -> bool {
        matches!(self.phase, Phase::Busy | Phase::RollingBack)
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// Opens a new socket (the previous one, if any, is closed).
    fn connect(&mut self, ctx: &mut Ctx, now: Instant) {
        self.close();
        self.since = now;
        let attempt = Stream::connect(&ctx.shared.cfg.host).and_then(|mut s| {
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
    fn kick(&mut self, ctx: &mut Ctx, now: Instant) {
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
            postgres_protocol::message::frontend::terminate(&mut self.send);
            let _ = s.write(&self.send);
        }
        self.close();
        self.phase = Phase::Finished;
    }

    fn on_timer(&mut self, ctx: &mut Ctx, at: Instant, now: Instant) {
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
    fn check_timeout(&mut self, ctx: &mut Ctx, now: Instant) {
        let limit = ctx.shared.spec.timeout;
        let expired = match self.phase {
            Phase::Connecting | Phase::Startup | Phase::Preparing => now - self.since > limit,
            Phase::Busy | Phase::RollingBack => now - self.txn.begun > limit,
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
    fn on_event(&mut self, ctx: &mut Ctx, readable: bool, writable: bool) {
        if self.phase == Phase::Connecting {
            self.on_connecting(ctx, Instant::now());
            return;
        }
        if writable && self.sent < self.send.len() && !self.flush(ctx, Instant::now()) {
            return;
        }
        if readable {
            self.on_readable(ctx);
        }
    }
}

impl Conn {
    fn close(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.stream = None;
        self.handshake = None;
        self.recv.clear();
        self.send.clear();
        self.sent = 0;
        self.served = 0;
    }

    fn on_connecting(&mut self, ctx: &mut Ctx, now: Instant) {
        let Some(stream) = self.stream.as_ref() else {
            return;
        };
        match stream.connected() {
            Ok(false) => {}
            Ok(true) => match Handshake::start(&ctx.shared.cfg, &mut self.send) {
                Ok(h) => {
                    self.handshake = Some(h);
                    self.phase = Phase::Startup;
                    self.flush(ctx, now);
                }
                Err(_) => self.retry_later(ctx, ErrorKind::Connect, now),
            },
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
    fn on_readable(&mut self, ctx: &mut Ctx) {
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return;
            };
            let spare = self.recv.spare();
            let room = spare.len();
            let read = stream.read(spare);
            let now = Instant::now();
            match read {
                Ok(0) => return self.lost(ctx, ErrorKind::Read, now),
                Ok(n) => {
                    self.recv.filled(n);
                    if !self.process(ctx, now) || n < room {
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
    fn process(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        loop {
            let event = match self.recv.next_frame() {
                Ok(None) => return true,
                Err(_) => {
                    self.lost(ctx, ErrorKind::Protocol, now);
                    return false;
                }
                Ok(Some(frame)) => match (self.phase, self.handshake.as_mut()) {
                    (Phase::Startup, Some(h)) => Event::Startup(h.on_frame(frame, &mut self.send)),
                    _ => classify(frame),
                },
            };
            let epoch = self.epoch;
            if !self.on_message(ctx, event, now) || self.epoch != epoch {
                return false;
            }
        }
    }

    /// Returns false if the connection was closed.
    fn on_message(&mut self, ctx: &mut Ctx, event: Event, now: Instant) -> bool {
        match (self.phase, event) {
            (_, Event::Ignore) => true,
            (_, Event::Unexpected) => {
                self.lost(ctx, ErrorKind::Protocol, now);
                false
            }
            (Phase::Startup, Event::Startup(r)) => self.on_startup(ctx, r, now),
            (Phase::Preparing, Event::Error(_)) => {
                self.prepare_failed = true;
                true
            }
            (Phase::Preparing, Event::Ready(_)) => self.on_prepared(ctx, now),
            (Phase::Busy, Event::Error(code)) => {
                self.txn.failure.get_or_insert(classify_sqlstate(&code));
                true
            }
            (Phase::Busy, Event::Ready(status)) => {
                self.statement_done(ctx, status, now);
                true
            }
            (Phase::RollingBack, Event::Error(_)) => true,
            (Phase::RollingBack, Event::Ready(_)) => {
                let kind = self.txn.failure.unwrap_or(ErrorKind::Other);
                self.resolve_failure(ctx, kind, now);
                true
            }
            // An error while idle is the server closing the session
            // (shutdown, termination); the EOF that follows is counted.
            (_, Event::Error(_)) => true,
            _ => {
                self.lost(ctx, ErrorKind::Protocol, now);
                false
            }
        }
    }

    fn on_startup(
        &mut self,
        ctx: &mut Ctx,
        r: Result<Progress, codec::PgError>,
        now: Instant,
    ) -> bool {
        match r {
            Ok(Progress::Continue) => self.flush(ctx, now),
            Ok(Progress::Ready) => {
                self.handshake = None;
                self.prepare_failed = false;
                if ctx.local.prepare.is_empty() {
                    // Extended and simple modes prepare nothing up front.
                    return self.on_prepared(ctx, now);
                }
                self.phase = Phase::Preparing;
                self.send.extend_from_slice(&ctx.local.prepare);
                self.flush(ctx, now)
            }
            Err(_) => {
                self.retry_later(ctx, ErrorKind::Connect, now);
                false
            }
        }
    }

    fn on_prepared(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        if self.prepare_failed {
            self.retry_later(ctx, ErrorKind::Other, now);
            return false;
        }
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

    /// The connection is free: start the next transaction, wait for its
    /// scheduled time, reconnect (connreqs), or stop.
    fn next(&mut self, ctx: &mut Ctx, now: Instant) {
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

    fn begin(&mut self, ctx: &mut Ctx, now: Instant) {
        if !ctx.claim() {
            return self.finish();
        }
        let measured_from = ctx.measured_from(&mut self.next_start, now);
        self.txn = Txn {
            values: ctx.shared.script.draw(&mut self.rng, ctx.shared.scale),
            step: 0,
            tries: 1,
            measured_from,
            begun: now,
            statement_sent: now,
            failure: None,
        };
        self.phase = Phase::Busy;
        self.send_statement(ctx, now);
    }

    fn send_statement(&mut self, ctx: &mut Ctx, now: Instant) {
        let stmt = &ctx.shared.script.statements()[self.txn.step];
        self.txn.statement_sent = now;
        let (params, n) = self.txn.values.params(stmt);
        let params = &params[..n];
        match ctx.shared.mode {
            QueryMode::Prepared => {
                codec::bind_execute_sync(STATEMENT_NAMES[self.txn.step], params, &mut self.send)
            }
            QueryMode::Extended => {
                codec::parse_bind_execute_sync(&stmt.sql, params, &mut self.send)
            }
            QueryMode::Simple => codec::literal_query(&stmt.sql, params, &mut self.send),
        }
        self.flush(ctx, now);
    }

    fn statement_done(&mut self, ctx: &mut Ctx, status: TxStatus, now: Instant) {
        if let Some(kind) = self.txn.failure {
            if status == TxStatus::Failed {
                self.phase = Phase::RollingBack;
                self.send.extend_from_slice(&ctx.local.rollback);
                self.flush(ctx, now);
            } else {
                self.resolve_failure(ctx, kind, now);
            }
            return;
        }
        let took = now.saturating_duration_since(self.txn.statement_sent);
        ctx.local.statement_took(self.txn.step, took);
        self.txn.step += 1;
        if self.txn.step < ctx.shared.script.statements().len() {
            return self.send_statement(ctx, now);
        }
        let latency = Micros::from_duration(now.saturating_duration_since(self.txn.measured_from));
        ctx.record(latency, now);
        self.served += 1;
        self.next(ctx, now);
    }

    /// pgbench's retry rule: serialization failures and deadlocks run the
    /// transaction again with the same random values, up to `max_tries`.
    fn resolve_failure(&mut self, ctx: &mut Ctx, kind: ErrorKind, now: Instant) {
        let retryable = matches!(kind, ErrorKind::Serialization | ErrorKind::Deadlock);
        if retryable && self.txn.tries < ctx.shared.max_tries && ctx.stage != Stage::Drain {
            // `retries` counts transactions retried (LoadResult's contract),
            // as pgbench's "number of transactions retried".
            if self.txn.tries == 1 {
                ctx.result.retries += 1;
            }
            self.txn.tries += 1;
            self.txn.step = 0;
            self.txn.failure = None;
            self.phase = Phase::Busy;
            return self.send_statement(ctx, now);
        }
        ctx.result.errors.add(kind);
        self.served += 1;
        self.next(ctx, now);
    }

    /// Writes what is queued; false if the connection was lost.
    fn flush(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
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
    fn lost(&mut self, ctx: &mut Ctx, kind: ErrorKind, now: Instant) {
        if self.is_settling() {
            return self.retry_later(ctx, ErrorKind::Connect, now);
        }
        ctx.result.errors.add(kind);
        self.close();
        self.reconnect_now(ctx, now);
    }

    fn reconnect_now(&mut self, ctx: &mut Ctx, now: Instant) {
        if ctx.stage == Stage::Drain {
            self.phase = Phase::Finished;
        } else {
            self.connect(ctx, now);
        }
    }

    /// Counts a failed connect and schedules another after a backoff of
    /// 10 ms doubling to 100 ms, so a dead server is not spun on.
    fn retry_later(&mut self, ctx: &mut Ctx, kind: ErrorKind, now: Instant) {
        ctx.result.errors.add(kind);
        self.close();
        self.backoff_then_connect(ctx, now);
    }

    fn backoff_then_connect(&mut self, ctx: &mut Ctx, now: Instant) {
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

fn classify(frame: codec::Frame<'_>) -> Event {
    match frame.tag {
        b'Z' => match codec::ready_status(frame.body) {
            Ok(s) => Event::Ready(s),
            Err(_) => Event::Unexpected,
        },
        b'E' => Event::Error(codec::sqlstate(frame.body)),
        // ParseComplete, BindComplete, CloseComplete, CommandComplete,
        // DataRow, RowDescription, NoData, EmptyQuery, PortalSuspended,
        // Notice, ParameterStatus, Notification.
        b'1' | b'2' | b'3' | b'C' | b'D' | b'T' | b'n' | b'I' | b's' | b'N' | b'S' | b'A' => {
            Event::Ignore
        }
        _ => Event::Unexpected,
    }
}

/// Failure kinds by SQLSTATE, as pgbench classifies them.
pub fn classify_sqlstate(code: &[u8; 5]) -> ErrorKind {
    match code {
        b"40001" => ErrorKind::Serialization,
        b"40P01" => ErrorKind::Deadlock,
        _ => ErrorKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_map_to_pgbench_failure_kinds() {
        assert_eq!(classify_sqlstate(b"40001"), ErrorKind::Serialization);
        assert_eq!(classify_sqlstate(b"40P01"), ErrorKind::Deadlock);
        assert_eq!(classify_sqlstate(b"23505"), ErrorKind::Other);
    }
}
