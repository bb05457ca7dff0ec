//! The PostgreSQL side of one client connection, a
//! [`Protocol`](crate::load::reqresp::Protocol) that the shared lifecycle
//! ([`crate::load::reqresp::Conn`]) drives: it authenticates, prepares the
//! script's statements once, then runs transactions one statement per
//! round trip (Bind, Execute, Sync), and retries serialization failures
//! and deadlocks as pgbench does.

use super::ctx::{Local, Run, Shared};
use super::script::{QueryMode, TxnValues, STATEMENT_NAMES};
use crate::load::reqresp::{self, Awaiting, Protocol, Received, Stream, Verdict};
use crate::load::{event_loop::Stage, ErrorKind};
use crate::wire::pg::auth::{Handshake, Progress};
use crate::wire::pg::codec::{self, TxStatus};
use crate::wire::pg::conninfo::Host;
use bytes::BytesMut;
use rand::rngs::SmallRng;
use std::io;
use std::time::Instant;

/// One pg client connection in the shared event loop.
pub(super) type Conn = reqresp::Conn<Pg>;
type Ctx<'a> = reqresp::Ctx<'a, Pg>;
const RECV_CAPACITY: usize = 8 << 10;

/// What one backend message means to the connection.
enum Event {
    Ready(TxStatus),
    Error([u8; 5]),
    Ignore,
    Unexpected,
}

/// The pg protocol state of one connection.
pub(super) struct Pg {
    handshake: Option<Handshake>,
    recv: codec::RecvBuf,
    rng: SmallRng,
    values: TxnValues,
    /// The script of the transaction in flight (of the run's scripts).
    script: usize,
    /// The statement of the script in flight.
    step: usize,
    tries: u32,
    failure: Option<ErrorKind>,
    /// When the statement in flight was sent; only with `-r`.
    statement_sent: Option<Instant>,
    /// ROLLBACK after a failed statement is in flight.
    rolling_back: bool,
    prepare_failed: bool,
}

impl Protocol for Pg {
    type Driver = Run;
    type Local = Local;
    const SERVER_SPEAKS_FIRST: bool = false;

    fn local(shared: &Shared) -> Local {
        Local::new(shared)
    }

    fn new(rng: SmallRng, _: &Ctx) -> Self {
        Pg {
            handshake: None,
            recv: codec::RecvBuf::with_capacity(RECV_CAPACITY),
            rng,
            values: TxnValues::default(),
            script: 0,
            step: 0,
            tries: 0,
            failure: None,
            statement_sent: None,
            rolling_back: false,
            prepare_failed: false,
        }
    }

    fn open(run: &Run) -> io::Result<Stream> {
        match &run.cfg.host {
            Host::Tcp(addr) => match &run.tls {
                Some(t) => t.open(*addr).map(|(stream, _)| stream),
                None => Stream::tcp(*addr),
            },
            Host::Unix(path) => Stream::unix(path),
        }
    }

    fn hello(&mut self, ctx: &Ctx, out: &mut BytesMut) -> Verdict {
        match Handshake::start(&ctx.shared.cfg, out) {
            Ok(h) => {
                self.handshake = Some(h);
                Verdict::Send
            }
            Err(_) => Verdict::Lost(ErrorKind::Connect),
        }
    }

    fn receive(&mut self, from: &mut Stream) -> io::Result<Received> {
        let spare = self.recv.spare();
        let room = spare.len();
        let bytes = from.read(spare)?;
        self.recv.filled(bytes);
        Ok(Received { bytes, room })
    }

    fn take_message(&mut self, at: Awaiting, ctx: &mut Ctx, out: &mut BytesMut) -> Option<Verdict> {
        let frame = match self.recv.next_frame() {
            Ok(None) => return None,
            Ok(Some(frame)) => frame,
            Err(_) => return Some(Verdict::Lost(ErrorKind::Protocol)),
        };
        if at == Awaiting::Handshake {
            let Some(h) = self.handshake.as_mut() else {
                return Some(Verdict::Lost(ErrorKind::Protocol));
            };
            return Some(match h.on_frame(frame, out) {
                Ok(Progress::Continue) => Verdict::Send,
                Ok(Progress::Ready) => {
                    self.handshake = None;
                    Verdict::Ready
                }
                Err(_) => Verdict::Lost(ErrorKind::Connect),
            });
        }
        Some(match (at, classify(frame)) {
            (_, Event::Ignore) => Verdict::Wait,
            (_, Event::Unexpected) => Verdict::Lost(ErrorKind::Protocol),
            (Awaiting::Prepare, Event::Error(_)) => {
                self.prepare_failed = true;
                Verdict::Wait
            }
            (Awaiting::Prepare, Event::Ready(_)) if self.prepare_failed => {
                Verdict::Failed(ErrorKind::Other)
            }
            (Awaiting::Prepare, Event::Ready(_)) => Verdict::Ready,
            (Awaiting::Reply, Event::Error(_)) if self.rolling_back => Verdict::Wait,
            (Awaiting::Reply, Event::Error(code)) => {
                self.failure.get_or_insert(classify_sqlstate(&code));
                Verdict::Wait
            }
            (Awaiting::Reply, Event::Ready(_)) if self.rolling_back => {
                let kind = self.failure.unwrap_or(ErrorKind::Other);
                self.resolve_failure(ctx, kind, out)
            }
            (Awaiting::Reply, Event::Ready(status)) => self.statement_done(ctx, status, out),
            // An error while idle is the server closing the session
            // (shutdown, termination); the EOF that follows is counted.
            (Awaiting::Nothing | Awaiting::Handshake, Event::Error(_)) => Verdict::Wait,
            (Awaiting::Nothing | Awaiting::Handshake, Event::Ready(_)) => {
                Verdict::Lost(ErrorKind::Protocol)
            }
        })
    }

