//! One connection lifecycle for the request/response database drivers
//! (`pg`, `mysql`, and the next such protocol), generic over a small
//! [`Protocol`] trait.
//!
//! [`Conn`] is the event loop's [`Session`](super::event_loop::Session):
//! it connects (non-blocking, with a 10 → 100 ms backoff after a failure),
//! walks the handshake and the preparation, then runs transactions until
//! the measured window ends, replacing its socket when it is lost, when a
//! step runs past the timeout, or after `requests_per_connection`
//! transactions; it counts every failure once, by kind. It owns the socket
//! ([`Stream`]) and the send buffer, and knows nothing of any wire format.
//!
//! A [`Protocol`] owns the rest: the receive buffer and its framing, the
//! handshake, what to prepare, the transaction's statements and values, and
//! the protocol's rules for errors and retries. It reads each whole message
//! and answers with a [`Verdict`] that tells the lifecycle what to do next.
//! The codecs themselves stay sans-IO in [`crate::wire`].

mod conn;
mod stream;
#[cfg(test)]
mod tests;

pub(crate) use conn::{Conn, Ctx};
pub(crate) use stream::Stream;

use super::event_loop::Shared;
use super::ErrorKind;
use bytes::BytesMut;
use rand::rngs::SmallRng;
use std::io;

/// One request/response wire protocol as the connection lifecycle
/// ([`Conn`]) drives it.
pub(crate) trait Protocol: Sized {
    /// The driver's run-wide settings, read through [`Shared`].
    type Driver: Sync;
    /// Per-worker state of the driver's own, handed back at the end.
    type Local: Send;
    /// The server speaks first (MySQL's greeting): once connected, what has
    /// already arrived is read at once.
    const SERVER_SPEAKS_FIRST: bool;

    /// A worker's own state, made once per worker.
    fn local(shared: &Shared<Self::Driver>) -> Self::Local;
    /// The protocol state of one connection, before it connects.
    fn new(rng: SmallRng, ctx: &Ctx<'_, Self>) -> Self;
    /// Starts a non-blocking connect to the server.
    fn open(driver: &Self::Driver) -> io::Result<Stream>;
    /// The socket is connected: starts the handshake, queueing the first
    /// message into `out` if the client speaks first.
    fn hello(&mut self, ctx: &Ctx<'_, Self>, out: &mut BytesMut) -> Verdict;
    /// Reads once from the socket into the receive buffer.
    fn receive(&mut self, from: &mut Stream) -> io::Result<Received>;
    /// Takes the next whole message received, if there is one, and says
    /// what it means while the connection is waiting for (`at`). Replies to
    /// that message (the handshake's next step, the next statement, a
    /// ROLLBACK) go into `out`.
    fn take_message(
        &mut self,
        at: Awaiting,
        ctx: &mut Ctx<'_, Self>,
        out: &mut BytesMut,
    ) -> Option<Verdict>;
    /// Authenticated: queues what each connection prepares
    /// ([`Verdict::Send`]), or says there is nothing to ([`Verdict::Ready`]).
    fn prepare(&mut self, ctx: &mut Ctx<'_, Self>, out: &mut BytesMut) -> Verdict;
    /// A new transaction: draws its values and queues its first statement.
    fn begin(&mut self, ctx: &mut Ctx<'_, Self>, out: &mut BytesMut) -> Verdict;
    /// Queues the message that ends a session politely.
    fn goodbye(&mut self, out: &mut BytesMut);
    /// The socket was closed: forgets what belonged to it (buffered bytes,
    /// the handshake, prepared statements).
    fn reset(&mut self);

    /// The script of the transaction that just ended, for the transaction
    /// log (pgbench `-l`'s script_no); 0 for a protocol with one script.
    fn script_no(&self) -> u32 {
        0
    }
}

/// What a connection waits for, as [`Protocol::take_message`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Awaiting {
    /// The next step of the handshake.
    Handshake,
    /// Replies to what [`Protocol::prepare`] sent.
    Prepare,
    /// Replies to the transaction's statements (and its ROLLBACK).
    Reply,
    /// Nothing: the connection is idle.
    Nothing,
}

/// What the lifecycle does after a message (or a step the protocol took).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing yet: more messages are to come.
    Wait,
    /// Send what the protocol queued (possibly nothing), then wait.
    Send,
    /// The handshake, or the preparation, is complete.
    Ready,
    /// The transaction starts over (fresh values, queued): its timeout
    /// counts from now, its latency still from its first start.
    Restart,
    /// The transaction completed: its latency is recorded.
    Done,
    /// The server refused what was asked: counted by kind. A transaction
    /// ends there (the protocol rolled it back); a connection still
    /// settling backs off and reconnects.
    Failed(ErrorKind),
    /// The connection is unusable (broken, or a message that makes no
    /// sense): counted by kind (as a connect error while settling), and
    /// replaced.
    Lost(ErrorKind),
}

/// What one read from the socket did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Received {
    /// Bytes read (0: the server closed the connection).
    pub bytes: usize,
    /// Room the buffer offered: a read that filled it may have left more.
    pub room: usize,
}
