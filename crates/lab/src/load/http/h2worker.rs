//! One HTTP/2 load thread: a mio event loop over its share of the
//! connections, each carrying up to `streams` requests at once (h2load's
//! `-m`), closed loop: a finished stream is replaced by a new one on the
//! same connection. Over TLS (ALPN `h2`) or cleartext with prior knowledge
//! (`h2c`). The frames are [`super::h2frame`]'s; each read's responses are
//! answered with one write of all the requests that replace them.

use super::conn::{Conn, Handshake};
use super::h2frame::{self, Frame, FrameReader};
use super::plan::{Assignment, Extra, H2Plan, Plan};
use super::sys;
use crate::load::{ErrorKind, LoadResult};
use crate::shutdown::Shutdown;
use crate::units::Micros;
use mio::event::Event;
use mio::{Events, Poll};
use std::io::{self, Read, Write};
use std::time::Duration;

const SWEEP_NS: u64 = 10_000_000;
/// Wait after a failed connect before the next.
const BACKOFF_NS: u64 = 50_000_000;
const READ_BUF: usize = 64 * 1024;
/// The last stream id a connection opens before it is replaced.
const LAST_STREAM_ID: u32 = h2frame::MAX_WINDOW - 2;
/// The connection's window is topped up once this much DATA arrived.
const WINDOW_TOP_UP: u64 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Down,
    Connecting,
    Handshaking,
    Open,
}

struct Stream {
    id: u32,
    started_ns: u64,
    status: Option<u16>,
}

struct H2Conn {
    conn: Option<Conn>,
    phase: Phase,
    reader: FrameReader,
    decoder: httlib_hpack::Decoder<'static>,
    out: Vec<u8>,
    out_at: usize,
    next_id: u32,
    streams: Vec<Stream>,
    /// The most streams in flight: asked for, or the server's limit.
    max_streams: u32,
    /// The server said GOAWAY: no new streams, replaced once drained.
    going_away: bool,
    data_since_update: u64,
    /// When the connect began, or when a backoff ends.
    at_ns: u64,
}

impl H2Conn {
    fn new(streams: u32) -> H2Conn {
        H2Conn {
            conn: None,
            phase: Phase::Down,
            reader: FrameReader::default(),
            decoder: httlib_hpack::Decoder::default(),
            out: Vec::new(),
            out_at: 0,
            next_id: 1,
            streams: Vec::new(),
            max_streams: streams,
            going_away: false,
            data_since_update: 0,
            at_ns: 0,
        }
    }
}

/// Runs one worker to the end and returns what it measured.
pub fn run(
    plan: &Plan,
    h2: &H2Plan,
    job: Assignment,
    shutdown: &Shutdown,
) -> io::Result<(LoadResult, Extra)> {
    if let Some(cpus) = &job.cpus {
        sys::pin_current_thread(cpus)?;
    }
    let conns = (0..job.connections)
        .map(|_| H2Conn::new(h2.streams))
        .collect();
    let mut w = H2Worker {
        plan,
        h2,
        poll: Poll::new()?,
        conns,
        buf: vec![0; READ_BUF],
        result: LoadResult::new(),
        extra: Extra::default(),
        in_flight: 0,
        now: job.start_ns,
        job,
    };
    w.run(shutdown);
    Ok((w.result, w.extra))
}

struct H2Worker<'a> {
    plan: &'a Plan,
    h2: &'a H2Plan,
    job: Assignment,
    poll: Poll,
    conns: Vec<H2Conn>,
    buf: Vec<u8>,
    result: LoadResult,
    extra: Extra,
    in_flight: u64,
    now: u64,
}

