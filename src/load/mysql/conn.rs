//! One client connection: a state machine driven by socket events and
//! timers. It connects, authenticates, prepares the script's statements
//! for every table (as sysbench's `thread_init`), then runs transactions
//! one statement per round trip. Deadlocks and lock-wait timeouts restart
//! the transaction with fresh values (sysbench's `--mysql-ignore-errors`
//! default, after a ROLLBACK); other failures are counted by kind.

use super::ctx::{Ignored, Run, Shared, IGNORED_ERRORS};
use super::script::{self, Call};
use crate::load::event_loop::{self, Session, Stage};
use crate::load::ErrorKind;
use crate::units::Micros;
use crate::wire::mysql::codec::{
    Framer, Handshake, Login, PrepareReader, Progress, Reply, ReplyReader,
};
use bytes::BytesMut;
use mio::net::TcpStream;
use mio::{Interest, Token};
use rand::rngs::SmallRng;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// A mysql worker's context in the shared event loop.
type Ctx<'a> = event_loop::Ctx<'a, Conn>;
const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_millis(100);
const READ_CHUNK: usize = 16 << 10;
/// In blocking-I/O mode, a read or write returns after this long so the
/// worker can check the deadline, timeouts and shutdown.
const BLOCKING_WAIT: Duration = Duration::from_millis(20);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Down {
        retry_at: Instant,
    },
    Connecting,
    Auth,
    Preparing,
    Idle,
    Busy,
    /// ROLLBACK after a failed statement; `retry` restarts the event.
    RollingBack {
        retry: bool,
    },
    Finished,
}

pub(super) struct Conn {
    token: usize,
    client: u32,
    stream: Option<TcpStream>,
    /// Sockets opened so far (tells a new socket from a closed one that
    /// had the same descriptor number).
    sockets: u32,
    phase: Phase,
    framer: Framer,
    handshake: Option<Handshake>,
    recv: BytesMut,
    pkt: Vec<u8>,
    send: BytesMut,
    sent: usize,
    /// Statement ids by slot (see [`script::statement_slot`]).
    stmts: Vec<Option<u32>>,
    /// Whether each slot's parameter types were sent (its first execute).
    typed: Vec<bool>,
    preparing: usize,
    prepare_reader: PrepareReader,
    reply: ReplyReader,
    rng: SmallRng,
    calls: Vec<Call>,
    step: usize,
    measured_from: Instant,
    begun: Instant,
    failure: Option<ErrorKind>,
    served: u32,
    backoff: Duration,
    next_start: Instant,
    since: Instant,
}

impl Session for Conn {
    type Driver = Run;
    type Local = Ignored;
    const BLOCKING_IO: bool = true;

    fn socket(&self) -> Option<(std::os::fd::RawFd, u32)> {
        use std::os::fd::AsRawFd;
        self.stream.as_ref().map(|s| (s.as_raw_fd(), self.sockets))
    }

    fn local(_: &Shared) -> Ignored {
        Ignored::default()
    }

    fn new(token: usize, client: u32, rng: SmallRng, ctx: &Ctx, now: Instant) -> Self {
        let slots = ctx.shared.begin_slot + 2;
        Conn {
            token,
            client,
            stream: None,
            sockets: 0,
            phase: Phase::Down { retry_at: now },
            framer: Framer::default(),
            handshake: None,
            recv: BytesMut::with_capacity(READ_CHUNK),
            pkt: Vec::with_capacity(256),
            send: BytesMut::with_capacity(1024),
            sent: 0,
            stmts: vec![None; slots],
            typed: vec![false; slots],
            preparing: 0,
            prepare_reader: PrepareReader::default(),
            reply: ReplyReader::default(),
            rng,
            calls: Vec::with_capacity(32),
            step: 0,
            measured_from: now,
            begun: now,
            failure: None,
            served: 0,
            backoff: Duration::ZERO,
            next_start: now,
            since: now,
        }
    }

