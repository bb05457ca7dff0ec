//! One load thread: a mio event loop owning its share of the connections.
//!
//! Per request the hot path makes two syscalls, one `write` of the
//! pre-built request and one `read` (sockets are edge-triggered and a short
//! read proves the receive queue empty, so no `read` is spent on
//! `WouldBlock`), plus its share of `epoll_wait`. Interest never changes
//! after a connection is registered, so there is no `epoll_ctl` per request
//! (wrk toggles write interest twice per request). The clock is read once
//! per few events, not per request. Counters and the histogram belong to
//! this thread; they are merged when the run ends. With `--coalesce`, a
//! closed-loop worker with many requests in flight waits for half of their
//! responses at once ([`crate::load::gather`]).

use super::codec::{Eof, Parsed, Response, ResponseParser};
use super::conn::{Conn, Handshake};
use super::pacer::Pacer;
use super::plan::{Assignment, Extra, Plan};
use super::sys;
use crate::load::gather::{self, Gather, ReplyGap, WaitError};
use crate::load::{ErrorKind, LoadResult};
use crate::shutdown::Shutdown;
use crate::units::Micros;
use mio::event::Event;
use mio::{Events, Poll, Token};
use std::io::{self, Read, Write};
use std::time::Duration;

const TIMER: Token = Token(usize::MAX);
/// How often timeouts and connect backoffs are checked.
const SWEEP_NS: u64 = 10_000_000;
/// Backoff after a failed connect: doubles from the first to the last.
const BACKOFF_MIN_NS: u64 = 10_000_000;
const BACKOFF_MAX_NS: u64 = 100_000_000;
/// Re-read the clock after this many events within one batch.
const EVENTS_PER_CLOCK_READ: usize = 8;
const READ_BUF: usize = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No socket: backing off after a failed connect, or done.
    Down,
    /// Connect started, nothing to send yet (open loop).
    Connecting,
    /// Connected; the TLS handshake is under way.
    Handshaking,
    /// Connected, nothing in flight.
    Idle,
    /// Request partly written (or waiting for the connect to finish).
    Writing,
    /// Request written; waiting for the response.
    Waiting,
}

struct Client {
    stream: Option<Conn>,
    phase: Phase,
    /// The connect has been seen to succeed.
    established: bool,
    parser: ResponseParser,
    /// Latency origin of the request in flight: send time (closed loop) or
    /// scheduled time (open loop).
    started_ns: u64,
    written: usize,
    sent_on_conn: u32,
    last_on_conn: bool,
    /// Open loop: when the next request is scheduled.
    due_ns: u64,
    connect_failures: u32,
    /// Bumped on every connect, so code that may have replaced the
    /// connection can tell.
    generation: u32,
}

/// Runs one worker to the end and returns what it measured.
pub fn run(plan: &Plan, job: Assignment, shutdown: &Shutdown) -> io::Result<(LoadResult, Extra)> {
    if let Some(cpus) = &job.cpus {
        sys::pin_current_thread(cpus)?;
    }
    let mut w = Worker::new(plan, job)?;
    w.run(shutdown);
    w.extra.gathered = w.gather.as_ref().map(|g| g.gathered);
    Ok((w.result, w.extra))
}

struct Worker<'a> {
    plan: &'a Plan,
    job: Assignment,
    poll: Poll,
    clients: Vec<Client>,
    /// Per client: timeout of the connect or request in flight, or end of
    /// a backoff. Kept apart so the sweep scans one dense array.
    expires: Vec<u64>,
    buf: Vec<u8>,
    result: LoadResult,
    extra: Extra,
    in_flight: u64,
    /// TLS: connections opened for a request that waits for their
    /// handshake, which the quota counts as in flight.
    opening: u64,
    now: u64,
    pacer: Option<Pacer>,
    /// Coalescing (closed loop): the ring that gathers responses, and the
    /// smoothed time between them.
    gather: Option<Gather>,
    gap: ReplyGap,
}

