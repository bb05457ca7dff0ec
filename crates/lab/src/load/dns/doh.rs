//! DNS over HTTPS (RFC 8484): HTTP/2 (RFC 9113) inside TLS with ALPN
//! `h2`, one connection per flight, each query its own stream and many
//! streams in flight on a connection (up to the server's
//! `SETTINGS_MAX_CONCURRENT_STREAMS`; queries past it wait their turn).
//!
//! - POST (the default, as dnsperf's): the query is the body, typed
//!   `application/dns-message`, within the server's flow-control window.
//! - GET: the query in the path's `dns=` parameter, base64url without
//!   padding (RFC 8484 §4.1).
//!
//! The answer is the response's body. The query keeps its ID, which RFC
//! 8484 §4.1 allows (it asks for 0 only for HTTP caches), so answers are
//! matched by ID as over UDP. A response other than 200, or a stream the
//! server resets, carries no answer: it is counted in the run's note and
//! its query times out. The frames are the HTTP load's
//! [`crate::load::http::h2frame`], so both speak one HTTP/2.

use super::sys::{Batch, BATCH, BUF_LEN};
use super::tcp::{Conn, DnsTls};
use super::transport::{StreamCounts, Transport};
use crate::load::http::h2frame::{self, Frame, FrameReader};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// How a DoH query travels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DohMethod {
    /// The query as the request's body.
    #[default]
    Post,
    /// The query in the URL (`?dns=`, base64url).
    Get,
}

impl DohMethod {
    /// The method `--doh-method` names (dnsperf's `-O doh-method=`, in
    /// either case).
    pub fn parse(text: &str) -> Result<DohMethod, String> {
        match text.to_ascii_lowercase().as_str() {
            "post" => Ok(DohMethod::Post),
            "get" => Ok(DohMethod::Get),
            _ => Err(format!("unknown DoH method `{text}`; use post or get")),
        }
    }
}

/// What every DoH connection of a run shares.
#[derive(Clone)]
pub(super) struct DohPlan {
    /// TLS with ALPN `h2`.
    pub tls: DnsTls,
    pub method: DohMethod,
    /// The request's `:authority` (the server's address and port).
    pub authority: String,
    /// The path of the DoH endpoint, `/dns-query` by default.
    pub path: String,
}

/// The last stream ID a connection opens before it is opened again.
const LAST_STREAM_ID: u32 = h2frame::MAX_WINDOW - 2;
/// The connection's receive window is topped up once this much arrived.
const WINDOW_TOP_UP: u64 = 1 << 30;
/// RFC 9113 §6.9.2: a connection's send window before the server grows it.
const FIRST_SEND_WINDOW: i64 = h2frame::DEFAULT_WINDOW as i64;
/// The concurrent streams assumed until the server's SETTINGS say (RFC
/// 9113 §6.5.2 leaves it unlimited; Unbound's default is 100).
const FIRST_MAX_STREAMS: u32 = 100;

/// One connection and its streams.
struct Flight {
    conn: Conn,
    reader: FrameReader,
    decoder: httlib_hpack::Decoder<'static>,
    /// Bytes read, handed to `reader`.
    scratch: Vec<u8>,
    next_id: u32,
    /// Streams open: sent and not yet ended by the server.
    open: u32,
    max_streams: u32,
    /// The connection's send window (POST bodies count against it).
    send_window: i64,
    data_since_update: u64,
    /// Queries waiting for a stream, or for window.
    queued: VecDeque<Vec<u8>>,
    /// Streams whose status was not 200: their bodies are not answers.
    refused: Vec<u32>,
    /// Bodies that came in more than one DATA frame, by stream.
    partial: Vec<(u32, Vec<u8>)>,
    /// The server said GOAWAY, or the IDs ran out: opened again once its
    /// streams are done.
    going_away: bool,
    /// Answers whole, waiting for `recv`, one after another in
    /// `ready_bytes`.
    ready: VecDeque<std::ops::Range<usize>>,
    ready_bytes: Vec<u8>,
}