    fn is_settling(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting | Phase::Auth | Phase::Preparing
        )
    }

    fn is_busy(&self) -> bool {
        matches!(self.phase, Phase::Busy | Phase::RollingBack { .. })
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    fn connect(&mut self, ctx: &mut Ctx, now: Instant) {
        self.close();
        self.since = now;
        let attempt = TcpStream::connect(ctx.shared.url.addr).and_then(|mut s| {
            s.set_nodelay(true)?;
            ctx.registry.register(
                &mut s,
                Token(self.token),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            Ok(s)
        });
        match attempt {
            Ok(s) => {
                self.stream = Some(s);
                self.sockets = self.sockets.wrapping_add(1);
                self.phase = Phase::Connecting;
                ctx.result.connections_opened += 1;
            }
            Err(_) => self.retry_later(ctx, ErrorKind::Connect, now),
        }
    }

    /// The measured window begins.
    fn kick(&mut self, ctx: &mut Ctx, now: Instant) {
        if let Some(first) = ctx.first_start(self.client) {
            self.next_start = first;
        }
        if self.phase == Phase::Idle {
            self.next(ctx, now);
        }
    }

    fn wind_down(&mut self) {
        if !self.is_busy() {
            self.finish();
        }
    }

    /// Closes the connection for good with COM_QUIT.
    fn finish(&mut self) {
        if let Some(s) = self.stream.as_mut() {
            let mut out = BytesMut::new();
            self.framer.quit(&mut out);
            let _ = s.write(&out);
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
                self.begin(ctx, now)
            }
            _ => {}
        }
    }

    fn check_timeout(&mut self, ctx: &mut Ctx, now: Instant) {
        let limit = ctx.shared.spec.timeout;
        let expired = match self.phase {
            Phase::Connecting | Phase::Auth | Phase::Preparing => now - self.since > limit,
            Phase::Busy | Phase::RollingBack { .. } => now - self.begun > limit,
            _ => false,
        };
        if expired {
            self.lost(ctx, ErrorKind::Timeout, now);
        }
    }

    fn on_event(&mut self, ctx: &mut Ctx, readable: bool, writable: bool) {
        let now = Instant::now();
        if self.phase == Phase::Connecting {
            return self.on_connecting(ctx, now);
        }
        if writable && self.sent < self.send.len() && !self.flush(ctx, now) {
            return;
        }
        if readable {
            self.on_readable(ctx);
        }
    }
}

impl Conn {
    fn close(&mut self) {
        self.stream = None;
        self.handshake = None;
        self.framer = Framer::default();
        self.recv.clear();
        self.send.clear();
        self.sent = 0;
        self.served = 0;
        self.reply = self.framer.reply_reader();
        self.stmts.iter_mut().for_each(|s| *s = None);
    }

    fn on_connecting(&mut self, ctx: &mut Ctx, now: Instant) {
        let Some(s) = self.stream.as_ref() else {
            return;
        };
        match (s.take_error(), s.peer_addr()) {
            (Ok(None), Ok(_)) => {
                self.phase = Phase::Auth;
                self.handshake = Some(Handshake::new(Login {
                    user: ctx.shared.url.user.clone(),
                    password: ctx.shared.url.password.clone(),
                    database: ctx.shared.url.database.clone(),
                }));
                // The greeting may already be waiting.
                self.on_readable(ctx);
            }
            (Ok(None), Err(e)) if e.kind() == io::ErrorKind::NotConnected => {}
            _ => self.retry_later(ctx, ErrorKind::Connect, now),
        }
    }

    fn on_readable(&mut self, ctx: &mut Ctx) {
        loop {
            let Some(stream) = self.stream.as_mut() else {
                return;
            };
            if self.recv.capacity() - self.recv.len() < READ_CHUNK / 2 {
                self.recv.reserve(READ_CHUNK);
            }
            let len = self.recv.len();
            let cap = self.recv.capacity();
            // SAFETY: the bytes between len and capacity are only exposed
            // to read(), and only the `n` it reports written are kept.
            let spare = unsafe {
                self.recv.set_len(cap);
                &mut self.recv[len..]
            };
            let room = spare.len();
            let read = stream.read(spare);
            let now = Instant::now();
            match read {
                Ok(0) => {
                    self.recv.truncate(len);
                    return self.lost(ctx, ErrorKind::Read, now);
                }
                Ok(n) => {
                    self.recv.truncate(len + n);
                    if !self.process(ctx, now) || n < room {
                        return;
                    }
                }
                Err(e) => {
                    self.recv.truncate(len);
                    match e.kind() {
                        io::ErrorKind::WouldBlock => return,
                        io::ErrorKind::Interrupted => {}
                        _ => return self.lost(ctx, ErrorKind::Read, now),
                    }
                }
            }
        }
    }

