//! HTTP/2 framing for a load generator (RFC 9113), sans-IO: the bytes a
//! client sends (the preface, SETTINGS, a request's HEADERS, WINDOW_UPDATE,
//! PING and RST_STREAM; DATA for DNS over HTTPS's POST) and a parser of
//! what a server sends, frame by frame, with HEADERS and their
//! CONTINUATIONs joined into one block.
//!
//! A request's header block is built once per run, with HPACK's literal
//! forms that leave the server's dynamic table alone (RFC 7541 §6.2.2), so
//! every request is the same bytes and the client keeps no encoder state.
//! The server's header blocks are decoded by `httlib-hpack`, whose table
//! lives as long as the connection.

/// The client's connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types.
pub mod kind {
    pub const DATA: u8 = 0;
    pub const HEADERS: u8 = 1;
    pub const RST_STREAM: u8 = 3;
    pub const SETTINGS: u8 = 4;
    pub const PUSH_PROMISE: u8 = 5;
    pub const PING: u8 = 6;
    pub const GOAWAY: u8 = 7;
    pub const WINDOW_UPDATE: u8 = 8;
    pub const CONTINUATION: u8 = 9;
}

const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;

/// SETTINGS identifiers.
const ENABLE_PUSH: u16 = 0x2;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;
const INITIAL_WINDOW_SIZE: u16 = 0x4;

/// The largest flow-control window.
pub const MAX_WINDOW: u32 = (1 << 31) - 1;
/// A connection's window before either side changes it.
pub const DEFAULT_WINDOW: u32 = 65_535;
/// The largest frame a peer must accept before SETTINGS say otherwise.
const DEFAULT_MAX_FRAME: usize = 16_384;

/// RST_STREAM's CANCEL.
pub const CANCEL: u32 = 0x8;

fn head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&(stream & MAX_WINDOW).to_be_bytes());
}

/// The preface, SETTINGS (no push, the largest stream window) and a
/// WINDOW_UPDATE that opens the connection's window as far, so a server
/// never waits on the client's flow control.
pub fn client_start(out: &mut Vec<u8>) {
    out.extend_from_slice(PREFACE);
    let settings = [(ENABLE_PUSH, 0), (INITIAL_WINDOW_SIZE, MAX_WINDOW)];
    head(out, 6 * settings.len(), kind::SETTINGS, 0, 0);
    for (id, v) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
    window_update(out, 0, MAX_WINDOW - DEFAULT_WINDOW);
}

/// SETTINGS with ACK.
pub fn settings_ack(out: &mut Vec<u8>) {
    head(out, 0, kind::SETTINGS, ACK, 0);
}

/// WINDOW_UPDATE of `stream` (0: the connection) by `by`.
pub fn window_update(out: &mut Vec<u8>, stream: u32, by: u32) {
    head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(by & MAX_WINDOW).to_be_bytes());
}

/// PING with ACK, echoing `payload`.
pub fn ping_ack(out: &mut Vec<u8>, payload: [u8; 8]) {
    head(out, 8, kind::PING, ACK, 0);
    out.extend_from_slice(&payload);
}

/// RST_STREAM of `stream` with `code`.
pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    head(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// A request: one HEADERS frame (END_STREAM, END_HEADERS) carrying
/// `block` on `stream`. A block over the default frame size is refused
/// when the request is built ([`request_block`]).
pub fn request(out: &mut Vec<u8>, stream: u32, block: &[u8]) {
    headers(out, stream, block, true);
}

/// One HEADERS frame (END_HEADERS) carrying `block` on `stream`, which it
/// ends when `end_stream` (a request without a body).
pub fn headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool) {
    let end = if end_stream { END_STREAM } else { 0 };
    head(out, block.len(), kind::HEADERS, end | END_HEADERS, stream);
    out.extend_from_slice(block);
}

/// One DATA frame carrying `payload` on `stream`, which it ends when
/// `end_stream`. The caller keeps within the peer's flow-control windows
/// and its largest frame (16,384 bytes unless its SETTINGS said more).
pub fn data(out: &mut Vec<u8>, stream: u32, payload: &[u8], end_stream: bool) {
    let end = if end_stream { END_STREAM } else { 0 };
    head(out, payload.len(), kind::DATA, end, stream);
    out.extend_from_slice(payload);
}

/// HPACK's integer with an `n`-bit prefix, the prefix's other bits `high`.
fn integer(out: &mut Vec<u8>, mut v: usize, n: u8, high: u8) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(high | v as u8);
        return;
    }
    out.push(high | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128 + 128) as u8);
        v /= 128;
    }
    out.push(v as u8);
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, s.len(), 7, 0);
    out.extend_from_slice(s);
}