impl Flight {
    fn open(server: SocketAddr, tls: &DnsTls) -> io::Result<Flight> {
        let mut conn = Conn::open(server, Some(tls))?;
        let alpn = conn.tls.as_ref().and_then(|t| t.alpn_protocol());
        if alpn != Some(b"h2".as_slice()) {
            return Err(io::Error::other(format!(
                "{server} offered no HTTP/2 (ALPN `h2`) in its TLS handshake, which DNS over \
                 HTTPS needs; serve DoH over HTTP/2 there (Unbound: `https-port` with \
                 libnghttp2), or ask for `--transport dot`"
            )));
        }
        h2frame::client_start(&mut conn.out);
        conn.flush()?;
        Ok(Flight {
            conn,
            reader: FrameReader::default(),
            decoder: httlib_hpack::Decoder::default(),
            scratch: Vec::with_capacity(64 * 1024),
            next_id: 1,
            open: 0,
            max_streams: FIRST_MAX_STREAMS,
            send_window: FIRST_SEND_WINDOW,
            data_since_update: 0,
            queued: VecDeque::new(),
            refused: Vec::new(),
            partial: Vec::new(),
            going_away: false,
            ready: VecDeque::new(),
            ready_bytes: Vec::with_capacity(64 * 1024),
        })
    }

    /// Whether a query of `len` bytes may open a stream now.
    fn may_send(&self, method: DohMethod, len: usize) -> bool {
        let window = method == DohMethod::Get || self.send_window >= len as i64;
        !self.going_away && self.open < self.max_streams && window
    }

    /// Opens a stream carrying `query`.
    fn send(&mut self, req: &Requests, query: &[u8]) {
        let id = self.next_id;
        self.next_id += 2;
        self.open += 1;
        match req.method {
            DohMethod::Post => {
                let mut block = req.post_block.clone();
                h2frame::literal(
                    &mut block,
                    "content-length",
                    query.len().to_string().as_bytes(),
                );
                h2frame::headers(&mut self.conn.out, id, &block, false);
                h2frame::data(&mut self.conn.out, id, query, true);
                self.send_window -= query.len() as i64;
            }
            DohMethod::Get => match req.get_block(query) {
                Ok(block) => h2frame::headers(&mut self.conn.out, id, &block, true),
                Err(_) => self.open -= 1,
            },
        }
        if self.next_id > LAST_STREAM_ID {
            self.going_away = true;
        }
    }

    /// Sends what was queued as far as streams and window allow.
    fn send_queued(&mut self, req: &Requests) {
        while let Some(q) = self.queued.front() {
            if !self.may_send(req.method, q.len()) {
                return;
            }
            let q = self.queued.pop_front().expect("a queued query");
            self.send(req, &q);
        }
    }

    /// Reads what arrived and handles its frames; `Ok(false)` once the
    /// server closed.
    fn read(&mut self, counts: &mut StreamCounts) -> io::Result<bool> {
        self.scratch.clear();
        let open = self.conn.fill(&mut self.scratch)?;
        self.reader.feed(&self.scratch);
        self.frames(counts)?;
        Ok(open)
    }

    fn frames(&mut self, counts: &mut StreamCounts) -> io::Result<()> {
        let bad = |e: h2frame::FrameError| io::Error::other(format!("DNS over HTTPS: {}", e.0));
        while let Some(frame) = self.reader.next_frame().map_err(bad)? {
            match frame {
                Frame::Settings {
                    ack: false,
                    max_streams,
                } => {
                    h2frame::settings_ack(&mut self.conn.out);
                    if let Some(m) = max_streams {
                        self.max_streams = m;
                    }
                }
                Frame::Headers {
                    stream,
                    end_stream,
                    block,
                } => {
                    let status = h2frame::status(&mut self.decoder, &block).map_err(bad)?;
                    if status.is_some_and(|s| s != 200) {
                        counts.not_ok += 1;
                        self.refused.push(stream);
                    }
                    if end_stream {
                        self.end(stream, false);
                    }
                }
                Frame::Data {
                    stream,
                    len,
                    end_stream,
                } => self.on_data(stream, len, end_stream),
                Frame::RstStream { stream, .. } => {
                    counts.reset += 1;
                    self.refused.push(stream);
                    self.end(stream, false);
                }
                Frame::GoAway { .. } => self.going_away = true,
                Frame::WindowUpdate { stream: 0, by } => self.send_window += i64::from(by),
                Frame::Ping { payload } => h2frame::ping_ack(&mut self.conn.out, payload),
                Frame::Settings { ack: true, .. } | Frame::WindowUpdate { .. } | Frame::Other => {}
            }
        }
        Ok(())
    }