    /// Handles every whole packet received; false once the socket is gone.
    fn process(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let mut pkt = std::mem::take(&mut self.pkt);
        let alive = loop {
            match self.framer.next_packet(&mut self.recv, &mut pkt) {
                Ok(false) => break true,
                Ok(true) => {
                    if !self.on_packet(ctx, &pkt, now) {
                        break false;
                    }
                }
                Err(_) => {
                    let kind = if self.phase == Phase::Auth {
                        ErrorKind::Connect
                    } else {
                        ErrorKind::Protocol
                    };
                    self.lost(ctx, kind, now);
                    break false;
                }
            }
        };
        self.pkt = pkt;
        alive && self.stream.is_some()
    }

    fn on_packet(&mut self, ctx: &mut Ctx, pkt: &[u8], now: Instant) -> bool {
        match self.phase {
            Phase::Auth => self.on_auth(ctx, pkt, now),
            Phase::Preparing => match self.prepare_reader.feed(pkt) {
                Ok(None) => true,
                Ok(Some(id)) => {
                    let slot = ctx.shared.prepares[self.preparing].0;
                    self.stmts[slot] = Some(id);
                    self.typed[slot] = false;
                    self.preparing += 1;
                    self.prepare_next(ctx, now)
                }
                Err(_) => {
                    self.retry_later(ctx, ErrorKind::Other, now);
                    false
                }
            },
            Phase::Busy | Phase::RollingBack { .. } => match self.reply.feed(pkt) {
                Ok(None) => true,
                Ok(Some(r)) => {
                    self.on_reply(ctx, r, now);
                    true
                }
                Err(_) => {
                    self.lost(ctx, ErrorKind::Protocol, now);
                    false
                }
            },
            // An ERR while idle is the server ending the session; the EOF
            // that follows is counted.
            _ if pkt.first() == Some(&0xFF) => true,
            _ => {
                self.lost(ctx, ErrorKind::Protocol, now);
                false
            }
        }
    }

    fn on_auth(&mut self, ctx: &mut Ctx, pkt: &[u8], now: Instant) -> bool {
        let Some(hs) = self.handshake.as_mut() else {
            return false;
        };
        match hs.on_packet(pkt, &mut self.framer, &mut self.send) {
            Ok(Progress::Continue) => self.flush(ctx, now),
            Ok(Progress::Ready) => {
                self.handshake = None;
                self.phase = Phase::Preparing;
                self.preparing = 0;
                self.prepare_next(ctx, now)
            }
            Err(_) => {
                self.retry_later(ctx, ErrorKind::Connect, now);
                false
            }
        }
    }

    /// Sends the next COM_STMT_PREPARE, or starts work when all are done.
    fn prepare_next(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        if let Some((_, sql)) = ctx.shared.prepares.get(self.preparing) {
            self.prepare_reader = PrepareReader::default();
            self.framer.prepare(sql, &mut self.send);
            return self.flush(ctx, now);
        }
        self.backoff = Duration::ZERO;
        if ctx.blocking_io && !self.set_blocking() {
            self.lost(ctx, ErrorKind::Other, now);
            return false;
        }
        self.next(ctx, now);
        true
    }

    /// Blocking-I/O mode (one closed-loop connection on the thread, as
    /// sysbench's): reads and writes wait, at most [`BLOCKING_WAIT`] so the
    /// worker still sees its deadline, instead of a poll per round trip.
    fn set_blocking(&self) -> bool {
        let Some(s) = self.stream.as_ref() else {
            return false;
        };
        let sock = socket2::SockRef::from(s);
        sock.set_nonblocking(false).is_ok()
            && sock.set_read_timeout(Some(BLOCKING_WAIT)).is_ok()
            && sock.set_write_timeout(Some(BLOCKING_WAIT)).is_ok()
    }