/// A header field with a literal (lower-case) name, "without indexing"
/// (RFC 7541 §6.2.2), appended to a header block.
pub fn literal(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.push(0);
    string(out, name.as_bytes());
    string(out, value);
}

/// The header block of a request without a body: the pseudo-headers by
/// their static-table names (RFC 7541 Appendix A: `:authority` 1,
/// `:method` 2, `:path` 4, `:scheme` 6), then `headers` with literal
/// names (lower-cased, as HTTP/2 requires), every field "without
/// indexing".
pub fn request_block(
    method: &str,
    scheme: &str,
    authority: &str,
    path: &str,
    headers: &[(String, String)],
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (index, value) in [(2, method), (6, scheme), (4, path), (1, authority)] {
        integer(&mut out, index, 4, 0);
        string(&mut out, value.as_bytes());
    }
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "connection"
                | "keep-alive"
                | "proxy-connection"
                | "transfer-encoding"
                | "upgrade"
                | "host"
        ) {
            return Err(format!(
                "header `{name}` is not allowed in HTTP/2 (RFC 9113 §8.2.2; the authority is the URL's)"
            ));
        }
        literal(&mut out, &lower, value.as_bytes());
    }
    if out.len() > DEFAULT_MAX_FRAME {
        return Err(format!(
            "the request's headers take {} bytes, more than one HTTP/2 frame (16384)",
            out.len()
        ));
    }
    Ok(out)
}

/// What a server sent, one frame (HEADERS with its CONTINUATIONs) at a
/// time.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// The server's SETTINGS (its concurrent-stream limit, if it gave
    /// one), or an ACK of ours.
    Settings { ack: bool, max_streams: Option<u32> },
    /// A response's header block, whole.
    Headers {
        stream: u32,
        end_stream: bool,
        block: Vec<u8>,
    },
    /// Response body bytes (`len` counts toward flow control, padding
    /// included; [`FrameReader::payload`] has the bytes themselves).
    Data {
        stream: u32,
        len: usize,
        end_stream: bool,
    },
    /// A stream reset by the server, with its error code.
    RstStream { stream: u32, code: u32 },
    /// The server will take no stream above `last_stream`.
    GoAway { last_stream: u32, code: u32 },
    /// A PING to answer.
    Ping { payload: [u8; 8] },
    /// The server's flow-control window for `stream` (0: the connection)
    /// grew by `by`.
    WindowUpdate { stream: u32, by: u32 },
    /// Anything else (PRIORITY, a PING ACK, unknown types).
    Other,
}

/// Why a server's bytes are not HTTP/2.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameError(pub String);

/// Frames parsed from a growing buffer.
#[derive(Default)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// Where the next frame starts in `buf`: the frames before it are
    /// dropped at the next feed, once per read rather than per frame.
    at: usize,
    /// A HEADERS frame whose CONTINUATIONs are still to come.
    partial: Option<(u32, bool, Vec<u8>)>,
    /// The last DATA frame's payload, its padding left out, in `buf`.
    data: std::ops::Range<usize>,
}

impl FrameReader {
    /// Appends bytes read from the connection.
    pub fn feed(&mut self, data: &[u8]) {
        if self.at > 0 {
            self.buf.drain(..self.at);
            self.at = 0;
            self.data = 0..0;
        }
        self.buf.extend_from_slice(data);
    }

    /// The payload of the DATA frame [`FrameReader::next_frame`] returned
    /// last (until the next [`FrameReader::feed`]).
    pub fn payload(&self) -> &[u8] {
        self.buf.get(self.data.clone()).unwrap_or_default()
    }