    fn prepare(&mut self, ctx: &mut Ctx, out: &mut BytesMut) -> Verdict {
        self.prepare_failed = false;
        if ctx.local.prepare.is_empty() {
            // Extended and simple modes prepare nothing up front.
            return Verdict::Ready;
        }
        out.extend_from_slice(&ctx.local.prepare);
        Verdict::Send
    }

    fn begin(&mut self, ctx: &mut Ctx, out: &mut BytesMut) -> Verdict {
        self.script = ctx.shared.pick(&mut self.rng);
        let script = &ctx.shared.scripts[self.script].0;
        self.values = script.draw(&mut self.rng, ctx.shared.scale);
        self.step = 0;
        self.tries = 1;
        self.failure = None;
        self.rolling_back = false;
        self.send_statement(ctx, out)
    }

    fn goodbye(&mut self, out: &mut BytesMut) {
        postgres_protocol::message::frontend::terminate(out);
    }

    fn reset(&mut self) {
        self.handshake = None;
        self.recv.clear();
    }

    fn script_no(&self) -> u32 {
        self.script as u32
    }
}

impl Pg {
    fn send_statement(&mut self, ctx: &Ctx, out: &mut BytesMut) -> Verdict {
        let stmt = &ctx.shared.scripts[self.script].0.statements()[self.step];
        self.statement_sent = ctx.shared.per_statement.then(Instant::now);
        let (params, n) = self.values.params(stmt);
        let params = &params[..n];
        match ctx.shared.mode {
            QueryMode::Prepared => {
                let name = STATEMENT_NAMES[ctx.shared.first_statement(self.script) + self.step];
                codec::bind_execute_sync(name, params, out)
            }
            QueryMode::Extended => codec::parse_bind_execute_sync(&stmt.sql, params, out),
            QueryMode::Simple => codec::literal_query(&stmt.sql, params, out),
        }
        Verdict::Send
    }

    fn statement_done(&mut self, ctx: &mut Ctx, status: TxStatus, out: &mut BytesMut) -> Verdict {
        if let Some(kind) = self.failure {
            if status == TxStatus::Failed {
                self.rolling_back = true;
                out.extend_from_slice(&ctx.local.rollback);
                return Verdict::Send;
            }
            return self.resolve_failure(ctx, kind, out);
        }
        if let Some(sent) = self.statement_sent {
            let at = ctx.shared.first_statement(self.script) + self.step;
            ctx.local.statement_took(at, sent.elapsed());
        }
        self.step += 1;
        if self.step < ctx.shared.scripts[self.script].0.statements().len() {
            return self.send_statement(ctx, out);
        }
        ctx.local.done_by_script[self.script] += 1;
        Verdict::Done
    }

    /// pgbench's retry rule: serialization failures and deadlocks run the
    /// transaction again with the same random values, up to `max_tries`.
    fn resolve_failure(&mut self, ctx: &mut Ctx, kind: ErrorKind, out: &mut BytesMut) -> Verdict {
        let retryable = matches!(kind, ErrorKind::Serialization | ErrorKind::Deadlock);
        if retryable && self.tries < ctx.shared.max_tries && ctx.stage != Stage::Drain {
            // `retries` counts transactions retried (LoadResult's contract),
            // as pgbench's "number of transactions retried".
            if self.tries == 1 {
                ctx.result.retries += 1;
            }
            self.tries += 1;
            self.step = 0;
            self.failure = None;
            self.rolling_back = false;
            // The same transaction goes on: its timeout still counts from
            // its first try.
            return self.send_statement(ctx, out);
        }
        Verdict::Failed(kind)
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
