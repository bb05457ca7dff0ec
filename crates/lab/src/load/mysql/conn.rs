//! The MySQL side of one client connection, a
//! [`Protocol`](crate::load::reqresp::Protocol) that the shared lifecycle
//! ([`crate::load::reqresp::Conn`]) drives: it authenticates, prepares the
//! script's statements for every table (as sysbench's `thread_init`), then
//! runs transactions one statement per round trip. Deadlocks and lock-wait
//! timeouts restart the transaction with fresh values (sysbench's
//! `--mysql-ignore-errors` default, after a ROLLBACK); other failures are
//! counted by kind.

use super::ctx::{Ignored, Run, Shared, IGNORED_ERRORS};
use super::script::{self, Call};
use crate::load::reqresp::{self, Awaiting, Protocol, Received, Stream, Verdict};
use crate::load::ErrorKind;
use crate::wire::mysql::codec::{
    Framer, Handshake, Login, PrepareReader, Progress, Reply, ReplyReader,
};
use bytes::BytesMut;
use rand::rngs::SmallRng;
use std::io;

/// One mysql client connection in the shared event loop.
pub(super) type Conn = reqresp::Conn<Mysql>;
type Ctx<'a> = reqresp::Ctx<'a, Mysql>;
const READ_CHUNK: usize = 16 << 10;

/// The mysql protocol state of one connection.
pub(super) struct Mysql {
    framer: Framer,
    handshake: Option<Handshake>,
    recv: BytesMut,
    pkt: Vec<u8>,
    /// Statement ids by slot (see [`script::statement_slot`]).
    stmts: Vec<Option<u32>>,
    /// Whether each slot's parameter types were sent (its first execute).
    typed: Vec<bool>,
    /// The statement being prepared, by position in `Run::prepares`.
    preparing: usize,
    prepare_reader: PrepareReader,
    reply: ReplyReader,
    rng: SmallRng,
    calls: Vec<Call>,
    /// The statement of the event in flight.
    step: usize,
    failure: Option<ErrorKind>,
    /// `Some(retry)`: a ROLLBACK after a failed statement is in flight, and
    /// `retry` restarts the event after it.
    rolling_back: Option<bool>,
}

impl Protocol for Mysql {
    type Driver = Run;
    type Local = Ignored;
    const SERVER_SPEAKS_FIRST: bool = true;

    fn local(_: &Shared) -> Ignored {
        Ignored::default()
    }

    fn new(rng: SmallRng, ctx: &Ctx) -> Self {
        let slots = ctx.shared.begin_slot + 2;
        Mysql {
            framer: Framer::default(),
            handshake: None,
            recv: BytesMut::with_capacity(READ_CHUNK),
            pkt: Vec::with_capacity(256),
            stmts: vec![None; slots],
            typed: vec![false; slots],
            preparing: 0,
            prepare_reader: PrepareReader::default(),
            reply: ReplyReader::default(),
            rng,
            calls: Vec::with_capacity(32),
            step: 0,
            failure: None,
            rolling_back: None,
        }
    }

    fn open(run: &Run) -> io::Result<Stream> {
        match &run.tls {
            Some(t) => t.open(run.url.addr).map(|(stream, _)| stream),
            None => Stream::tcp(run.url.addr),
        }
    }

    fn hello(&mut self, ctx: &Ctx, _: &mut BytesMut) -> Verdict {
        let handshake = Handshake::new(Login {
            user: ctx.shared.url.user.clone(),
            password: ctx.shared.url.password.clone(),
            database: ctx.shared.url.database.clone(),
        });
        self.handshake = Some(match ctx.shared.tls {
            Some(_) => handshake.after_ssl_request(),
            None => handshake,
        });
        Verdict::Wait
    }

    fn receive(&mut self, from: &mut Stream) -> io::Result<Received> {
        if self.recv.capacity() - self.recv.len() < READ_CHUNK / 2 {
            self.recv.reserve(READ_CHUNK);
        }
        let len = self.recv.len();
        let cap = self.recv.capacity();
        // SAFETY: the bytes between len and capacity are only exposed to
        // read(), and only the `n` it reports written are kept.
        let spare = unsafe {
            self.recv.set_len(cap);
            &mut self.recv[len..]
        };
        let room = spare.len();
        let read = from.read(spare);
        self.recv.truncate(len + read.as_ref().map_or(0, |&n| n));
        read.map(|bytes| Received { bytes, room })
    }

    fn take_message(&mut self, at: Awaiting, ctx: &mut Ctx, out: &mut BytesMut) -> Option<Verdict> {
        let mut pkt = std::mem::take(&mut self.pkt);
        let verdict = match self.framer.next_packet(&mut self.recv, &mut pkt) {
            Ok(false) => None,
            Ok(true) => Some(self.on_packet(at, ctx, &pkt, out)),
            Err(_) => Some(Verdict::Lost(ErrorKind::Protocol)),
        };
        self.pkt = pkt;
        verdict
    }

    fn prepare(&mut self, ctx: &mut Ctx, out: &mut BytesMut) -> Verdict {
        self.preparing = 0;
        self.prepare_next(ctx, out)
    }