    /// The next whole frame, `None` until one is there.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        loop {
            let b = &self.buf[self.at..];
            if b.len() < 9 {
                return Ok(None);
            }
            let len = usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]);
            if b.len() < 9 + len {
                return Ok(None);
            }
            let (kind, flags) = (b[3], b[4]);
            let stream = u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_WINDOW;
            let range = self.at + 9..self.at + 9 + len;
            self.at = range.end;
            if let Some(frame) = self.frame(kind, flags, stream, range)? {
                return Ok(Some(frame));
            }
        }
    }

    fn frame(
        &mut self,
        kind: u8,
        flags: u8,
        stream: u32,
        range: std::ops::Range<usize>,
    ) -> Result<Option<Frame>, FrameError> {
        let start = range.start;
        let p = &self.buf[range];
        let bad = |what: &str| Err(FrameError(what.to_string()));
        if self.partial.is_some() && kind != kind::CONTINUATION {
            return bad("a frame between HEADERS and its CONTINUATION");
        }
        let word = |p: &[u8], at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(p.get(at..at + 4)?.try_into().ok()?))
        };
        Ok(Some(match kind {
            kind::DATA => {
                let Some(body) = unpad(p, flags, false) else {
                    return bad("DATA with bad padding");
                };
                let skip = usize::from(flags & PADDED != 0);
                self.data = start + skip..start + skip + body.len();
                Frame::Data {
                    stream,
                    len: p.len(),
                    end_stream: flags & END_STREAM != 0,
                }
            }
            kind::HEADERS => {
                let Some(block) = unpad(p, flags, flags & PRIORITY != 0) else {
                    return bad("HEADERS with bad padding");
                };
                let end_stream = flags & END_STREAM != 0;
                if flags & END_HEADERS == 0 {
                    self.partial = Some((stream, end_stream, block.to_vec()));
                    return Ok(None);
                }
                Frame::Headers {
                    stream,
                    end_stream,
                    block: block.to_vec(),
                }
            }
            kind::CONTINUATION => {
                let Some((s, end_stream, mut block)) = self.partial.take() else {
                    return bad("CONTINUATION without HEADERS");
                };
                if s != stream {
                    return bad("CONTINUATION of another stream");
                }
                block.extend_from_slice(p);
                if flags & END_HEADERS == 0 {
                    self.partial = Some((s, end_stream, block));
                    return Ok(None);
                }
                Frame::Headers {
                    stream,
                    end_stream,
                    block,
                }
            }
            kind::SETTINGS => {
                if p.len() % 6 != 0 {
                    return bad("SETTINGS whose length is not a multiple of 6");
                }
                let max_streams = p.chunks(6).find_map(|c| {
                    (u16::from_be_bytes([c[0], c[1]]) == MAX_CONCURRENT_STREAMS)
                        .then(|| u32::from_be_bytes([c[2], c[3], c[4], c[5]]))
                });
                Frame::Settings {
                    ack: flags & ACK != 0,
                    max_streams,
                }
            }
            kind::RST_STREAM => Frame::RstStream {
                stream,
                code: word(p, 0).unwrap_or(0),
            },
            kind::GOAWAY => Frame::GoAway {
                last_stream: word(p, 0).unwrap_or(0) & MAX_WINDOW,
                code: word(p, 4).unwrap_or(0),
            },
            kind::WINDOW_UPDATE => Frame::WindowUpdate {
                stream,
                by: word(p, 0).unwrap_or(0) & MAX_WINDOW,
            },
            kind::PING if flags & ACK == 0 => match <[u8; 8]>::try_from(p) {
                Ok(payload) => Frame::Ping { payload },
                Err(_) => return bad("PING of other than 8 bytes"),
            },
            kind::PUSH_PROMISE => return bad("PUSH_PROMISE, which the client's SETTINGS refused"),
            _ => Frame::Other,
        }))
    }
}

/// A HEADERS payload without its padding and priority fields.
fn unpad(p: &[u8], flags: u8, priority: bool) -> Option<&[u8]> {
    let (pad, rest) = if flags & PADDED != 0 {
        (usize::from(*p.first()?), &p[1..])
    } else {
        (0, p)
    };
    let rest = if priority { rest.get(5..)? } else { rest };
    rest.get(..rest.len().checked_sub(pad)?)
}