    fn on_data(&mut self, stream: u32, len: usize, end_stream: bool) {
        self.data_since_update += len as u64;
        if self.data_since_update >= WINDOW_TOP_UP {
            h2frame::window_update(&mut self.conn.out, 0, self.data_since_update as u32);
            self.data_since_update = 0;
        }
        let payload = self.reader.payload();
        let at = self.partial.iter().position(|(s, _)| *s == stream);
        let whole = at.is_none() && end_stream;
        match at {
            Some(i) => self.partial[i].1.extend_from_slice(payload),
            None if !end_stream => self.partial.push((stream, payload.to_vec())),
            None => {
                let start = self.ready_bytes.len();
                self.ready_bytes.extend_from_slice(payload);
                self.ready.push_back(start..self.ready_bytes.len());
            }
        }
        if end_stream {
            self.end(stream, whole);
        }
    }

    /// The server ended `stream` (`made_ready`: its body, in one frame,
    /// is the last answer made ready): a body that came in parts is made
    /// whole, and dropped if its status was not 200.
    fn end(&mut self, stream: u32, mut made_ready: bool) {
        self.open = self.open.saturating_sub(1);
        if let Some(i) = self.partial.iter().position(|(s, _)| *s == stream) {
            let (_, body) = self.partial.swap_remove(i);
            let start = self.ready_bytes.len();
            self.ready_bytes.extend_from_slice(&body);
            self.ready.push_back(start..self.ready_bytes.len());
            made_ready = true;
        }
        if let Some(i) = self.refused.iter().position(|&s| s == stream) {
            self.refused.swap_remove(i);
            if let Some(r) = self.ready.back().filter(|_| made_ready) {
                self.ready_bytes.truncate(r.start);
                self.ready.pop_back();
            }
        }
    }

    /// The next answer made ready, copied into `dst` (at most `BUF_LEN`
    /// bytes); its length.
    fn next_answer(&mut self, dst: &mut [u8; BUF_LEN]) -> Option<usize> {
        let r = self.ready.pop_front()?;
        let answer = &self.ready_bytes[r];
        let n = answer.len().min(BUF_LEN);
        dst[..n].copy_from_slice(&answer[..n]);
        if self.ready.is_empty() {
            self.ready_bytes.clear();
        }
        Some(n)
    }
}

/// The request's header blocks, built once: POST's whole but for its
/// length, GET's start.
struct Requests {
    method: DohMethod,
    post_block: Vec<u8>,
    authority: String,
    path: String,
}

impl Requests {
    fn new(plan: &DohPlan) -> Result<Requests, String> {
        let typed = [
            ("content-type".to_string(), MESSAGE.to_string()),
            ("accept".to_string(), MESSAGE.to_string()),
        ];
        let post_block =
            h2frame::request_block("POST", "https", &plan.authority, &plan.path, &typed)?;
        Ok(Requests {
            method: plan.method,
            post_block,
            authority: plan.authority.clone(),
            path: plan.path.clone(),
        })
    }

    /// GET's block for `query`.
    fn get_block(&self, query: &[u8]) -> Result<Vec<u8>, String> {
        let path = format!("{}?dns={}", self.path, base64url(query));
        let accept = [("accept".to_string(), MESSAGE.to_string())];
        h2frame::request_block("GET", "https", &self.authority, &path, &accept)
    }
}

/// RFC 8484 §6's media type.
const MESSAGE: &str = "application/dns-message";