    /// The connection is free: next transaction, its scheduled time, a
    /// reconnect (connreqs), or the end.
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
        self.measured_from = ctx.measured_from(&mut self.next_start, now);
        self.start_event(ctx, now);
    }

    /// Draws the event's values and sends its first statement. A restarted
    /// event keeps its `measured_from`, so retries count in its latency.
    fn start_event(&mut self, ctx: &mut Ctx, now: Instant) {
        let sh = ctx.shared;
        script::draw(sh.script, &sh.opts, &mut self.rng, &mut self.calls);
        self.begun = now;
        self.step = 0;
        self.failure = None;
        self.phase = Phase::Busy;
        self.send_step(ctx, now);
    }

    /// Statements of the event: BEGIN, the calls, COMMIT (or just calls).
    fn steps(&self, ctx: &Ctx) -> usize {
        self.calls.len()
            + if ctx.shared.script.explicit_transaction() {
                2
            } else {
                0
            }
    }

    fn send_step(&mut self, ctx: &mut Ctx, now: Instant) {
        let trx = ctx.shared.script.explicit_transaction();
        let last = self.steps(ctx) - 1;
        let (slot, params) = match self.step {
            0 if trx => (ctx.shared.begin_slot, &[][..]),
            i if trx && i == last => (ctx.shared.begin_slot + 1, &[][..]),
            i => {
                let call = &self.calls[i - usize::from(trx)];
                (call.slot, call.params.as_slice())
            }
        };
        let Some(id) = self.stmts.get(slot).copied().flatten() else {
            return self.lost(ctx, ErrorKind::Other, now);
        };
        self.reply = self.framer.reply_reader();
        let send_types = !std::mem::replace(&mut self.typed[slot], true);
        self.framer.execute(id, params, send_types, &mut self.send);
        self.flush(ctx, now);
    }

    fn on_reply(&mut self, ctx: &mut Ctx, reply: Reply, now: Instant) {
        match (self.phase, reply) {
            (Phase::Busy, Reply::Error(e)) => {
                let retry = IGNORED_ERRORS.contains(&e.code);
                if retry {
                    ctx.local.note(e.code);
                }
                self.failure = Some(classify(e.code));
                if ctx.shared.script.explicit_transaction() {
                    self.phase = Phase::RollingBack { retry };
                    self.reply = self.framer.reply_reader();
                    self.framer.query("ROLLBACK", &mut self.send);
                    self.flush(ctx, now);
                } else {
                    self.after_failure(ctx, retry, now);
                }
            }
            (Phase::Busy, _) => {
                self.step += 1;
                if self.step < self.steps(ctx) {
                    return self.send_step(ctx, now);
                }
                let latency =
                    Micros::from_duration(now.saturating_duration_since(self.measured_from));
                ctx.record(latency, now);
                self.served += 1;
                self.next(ctx, now);
            }
            (Phase::RollingBack { retry }, _) => self.after_failure(ctx, retry, now),
            _ => self.lost(ctx, ErrorKind::Protocol, now),
        }
    }

    /// A failed event is restarted (ignored errors) or counted.
    fn after_failure(&mut self, ctx: &mut Ctx, retry: bool, now: Instant) {
        // A claimed transaction is retried even while draining (bounded by
        // the timeout), as sysbench finishes its events.
        if retry && !ctx.shared.shutdown.is_triggered() {
            ctx.result.retries += 1;
            return self.start_event(ctx, now);
        }
        ctx.result
            .errors
            .add(self.failure.take().unwrap_or(ErrorKind::Other));
        self.next(ctx, now);
    }

    fn flush(&mut self, ctx: &mut Ctx, now: Instant) -> bool {
        let Some(stream) = self.stream.as_mut() else {
            return false;
        };
        while self.sent < self.send.len() {
            match stream.write(&self.send[self.sent..]) {
                Ok(0) => {
                    self.lost(ctx, ErrorKind::Write, now);
                    return false;
                }
                Ok(n) => self.sent += n,
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

    /// The connection broke: count it and open a new one.
    fn lost(&mut self, ctx: &mut Ctx, kind: ErrorKind, now: Instant) {
        let settling = self.is_settling();
        if ctx.stage != Stage::Drain || self.is_busy() {
            ctx.result.errors.add(kind);
        }
        self.close();
        if ctx.stage == Stage::Drain {
            self.phase = Phase::Finished;
        } else if settling {
            self.backoff_then_connect(ctx, now);
        } else {
            self.connect(ctx, now);
        }
    }

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

/// Failure kinds by MySQL error number.
pub fn classify(code: u16) -> ErrorKind {
    match code {
        1213 => ErrorKind::Deadlock,
        _ => ErrorKind::Other,
    }
}