/// The `:status` of a decoded header block.
pub fn status(
    decoder: &mut httlib_hpack::Decoder<'static>,
    block: &[u8],
) -> Result<Option<u16>, FrameError> {
    let mut buf = block.to_vec();
    let mut fields = Vec::new();
    decoder
        .decode(&mut buf, &mut fields)
        .map_err(|e| FrameError(format!("the server's header block does not decode: {e:?}")))?;
    Ok(fields.iter().find_map(|(name, value, _)| {
        (name == b":status")
            .then(|| std::str::from_utf8(value).ok()?.parse().ok())
            .flatten()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7541 C.1: 1337 with a 5-bit prefix is 31, 154, 10.
    #[test]
    fn integers_are_hpack_s() {
        let mut out = Vec::new();
        integer(&mut out, 1337, 5, 0);
        assert_eq!(out, [31, 154, 10]);
        out.clear();
        integer(&mut out, 10, 5, 0);
        assert_eq!(out, [10]);
    }

    /// The request block decodes, with httlib-hpack, to the request.
    #[test]
    fn a_request_block_decodes_to_its_headers() {
        let block = request_block(
            "GET",
            "https",
            "127.0.0.1:8443",
            "/x?y",
            &[("X-A".into(), "1".into())],
        )
        .unwrap();
        let mut d = httlib_hpack::Decoder::default();
        let (mut buf, mut headers) = (block.clone(), Vec::new());
        d.decode(&mut buf, &mut headers).unwrap();
        let text: Vec<(String, String)> = headers
            .into_iter()
            .map(|(n, v, _)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let want = [
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/x?y"),
            (":authority", "127.0.0.1:8443"),
            ("x-a", "1"),
        ];
        assert_eq!(text, want.map(|(n, v)| (n.to_string(), v.to_string())));
        let err = request_block(
            "GET",
            "http",
            "h",
            "/",
            &[("Connection".into(), "close".into())],
        )
        .unwrap_err();
        assert!(err.contains("not allowed in HTTP/2"), "{err}");
    }

    #[test]
    fn frames_are_read_whole_and_continuations_joined() {
        let mut out = Vec::new();
        head(&mut out, 6, kind::SETTINGS, 0, 0);
        out.extend_from_slice(&[0, 3, 0, 0, 0, 128]);
        head(&mut out, 3, kind::HEADERS, 0, 1);
        out.extend_from_slice(&[0x88, 1, 2]);
        head(&mut out, 1, kind::CONTINUATION, END_HEADERS, 1);
        out.push(3);
        head(&mut out, 5, kind::DATA, END_STREAM, 1);
        out.extend_from_slice(b"hello");
        let mut r = FrameReader::default();
        r.feed(&out[..10]);
        assert_eq!(r.next_frame(), Ok(None), "a frame in halves waits");
        r.feed(&out[10..]);
        assert_eq!(
            r.next_frame(),
            Ok(Some(Frame::Settings {
                ack: false,
                max_streams: Some(128)
            }))
        );
        assert_eq!(
            r.next_frame(),
            Ok(Some(Frame::Headers {
                stream: 1,
                end_stream: false,
                block: vec![0x88, 1, 2, 3]
            }))
        );
        assert_eq!(
            r.next_frame(),
            Ok(Some(Frame::Data {
                stream: 1,
                len: 5,
                end_stream: true
            }))
        );
        assert_eq!(r.next_frame(), Ok(None));
        let mut bad = Vec::new();
        head(&mut bad, 1, kind::CONTINUATION, END_HEADERS, 3);
        bad.push(0);
        let mut r = FrameReader::default();
        r.feed(&bad);
        assert!(r.next_frame().is_err());
    }

    /// A padded DATA frame's payload is its bytes without the padding
    /// (RFC 9113 §6.1); a WINDOW_UPDATE says its stream and increment.
    #[test]
    fn a_data_payload_leaves_its_padding_out() {
        let mut out = Vec::new();
        head(&mut out, 1 + 3 + 2, kind::DATA, PADDED | END_STREAM, 5);
        out.extend_from_slice(&[2, b'a', b'b', b'c', 0, 0]);
        window_update(&mut out, 0, 77);
        data(&mut out, 7, b"xyz!", false);
        let mut r = FrameReader::default();
        r.feed(&out);
        assert_eq!(
            r.next_frame(),
            Ok(Some(Frame::Data {
                stream: 5,
                len: 6,
                end_stream: true
            }))
        );
        assert_eq!(r.payload(), b"abc");
        assert_eq!(
            r.next_frame(),
            Ok(Some(Frame::WindowUpdate { stream: 0, by: 77 }))
        );
        assert!(matches!(
            r.next_frame(),
            Ok(Some(Frame::Data {
                stream: 7,
                len: 4,
                end_stream: false
            }))
        ));
        assert_eq!(r.payload(), b"xyz!");
        r.feed(b"");
        assert_eq!(
            r.payload(),
            b"",
            "a feed forgets the payload it may have moved"
        );
    }

    /// RFC 7541 C.6.1: a response's first header block, Huffman-coded,
    /// `:status 302` among its fields.
    #[test]
    fn the_status_of_a_huffman_coded_block() {
        let block = [
            0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0,
            0x7a, 0xbe, 0x94, 0x10, 0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81,
            0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e, 0x91, 0x9d, 0x29, 0xad, 0x17, 0x18,
            0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
        ];
        let mut d = httlib_hpack::Decoder::default();
        assert_eq!(status(&mut d, &block), Ok(Some(302)));
    }
}