impl<'a> Worker<'a> {
    fn new(plan: &'a Plan, job: Assignment) -> io::Result<Self> {
        let poll = Poll::new()?;
        let n = job.connections as usize;
        let pacer = match job.open {
            Some(open) => Some(Pacer::new(poll.registry(), TIMER, open.interval_ns, n)?),
            None => None,
        };
        let clients = (0..job.connections)
            .map(|i| Client {
                stream: None,
                phase: Phase::Down,
                established: false,
                parser: ResponseParser::new(plan.head_request),
                started_ns: 0,
                written: 0,
                sent_on_conn: 0,
                last_on_conn: false,
                due_ns: job.open.map_or(0, |o| {
                    job.start_ns + (f64::from(job.first_client + i) * o.stagger_ns) as u64
                }),
                connect_failures: 0,
                generation: 0,
            })
            .collect();
        let mut result = LoadResult::new();
        let gather = (plan.coalesce && pacer.is_none())
            .then(|| Gather::for_run(n, &mut result.notes))
            .flatten();
        Ok(Worker {
            plan,
            poll,
            clients,
            expires: vec![u64::MAX; n],
            buf: vec![0; READ_BUF],
            result,
            extra: Extra::default(),
            in_flight: 0,
            opening: 0,
            now: job.start_ns,
            pacer,
            gather,
            gap: ReplyGap::default(),
            job,
        })
    }