/// RFC 4648 §5's base64url, without padding (RFC 8484 §4.1).
fn base64url(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// DNS over HTTPS: a connection per flight; `None` while a flight's
/// connection is closed and could not be opened again.
pub(super) struct DohTransport {
    server: SocketAddr,
    plan: DohPlan,
    requests: Requests,
    flights: Vec<Option<Flight>>,
    cursor: usize,
    reconnects: u64,
    counts: StreamCounts,
}

impl DohTransport {
    /// Connects `flights` HTTP/2 connections to `server`.
    pub(super) fn open(server: SocketAddr, flights: usize, plan: DohPlan) -> io::Result<Self> {
        let said =
            |e: io::Error| io::Error::new(e.kind(), format!("DNS over HTTPS to {server}: {e}"));
        let requests = Requests::new(&plan)
            .map_err(io::Error::other)
            .map_err(said)?;
        let flights = (0..flights)
            .map(|_| Flight::open(server, &plan.tls).map(Some))
            .collect::<io::Result<Vec<_>>>()
            .map_err(said)?;
        Ok(DohTransport {
            server,
            plan,
            requests,
            flights,
            cursor: 0,
            reconnects: 0,
            counts: StreamCounts::default(),
        })
    }

    fn reopen(&mut self, f: usize) -> io::Result<()> {
        self.flights[f] = None;
        self.flights[f] = Some(Flight::open(self.server, &self.plan.tls)?);
        self.reconnects += 1;
        Ok(())
    }
}

impl Transport for DohTransport {
    fn send(&mut self, flight: usize, batch: &mut Batch, n: usize) -> io::Result<usize> {
        let done = self.flights[flight]
            .as_ref()
            .map_or(true, |f| f.going_away && f.open == 0);
        if done {
            self.reopen(flight)?;
        }
        let Some(f) = self.flights[flight].as_mut() else {
            return Ok(0);
        };
        for i in 0..n {
            let query = &batch.bufs[i][..batch.lens[i]];
            if f.queued.is_empty() && f.may_send(self.requests.method, query.len()) {
                f.send(&self.requests, query);
            } else {
                f.queued.push_back(query.to_vec());
            }
        }
        if f.conn.flush().is_err() {
            self.reopen(flight)?;
        }
        Ok(n)
    }

    fn recv(&mut self, batch: &mut Batch) -> io::Result<usize> {
        while self.cursor < self.flights.len() {
            let s = self.cursor;
            let Some(f) = self.flights[s].as_mut() else {
                self.cursor += 1;
                continue;
            };
            let open = f.read(&mut self.counts);
            f.send_queued(&self.requests);
            let open = open.and_then(|o| f.conn.flush().map(|()| o));
            let mut k = 0;
            while k < BATCH {
                let Some(len) = f.next_answer(&mut batch.bufs[k]) else {
                    break;
                };
                batch.lens[k] = len;
                batch.from[k] = s as u16;
                k += 1;
            }
            if k > 0 {
                if f.ready.is_empty() && matches!(open, Ok(true)) {
                    self.cursor += 1;
                }
                return Ok(k);
            }
            self.cursor += 1;
            if !matches!(open, Ok(true)) {
                self.reopen(s)?;
            }
        }
        self.cursor = 0;
        Ok(0)
    }

    fn wait(&self, timeout: Duration) {
        let open = || self.flights.iter().flatten();
        if open().any(|f| !f.ready.is_empty()) {
            return;
        }
        super::tcp::wait_any(open().map(|f| &f.conn), timeout);
    }

    fn drops(&self) -> u64 {
        0
    }

    fn negotiated(&self) -> Option<crate::tls::client::Negotiated> {
        super::tcp::first_negotiated(self.flights.iter().flatten().map(|f| &f.conn))
    }

    fn counts(&self) -> StreamCounts {
        StreamCounts {
            reconnects: self.reconnects,
            ..self.counts
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4648 §10's vectors, without their padding.
    #[test]
    fn base64url_is_rfc_4648s_without_padding() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64url(plain.as_bytes()), coded);
        }
        // The alphabet's last two are URL-safe (RFC 4648 §5).
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    /// RFC 8484 §4.1.1's example: the query for www.example.com, ID 0,
    /// is this `dns=` value.
    #[test]
    fn a_get_carries_rfc_8484s_example_query() {
        let query = [
            0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x77,
            0x77, 0x77, 0x07, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x03, 0x63, 0x6f, 0x6d,
            0x00, 0x00, 0x01, 0x00, 0x01,
        ];
        assert_eq!(
            base64url(&query),
            "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlA2NvbQAAAQAB"
        );
        assert_eq!(DohMethod::parse("GET"), Ok(DohMethod::Get));
        assert!(DohMethod::parse("PUT").unwrap_err().contains("post or get"));
    }
}