    /// Draws the event's values and queues its first statement.
    fn begin(&mut self, ctx: &mut Ctx, out: &mut BytesMut) -> Verdict {
        let sh = ctx.shared;
        script::draw(sh.script, &sh.opts, &mut self.rng, &mut self.calls);
        self.step = 0;
        self.failure = None;
        self.rolling_back = None;
        self.send_step(ctx, out)
    }

    /// COM_QUIT.
    fn goodbye(&mut self, out: &mut BytesMut) {
        self.framer.quit(out);
    }

    fn reset(&mut self) {
        self.handshake = None;
        self.framer = Framer::default();
        self.recv.clear();
        self.reply = self.framer.reply_reader();
        self.stmts.iter_mut().for_each(|s| *s = None);
    }
}

impl Mysql {
    fn on_packet(
        &mut self,
        at: Awaiting,
        ctx: &mut Ctx,
        pkt: &[u8],
        out: &mut BytesMut,
    ) -> Verdict {
        match at {
            Awaiting::Handshake => self.on_auth(pkt, out),
            Awaiting::Prepare => match self.prepare_reader.feed(pkt) {
                Ok(None) => Verdict::Wait,
                Ok(Some(id)) => {
                    let slot = ctx.shared.prepares[self.preparing].0;
                    self.stmts[slot] = Some(id);
                    self.typed[slot] = false;
                    self.preparing += 1;
                    self.prepare_next(ctx, out)
                }
                Err(_) => Verdict::Failed(ErrorKind::Other),
            },
            Awaiting::Reply => match self.reply.feed(pkt) {
                Ok(None) => Verdict::Wait,
                Ok(Some(r)) => self.on_reply(ctx, r, out),
                Err(_) => Verdict::Lost(ErrorKind::Protocol),
            },
            // An ERR while idle is the server ending the session; the EOF
            // that follows is counted.
            Awaiting::Nothing if pkt.first() == Some(&0xFF) => Verdict::Wait,
            Awaiting::Nothing => Verdict::Lost(ErrorKind::Protocol),
        }
    }

    fn on_auth(&mut self, pkt: &[u8], out: &mut BytesMut) -> Verdict {
        let Some(hs) = self.handshake.as_mut() else {
            return Verdict::Lost(ErrorKind::Protocol);
        };
        match hs.on_packet(pkt, &mut self.framer, out) {
            Ok(Progress::Continue) => Verdict::Send,
            Ok(Progress::Ready) => {
                self.handshake = None;
                Verdict::Ready
            }
            Err(_) => Verdict::Lost(ErrorKind::Connect),
        }
    }

    /// Queues the next COM_STMT_PREPARE, or says all are done.
    fn prepare_next(&mut self, ctx: &Ctx, out: &mut BytesMut) -> Verdict {
        let Some((_, sql)) = ctx.shared.prepares.get(self.preparing) else {
            return Verdict::Ready;
        };
        self.prepare_reader = PrepareReader::default();
        self.framer.prepare(sql, out);
        Verdict::Send
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

    /// Queues the event's statement `step`; a statement that is not
    /// prepared loses the connection.
    fn send_step(&mut self, ctx: &Ctx, out: &mut BytesMut) -> Verdict {
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
            return Verdict::Lost(ErrorKind::Other);
        };
        self.reply = self.framer.reply_reader();
        let send_types = !std::mem::replace(&mut self.typed[slot], true);
        self.framer.execute(id, params, send_types, out);
        Verdict::Send
    }

    fn on_reply(&mut self, ctx: &mut Ctx, reply: Reply, out: &mut BytesMut) -> Verdict {
        match (self.rolling_back, reply) {
            (Some(retry), _) => self.after_failure(ctx, retry, out),
            (None, Reply::Error(e)) => {
                let retry = IGNORED_ERRORS.contains(&e.code);
                if retry {
                    ctx.local.note(e.code);
                }
                self.failure = Some(classify(e.code));
                if !ctx.shared.script.explicit_transaction() {
                    return self.after_failure(ctx, retry, out);
                }
                self.rolling_back = Some(retry);
                self.reply = self.framer.reply_reader();
                self.framer.query("ROLLBACK", out);
                Verdict::Send
            }
            (None, Reply::Done | Reply::Rows(_)) => {
                self.step += 1;
                if self.step < self.steps(ctx) {
                    return self.send_step(ctx, out);
                }
                Verdict::Done
            }
        }
    }

    /// A failed event is restarted with fresh values (ignored errors), or
    /// counted. A restarted event keeps its latency's start, so retries
    /// count in its latency.
    fn after_failure(&mut self, ctx: &mut Ctx, retry: bool, out: &mut BytesMut) -> Verdict {
        // A claimed transaction is retried even while draining (bounded by
        // the timeout), as sysbench finishes its events.
        if retry && !ctx.shared.shutdown.is_triggered() {
            ctx.result.retries += 1;
            return match self.begin(ctx, out) {
                Verdict::Send => Verdict::Restart,
                lost => lost,
            };
        }
        Verdict::Failed(self.failure.take().unwrap_or(ErrorKind::Other))
    }
}

/// Failure kinds by MySQL error number.
pub fn classify(code: u16) -> ErrorKind {
    match code {
        1213 => ErrorKind::Deadlock,
        _ => ErrorKind::Other,
    }
}