impl H2Worker<'_> {
    fn run(&mut self, shutdown: &Shutdown) {
        self.now = sys::now_ns();
        for i in 0..self.conns.len() {
            self.open(i);
        }
        let mut events = Events::with_capacity(1024);
        let mut next_sweep = self.now + SWEEP_NS;
        loop {
            let quota_done = self.job.quota.is_some_and(|q| self.result.requests >= q);
            if self.now >= self.job.deadline_ns || shutdown.is_triggered() || quota_done {
                break;
            }
            if self.now >= next_sweep {
                self.sweep();
                next_sweep = self.now + SWEEP_NS;
            }
            let wake = next_sweep.min(self.job.deadline_ns);
            let timeout = Duration::from_nanos(wake.saturating_sub(self.now));
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    break;
                }
            }
            self.now = sys::now_ns();
            for ev in events.iter() {
                self.on_event(ev);
            }
        }
        self.result.elapsed = Duration::from_nanos(self.now.saturating_sub(self.job.start_ns));
    }

    fn may_send(&self) -> bool {
        self.job
            .quota
            .map_or(true, |q| self.result.requests + self.in_flight < q)
    }

    fn on_event(&mut self, ev: &Event) {
        let i = ev.token().0;
        match self.conns[i].phase {
            Phase::Down => {}
            Phase::Connecting if ev.is_error() || ev.is_read_closed() => self.fail_connect(i),
            Phase::Connecting if ev.is_writable() => self.handshake(i),
            Phase::Connecting => {}
            Phase::Handshaking if ev.is_error() => self.fail_connect(i),
            Phase::Handshaking => self.handshake(i),
            Phase::Open => {
                if ev.is_writable() {
                    self.flush(i);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.read(i);
                }
            }
        }
    }

    fn open(&mut self, i: usize) {
        let c = &mut self.conns[i];
        *c = H2Conn::new(self.h2.streams);
        if !self.may_send() {
            return;
        }
        let client_id = self.job.first_client + i as u32;
        let conn = self.plan.connect(&self.poll, i, client_id, true);
        let c = &mut self.conns[i];
        c.at_ns = self.now;
        match conn {
            Ok(s) => {
                c.conn = Some(s);
                c.phase = Phase::Connecting;
            }
            Err(_) => self.fail_connect(i),
        }
    }

    /// Moves the TLS handshake on (none in cleartext); once done, checks
    /// ALPN chose `h2` and starts the connection.
    fn handshake(&mut self, i: usize) {
        let Some(conn) = self.conns[i].conn.as_mut() else {
            return;
        };
        match conn.handshake() {
            Ok(Handshake::Pending) => self.conns[i].phase = Phase::Handshaking,
            Ok(done) => {
                if self.plan.tls.is_some() {
                    let negotiated = conn.negotiated();
                    if negotiated.as_ref().and_then(|n| n.alpn.as_deref()) != Some("h2") {
                        let chose = negotiated.and_then(|n| n.alpn).unwrap_or("none".into());
                        self.extra.tls.refused(&format!(
                            "the server chose ALPN {chose}, not h2: it does not serve HTTP/2 here"
                        ));
                        self.fail_connect(i);
                        return;
                    }
                    self.extra.tls.count(done, || negotiated);
                }
                self.start(i);
            }
            Err(e) => {
                self.extra.tls.failed(&e);
                self.fail_connect(i);
            }
        }
    }

    fn start(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.phase = Phase::Open;
        h2frame::client_start(&mut c.out);
        self.result.connections_opened += 1;
        self.fill(i);
        self.flush(i);
    }

    /// Opens streams up to the connection's limit.
    fn fill(&mut self, i: usize) {
        while self.may_send() {
            let c = &mut self.conns[i];
            let full = c.streams.len() as u32 >= c.max_streams;
            if full || c.going_away || c.phase != Phase::Open || c.next_id > LAST_STREAM_ID {
                break;
            }
            h2frame::request(&mut c.out, c.next_id, &self.h2.block);
            c.streams.push(Stream {
                id: c.next_id,
                started_ns: self.now,
                status: None,
            });
            c.next_id += 2;
            self.in_flight += 1;
        }
    }

    fn flush(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let Some(conn) = c.conn.as_mut() else { return };
        while c.out_at < c.out.len() {
            match conn.write(&c.out[c.out_at..]) {
                Ok(n) => c.out_at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.lost(i, ErrorKind::Write),
            }
        }
        if c.out_at == c.out.len() {
            c.out.clear();
            c.out_at = 0;
        }
        if conn.wants_write() && conn.flush().is_err() {
            self.lost(i, ErrorKind::Write);
        }
    }

    fn read(&mut self, i: usize) {
        let mut buf = std::mem::take(&mut self.buf);
        let mut ended = None;
        let c = &mut self.conns[i];
        while let Some(conn) = c.conn.as_mut() {
            match conn.read(&mut buf) {
                Ok(0) => {
                    ended = Some(ErrorKind::Read);
                    break;
                }
                Ok(n) => {
                    self.result.bytes.0 += n as u64;
                    let drained = n < buf.len() && conn.short_read_drains();
                    c.reader.feed(&buf[..n]);
                    if drained {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    ended = Some(ErrorKind::Read);
                    break;
                }
            }
        }
        self.buf = buf;
        if let Err(kind) = self.frames(i) {
            return self.lost(i, kind);
        }
        if let Some(kind) = ended {
            return self.lost(i, kind);
        }
        let c = &self.conns[i];
        if c.going_away && c.streams.is_empty() {
            self.close(i);
            return self.open(i);
        }
        self.fill(i);
        self.flush(i);
    }

    /// Handles every whole frame read; a protocol error ends the
    /// connection.
    fn frames(&mut self, i: usize) -> Result<(), ErrorKind> {
        loop {
            let frame = match self.conns[i].reader.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => return Ok(()),
                Err(_) => return Err(ErrorKind::Protocol),
            };
            let c = &mut self.conns[i];
            match frame {
                Frame::Settings {
                    ack: false,
                    max_streams,
                } => {
                    h2frame::settings_ack(&mut c.out);
                    if let Some(m) = max_streams {
                        c.max_streams = self.h2.streams.min(m);
                        if m < self.h2.streams {
                            self.extra.h2_server_limit = Some(m);
                        }
                    }
                }
                Frame::Headers {
                    stream,
                    end_stream,
                    block,
                } => {
                    let status =
                        h2frame::status(&mut c.decoder, &block).map_err(|_| ErrorKind::Protocol)?;
                    if let Some(s) = c.streams.iter_mut().find(|s| s.id == stream) {
                        if status.is_some_and(|v| v >= 200) {
                            s.status = status;
                        }
                    }
                    if end_stream {
                        self.complete(i, stream);
                    }
                }
                Frame::Data {
                    stream,
                    len,
                    end_stream,
                } => {
                    c.data_since_update += len as u64;
                    if c.data_since_update >= WINDOW_TOP_UP {
                        h2frame::window_update(&mut c.out, 0, c.data_since_update as u32);
                        c.data_since_update = 0;
                    }
                    if end_stream {
                        self.complete(i, stream);
                    }
                }
                Frame::RstStream { stream, .. } => {
                    if self.forget(i, stream) {
                        self.result.errors.add(ErrorKind::Protocol);
                    }
                }
                Frame::GoAway { last_stream, .. } => {
                    c.going_away = true;
                    // Streams above `last_stream` were never processed:
                    // dropped, to be asked again on the next connection.
                    let dropped = c.streams.iter().filter(|s| s.id > last_stream).count() as u64;
                    c.streams.retain(|s| s.id <= last_stream);
                    self.in_flight -= dropped;
                }
                Frame::Ping { payload } => h2frame::ping_ack(&mut c.out, payload),
                Frame::Settings { ack: true, .. } | Frame::WindowUpdate { .. } | Frame::Other => {}
            }
        }
    }

    /// Removes `stream`; whether it was in flight.
    fn forget(&mut self, i: usize, stream: u32) -> bool {
        let c = &mut self.conns[i];
        let Some(at) = c.streams.iter().position(|s| s.id == stream) else {
            return false;
        };
        c.streams.swap_remove(at);
        self.in_flight -= 1;
        true
    }

    fn complete(&mut self, i: usize, stream: u32) {
        let c = &mut self.conns[i];
        let Some(at) = c.streams.iter().position(|s| s.id == stream) else {
            return;
        };
        let s = c.streams.swap_remove(at);
        self.in_flight -= 1;
        let latency = self.now.saturating_sub(s.started_ns) / 1000;
        let since_start = Duration::from_nanos(self.now.saturating_sub(self.job.start_ns));
        self.result.record(Micros(latency), since_start);
        if !s.status.is_some_and(|v| (200..300).contains(&v)) {
            self.result.errors.add(ErrorKind::Status);
        }
    }

    /// The connection ended with streams in flight: each is an error of
    /// `kind`; a new connection replaces it.
    fn lost(&mut self, i: usize, kind: ErrorKind) {
        let n = self.conns[i].streams.len();
        for _ in 0..n {
            self.result.errors.add(kind);
        }
        self.close(i);
        self.open(i);
    }

    fn fail_connect(&mut self, i: usize) {
        self.result.errors.add(ErrorKind::Connect);
        self.close(i);
        let c = &mut self.conns[i];
        c.phase = Phase::Down;
        c.at_ns = self.now + BACKOFF_NS;
    }

    fn close(&mut self, i: usize) {
        let c = &mut self.conns[i];
        self.in_flight -= c.streams.len() as u64;
        c.streams.clear();
        if let Some(mut conn) = c.conn.take() {
            let _ = self.poll.registry().deregister(conn.socket());
        }
        c.phase = Phase::Down;
    }

    /// Times out streams and connects, and ends backoffs.
    fn sweep(&mut self) {
        let timeout = self.plan.timeout_ns;
        for i in 0..self.conns.len() {
            let may_send = self.may_send();
            let c = &mut self.conns[i];
            match c.phase {
                Phase::Down if c.at_ns <= self.now && may_send => self.open(i),
                Phase::Connecting | Phase::Handshaking if self.now - c.at_ns > timeout => {
                    self.fail_connect(i)
                }
                Phase::Open => {
                    let late: Vec<u32> = (c.streams.iter())
                        .filter(|s| self.now - s.started_ns > timeout)
                        .map(|s| s.id)
                        .collect();
                    for id in &late {
                        h2frame::rst_stream(&mut self.conns[i].out, *id, h2frame::CANCEL);
                        self.forget(i, *id);
                        self.result.errors.add(ErrorKind::Timeout);
                    }
                    if !late.is_empty() {
                        self.fill(i);
                        self.flush(i);
                    }
                }
                _ => {}
            }
        }
    }
}