    fn run(&mut self, shutdown: &Shutdown) {
        self.now = sys::now_ns();
        for i in 0..self.clients.len() {
            self.open(i);
        }
        let mut events = Events::with_capacity(1024);
        let mut next_sweep = self.now + SWEEP_NS;
        let stall_limit = (2 * self.plan.timeout_ns).max(5_000_000_000);
        let (mut last_count, mut last_progress) = (0, self.now);
        loop {
            if self.now >= self.job.deadline_ns || shutdown.is_triggered() || self.quota_done() {
                break;
            }
            if self.result.requests != last_count {
                (last_count, last_progress) = (self.result.requests, self.now);
            } else if self.job.deadline_ns == u64::MAX && self.now - last_progress > stall_limit {
                self.extra.stalled = true;
                break;
            }
            if self.now >= next_sweep {
                self.sweep();
                next_sweep = self.now + SWEEP_NS;
            }
            let wake = next_sweep.min(self.job.deadline_ns);
            let timeout = Duration::from_nanos(wake.saturating_sub(self.now));
            if let Err(e) = self.wait(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    // epoll_wait only fails on programming errors; stop
                    // rather than spin.
                    break;
                }
            }
            self.now = sys::now_ns();
            for (n, ev) in events.iter().enumerate() {
                if n > 0 && n % EVENTS_PER_CLOCK_READ == 0 {
                    self.now = sys::now_ns();
                }
                self.on_event(ev);
            }
            if self.pacer.is_some() {
                self.now = sys::now_ns();
                self.send_due();
            }
        }
        self.result.elapsed = Duration::from_nanos(self.now.saturating_sub(self.job.start_ns));
    }

    /// Waits up to `timeout` for events; when coalescing, first for half of
    /// the responses in flight (see [`Gather::turn`]). A ring that fails is
    /// dropped with a note, and the run goes on without it.
    fn wait(&mut self, events: &mut Events, timeout: Duration) -> io::Result<()> {
        match self.coalesced_poll(events, timeout) {
            Ok(()) => Ok(()),
            Err(WaitError::Poll(e)) => Err(e),
            Err(WaitError::Ring(e)) => {
                gather::give_up(&mut self.gather, &mut self.result.notes, &e);
                self.poll.poll(events, Some(timeout))
            }
        }
    }

    /// Polls as usual, or coalesces when the worker has a ring.
    fn coalesced_poll(&mut self, events: &mut Events, timeout: Duration) -> Result<(), WaitError> {
        let Some(g) = self.gather.as_mut() else {
            return self
                .poll
                .poll(events, Some(timeout))
                .map_err(WaitError::Poll);
        };
        for (i, c) in self.clients.iter().enumerate() {
            if let (Phase::Waiting, Some(s)) = (c.phase, &c.stream) {
                use std::os::fd::AsRawFd;
                let fd = s.as_raw_fd();
                g.watch(i, fd, (u64::from(c.generation) << 32) | fd as u64)
                    .map_err(WaitError::Ring)?;
            }
        }
        let poll = &mut self.poll;
        g.turn(&self.gap, self.in_flight as usize, timeout, |t| {
            poll.poll(events, Some(t))?;
            Ok(!events.is_empty())
        })?;
        self.gap
            .add(events.iter().count(), std::time::Instant::now());
        Ok(())
    }

    fn quota_done(&self) -> bool {
        self.job.quota.is_some_and(|q| self.result.requests >= q)
    }

    /// Whether another request may start without overshooting the quota.
    fn may_send(&self) -> bool {
        self.job.quota.map_or(true, |q| {
            self.result.requests + self.in_flight + self.opening < q
        })
    }

    fn on_event(&mut self, ev: &Event) {
        let token = ev.token();
        if token == TIMER {
            return; // Due requests are sent after the batch.
        }
        let i = token.0;
        match self.clients[i].phase {
            Phase::Down => {}
            Phase::Connecting => {
                if ev.is_error() || ev.is_read_closed() {
                    self.fail(i, ErrorKind::Connect);
                } else if ev.is_writable() {
                    self.handshake(i);
                }
            }
            Phase::Handshaking => {
                if ev.is_error() {
                    self.fail(i, ErrorKind::Connect);
                } else {
                    self.handshake(i);
                }
            }
            Phase::Writing => {
                let generation = self.clients[i].generation;
                if ev.is_error() {
                    self.fail_io(i, ErrorKind::Write);
                    return;
                }
                if ev.is_writable() {
                    self.write(i);
                }
                // A server may answer before the request is fully written.
                let c = &self.clients[i];
                if ev.is_readable() && c.generation == generation && c.phase != Phase::Down {
                    self.read(i, ev.is_read_closed());
                }
            }
            Phase::Idle | Phase::Waiting => {
                if ev.is_writable() {
                    self.flush(i);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(i, ev.is_read_closed());
                }
            }
        }
    }

    /// Starts a connection for client `i`; in closed loop the first request
    /// is written at once (on loopback the connect has usually completed).
    fn open(&mut self, i: usize) {
        if !self.may_send() {
            self.park(i);
            return;
        }
        let client_id = self.job.first_client + i as u32;
        let stream = self
            .plan
            .connect(&self.poll, i, client_id, self.plan.nodelay);
        match stream {
            Ok(s) => {
                let c = &mut self.clients[i];
                c.stream = Some(s);
                c.generation = c.generation.wrapping_add(1);
                c.phase = Phase::Connecting;
                c.established = false;
                c.sent_on_conn = 0;
                c.parser.reset();
                self.expires[i] = self.now + self.plan.timeout_ns;
                // With TLS the first request waits for the handshake.
                if self.plan.tls.is_some() {
                    self.opening += 1;
                } else if self.pacer.is_none() {
                    self.send(i);
                }
            }
            Err(e) => {
                match e.raw_os_error() {
                    Some(libc::EADDRNOTAVAIL) => self.extra.addr_not_avail += 1,
                    Some(libc::EMFILE | libc::ENFILE) => self.extra.fd_exhausted += 1,
                    _ => {}
                }
                self.fail(i, ErrorKind::Connect);
            }
        }
    }

    /// Moves client `i`'s TLS handshake on; once it is done (at once
    /// without TLS) the connection is ready for requests.
    fn handshake(&mut self, i: usize) {
        let Some(conn) = self.clients[i].stream.as_mut() else {
            return;
        };
        match conn.handshake() {
            Ok(Handshake::Pending) => self.clients[i].phase = Phase::Handshaking,
            Ok(done) => {
                if self.plan.tls.is_some() {
                    self.extra.tls.count(done, || conn.negotiated());
                }
                self.connected(i);
            }
            Err(e) => {
                self.extra.tls.failed(&e);
                self.fail(i, ErrorKind::Connect);
            }
        }
    }

    /// Sends the TLS records a full socket held back.
    fn flush(&mut self, i: usize) {
        let Some(conn) = self.clients[i].stream.as_mut() else {
            return;
        };
        if conn.wants_write() && conn.flush().is_err() {
            self.fail_io(i, ErrorKind::Write);
        }
    }

    fn connected(&mut self, i: usize) {
        self.done_opening(i);
        self.mark_established(i);
        self.clients[i].phase = Phase::Idle;
        self.expires[i] = u64::MAX;
        self.ready(i);
    }

    fn mark_established(&mut self, i: usize) {
        let c = &mut self.clients[i];
        if !c.established {
            c.established = true;
            c.connect_failures = 0;
            self.result.connections_opened += 1;
        }
    }

    /// An idle, connected client: send now (closed loop, or open loop when
    /// its slot has come) or queue it for its slot.
    fn ready(&mut self, i: usize) {
        let due = self.clients[i].due_ns;
        match &mut self.pacer {
            Some(p) if due > self.now => p.schedule(due, i as u32, self.now),
            _ => self.send(i),
        }
    }

    /// Sends the open-loop requests whose slots have come.
    fn send_due(&mut self) {
        while let Some((due, i)) = self.pacer.as_mut().and_then(|p| p.pop_due(self.now)) {
            // Entries of replaced or already-sent connections are stale.
            let c = &self.clients[i as usize];
            if c.phase == Phase::Idle && c.due_ns == due {
                self.send(i as usize);
            }
        }
    }

    fn send(&mut self, i: usize) {
        if !self.may_send() {
            let c = &mut self.clients[i];
            if c.phase != Phase::Connecting {
                c.phase = Phase::Idle;
            }
            return;
        }
        let k = self.plan.requests_per_connection;
        let interval = self.pacer.as_ref().map(|p| p.interval_ns);
        let c = &mut self.clients[i];
        c.last_on_conn = k.is_some_and(|k| c.sent_on_conn + 1 >= k);
        c.started_ns = match interval {
            Some(step) => {
                let due = c.due_ns;
                c.due_ns += step;
                let lag_ns = self.now.saturating_sub(due);
                self.result.record_lag(Micros(lag_ns / 1000));
                due
            }
            None => self.now,
        };
        c.written = 0;
        c.phase = Phase::Writing;
        self.expires[i] = self.now + self.plan.timeout_ns;
        self.in_flight += 1;
        self.write(i);
    }

    fn write(&mut self, i: usize) {
        let plan = self.plan;
        let c = &mut self.clients[i];
        let req = if c.last_on_conn {
            &plan.last_request
        } else {
            &plan.request
        };
        let Some(stream) = c.stream.as_mut() else {
            return;
        };
        if c.written == 0 && self.pacer.is_none() {
            // Closed loop measures from the first byte written, as wrk does:
            // the wait for a connect to finish is not the request's latency.
            c.started_ns = self.now;
        }
        loop {
            match stream.write(&req[c.written..]) {
                Ok(n) => {
                    c.written += n;
                    if c.written == req.len() {
                        c.phase = Phase::Waiting;
                        c.sent_on_conn += 1;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail_io(i, ErrorKind::Write);
                    return;
                }
            }
        }
        if c.written > 0 {
            // Bytes went out, so the connect has succeeded.
            self.mark_established(i);
        }
    }

    /// Reads until a short read, `WouldBlock` or end of stream.
    fn read(&mut self, i: usize, peer_closed: bool) {
        let generation = self.clients[i].generation;
        let mut buf = std::mem::take(&mut self.buf);
        let mut eof = false;
        while let Some(stream) = self.clients[i].stream.as_mut() {
            match stream.read(&mut buf) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => {
                    self.result.bytes.0 += n as u64;
                    let drained = n < buf.len() && stream.short_read_drains();
                    if !self.consume(i, &buf[..n], peer_closed) || drained {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.lost(i);
                    break;
                }
            }
        }
        self.buf = buf;
        let c = &self.clients[i];
        let same = c.generation == generation && c.stream.is_some();
        if same && (eof || peer_closed) {
            self.end_of_stream(i);
        }
    }

    /// Parses `data`; returns false once the connection has been replaced
    /// (the rest of `data` then belongs to a closed connection).
    fn consume(&mut self, i: usize, mut data: &[u8], peer_closed: bool) -> bool {
        while !data.is_empty() {
            match self.clients[i].parser.parse(data) {
                Ok(Parsed::Incomplete) => return true,
                Ok(Parsed::Complete { response, consumed }) => {
                    data = &data[consumed..];
                    if !self.completed(i, response, peer_closed) {
                        return false;
                    }
                }
                Err(_) => {
                    self.fail(i, ErrorKind::Protocol);
                    return false;
                }
            }
        }
        true
    }

    /// A response arrived: record it, then send the next request on the
    /// same connection or retire it. Returns false if the connection was
    /// replaced.
    fn completed(&mut self, i: usize, r: Response, peer_closed: bool) -> bool {
        let c = &mut self.clients[i];
        let generation = c.generation;
        if !matches!(c.phase, Phase::Waiting | Phase::Writing) {
            // A response nobody asked for.
            self.fail(i, ErrorKind::Protocol);
            return false;
        }
        let latency = self.now.saturating_sub(c.started_ns) / 1000;
        let since_start = Duration::from_nanos(self.now.saturating_sub(self.job.start_ns));
        self.result.record(Micros(latency), since_start);
        if !(200..300).contains(&r.status) {
            self.result.errors.add(ErrorKind::Status);
        }
        self.in_flight -= 1;
        self.expires[i] = u64::MAX;
        // A connection whose request is still half-written cannot carry
        // another one.
        let half_written = c.phase == Phase::Writing;
        c.phase = Phase::Idle;
        if r.close || peer_closed || c.last_on_conn || half_written {
            self.retire(i, peer_closed);
            return false;
        }
        self.ready(i);
        let c = &self.clients[i];
        c.generation == generation && c.stream.is_some()
    }

    /// The peer closed its side.
    fn end_of_stream(&mut self, i: usize) {
        match self.clients[i].parser.eof() {
            Eof::Complete(r) => {
                // With `peer_closed` set this retires the connection.
                self.completed(i, r, true);
            }
            Eof::Truncated => self.fail(i, ErrorKind::Read),
            Eof::Clean => self.lost(i),
        }
    }

    /// The connection ended (reset or closed) outside a response: an error
    /// if a request was outstanding, else the server merely closed an idle
    /// keep-alive connection.
    fn lost(&mut self, i: usize) {
        let c = &self.clients[i];
        if matches!(c.phase, Phase::Writing | Phase::Waiting) || c.parser.in_progress() {
            self.fail_io(i, ErrorKind::Read);
        } else {
            self.retire(i, true);
        }
    }

    /// Closes a connection that finished cleanly and opens its successor.
    ///
    /// The last request on a connection carries `Connection: close`, so the
    /// server closes first and TIME_WAIT lands on its side; on loopback the
    /// client's port is then free at once. Against nginx the server's FIN
    /// had nearly always arrived by the time the response was read (a 2 s
    /// `--connreqs 1` run: about 9.4k server-side TIME_WAIT sockets, 4 on
    /// the client side), so the client does not wait for it.
    fn retire(&mut self, i: usize, peer_closed: bool) {
        if peer_closed {
            self.extra.server_closed_first += 1;
        } else {
            self.extra.client_closed_first += 1;
        }
        self.close(i);
        self.open(i);
    }

    /// An I/O error on an established connection counts as `kind`; before
    /// the connect was seen to succeed it is a connect error.
    fn fail_io(&mut self, i: usize, kind: ErrorKind) {
        let kind = if self.clients[i].established {
            kind
        } else {
            ErrorKind::Connect
        };
        self.fail(i, kind);
    }

    /// Counts `kind`, drops the connection, and replaces it (after a
    /// backoff if the connect failed, so a dead server costs no CPU).
    fn fail(&mut self, i: usize, kind: ErrorKind) {
        self.result.errors.add(kind);
        self.close(i);
        if kind == ErrorKind::Connect {
            let c = &mut self.clients[i];
            let backoff = (BACKOFF_MIN_NS << c.connect_failures.min(8)).min(BACKOFF_MAX_NS);
            c.connect_failures += 1;
            c.phase = Phase::Down;
            self.expires[i] = self.now + backoff;
        } else {
            self.open(i);
        }
    }

    /// A TLS connection that was opening is open, or gone.
    fn done_opening(&mut self, i: usize) {
        let c = &self.clients[i];
        if self.plan.tls.is_some() && matches!(c.phase, Phase::Connecting | Phase::Handshaking) {
            self.opening -= 1;
        }
    }

    /// Closes client `i`'s socket; an outstanding request is abandoned.
    fn close(&mut self, i: usize) {
        self.done_opening(i);
        let c = &mut self.clients[i];
        if matches!(c.phase, Phase::Writing | Phase::Waiting) {
            self.in_flight -= 1;
        }
        let stream = c.stream.take();
        c.parser.reset();
        if let (Some(g), Some(mut s)) = (self.gather.as_mut(), stream) {
            // The ring's poll holds the socket open, and in the epoll set
            // under this token, until the cancel has run: leave epoll now,
            // so the next connection on the token never sees its events.
            let _ = self.poll.registry().deregister(s.socket());
            drop(s);
            if let Err(e) = g.forget(i).and_then(|()| g.flush()) {
                gather::give_up(&mut self.gather, &mut self.result.notes, &e);
            }
        }
        self.park(i);
    }

    fn park(&mut self, i: usize) {
        self.clients[i].phase = Phase::Down;
        self.expires[i] = u64::MAX;
    }

    /// Times out connects and requests, and ends connect backoffs.
    fn sweep(&mut self) {
        for i in 0..self.clients.len() {
            if self.expires[i] > self.now {
                continue;
            }
            match self.clients[i].phase {
                Phase::Down => self.open(i),
                Phase::Connecting | Phase::Handshaking => self.fail(i, ErrorKind::Connect),
                Phase::Writing | Phase::Waiting => self.fail_io(i, ErrorKind::Timeout),
                Phase::Idle => self.expires[i] = u64::MAX,
            }
        }
    }
}
