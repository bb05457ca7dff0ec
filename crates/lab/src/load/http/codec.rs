//! Sans-IO HTTP/1.1 client codec: requests serialised once into bytes, and
//! an incremental response parser (bytes in, responses out, no sockets).
//!
//! The parser keeps only what it must across reads: the current state, a few
//! header facts (status, length, chunking, `Connection`), and the one
//! partial line a read may have split. Bodies are skipped, never copied.
//! Framing follows RFC 9112 section 6: no body for HEAD, 1xx, 204 and 304;
//! `Transfer-Encoding: chunked` wins over `Content-Length`; otherwise the
//! body runs until the server closes.

/// Longest status or header line accepted, and largest response head.
const MAX_LINE: usize = 16 * 1024;
const MAX_HEAD: usize = 64 * 1024;

/// Serialises one request. `close` adds `Connection: close` unless the
/// caller's headers already carry a `Connection` header. `Host` and
/// `Content-Length` are added unless given.
pub fn build_request(
    method: &str,
    path: &str,
    host: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    close: bool,
) -> Vec<u8> {
    let has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut out = Vec::with_capacity(128 + body.map_or(0, <[u8]>::len));
    out.extend_from_slice(format!("{method} {path} HTTP/1.1\r\n").as_bytes());
    if !has("host") {
        out.extend_from_slice(format!("Host: {host}\r\n").as_bytes());
    }
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if let Some(b) = body {
        if !has("content-length") {
            out.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
        }
    }
    if close && !has("connection") {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if let Some(b) = body {
        out.extend_from_slice(b);
    }
    out
}

/// A complete response, as far as a load generator cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The server will close the connection after this response.
    pub close: bool,
}

/// What one call to [`ResponseParser::parse`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// All input was consumed and the response is not complete yet.
    Incomplete,
    /// A response ended after `consumed` bytes of the input; the rest
    /// belongs to the next response.
    Complete { response: Response, consumed: usize },
}

/// What the end of the stream means for the response in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eof {
    /// No response had begun.
    Clean,
    /// A body delimited by the close is now complete.
    Complete(Response),
    /// The stream ended inside a response.
    Truncated,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("malformed status line")]
    StatusLine,
    #[error("malformed header line")]
    Header,
    #[error("invalid or conflicting Content-Length")]
    ContentLength,
    #[error("malformed chunked body")]
    Chunk,
    #[error("response head too large")]
    TooLarge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    StatusLine,
    Headers,
    Body { remaining: u64 },
    ChunkSize,
    ChunkData { remaining: u64 },
    ChunkEnd,
    Trailers,
    UntilClose,
}

/// Facts gathered from one response head.
#[derive(Clone, Copy, Debug, Default)]
struct Head {
    status: u16,
    http10: bool,
    content_length: Option<u64>,
    transfer_encoding: bool,
    chunked: bool,
    close: bool,
    keep_alive: bool,
    bytes: usize,
}

/// Incremental HTTP/1.1 response parser for one connection.
#[derive(Debug)]
pub struct ResponseParser {
    head_request: bool,
    state: State,
    head: Head,
    /// A line split across reads (empty almost always; its capacity is kept).
    partial: Vec<u8>,
}

impl ResponseParser {
    /// `head_request`: responses answer HEAD requests and carry no body.
    pub fn new(head_request: bool) -> Self {
        ResponseParser {
            head_request,
            state: State::StatusLine,
            head: Head::default(),
            partial: Vec::new(),
        }
    }

    /// Forgets any response in progress (for a new connection).
    pub fn reset(&mut self) {
        self.state = State::StatusLine;
        self.head = Head::default();
        self.partial.clear();
    }

    /// Whether part of a response has been seen.
    pub fn in_progress(&self) -> bool {
        self.state != State::StatusLine || !self.partial.is_empty()
    }

    /// Consumes `input` up to the end of the first complete response.
    pub fn parse(&mut self, input: &[u8]) -> Result<Parsed, ProtocolError> {
        let mut pos = 0;
        loop {
            match self.state {
                State::Body { remaining } | State::ChunkData { remaining } => {
                    let take = remaining.min((input.len() - pos) as u64);
                    pos += take as usize;
                    let left = remaining - take;
                    if left > 0 {
                        self.set_remaining(left);
                        return Ok(Parsed::Incomplete);
                    }
                    if let State::Body { .. } = self.state {
                        return Ok(self.complete(pos));
                    }
                    self.state = State::ChunkEnd;
                }
                State::UntilClose => return Ok(Parsed::Incomplete),
                _ => {
                    let Some(end) = self.next_line(input, pos)? else {
                        return Ok(Parsed::Incomplete);
                    };
                    let line_start = pos;
                    pos = end + 1;
                    if let Some(done) = self.on_line(&input[line_start..end], pos)? {
                        return Ok(done);
                    }
                }
            }
        }
    }

    /// The stream ended: completes a close-delimited body or reports where
    /// it stopped.
    pub fn eof(&mut self) -> Eof {
        let outcome = match self.state {
            State::UntilClose => Eof::Complete(Response {
                status: self.head.status,
                close: true,
            }),
            _ if self.in_progress() => Eof::Truncated,
            _ => Eof::Clean,
        };
        self.reset();
        outcome
    }

    fn set_remaining(&mut self, left: u64) {
        self.state = match self.state {
            State::Body { .. } => State::Body { remaining: left },
            _ => State::ChunkData { remaining: left },
        };
    }

    /// Finds the end of the next line from `pos`; a line cut off by the
    /// end of the input is saved, and `None` returned.
    fn next_line(&mut self, input: &[u8], pos: usize) -> Result<Option<usize>, ProtocolError> {
        let rest = &input[pos..];
        match memchr::memchr(b'\n', rest) {
            Some(i) => Ok(Some(pos + i)),
            None => {
                if self.partial.len() + rest.len() > MAX_LINE {
                    return Err(ProtocolError::TooLarge);
                }
                self.partial.extend_from_slice(rest);
                Ok(None)
            }
        }
    }

    /// Handles one line (without its `\n`); `pos` is where the input goes on.
    fn on_line(&mut self, tail: &[u8], pos: usize) -> Result<Option<Parsed>, ProtocolError> {
        if self.partial.is_empty() {
            return self.handle_line(strip_cr(tail), pos);
        }
        // Rare: the line began in an earlier read. Join it, keeping the
        // buffer's capacity for next time.
        let mut joined = std::mem::take(&mut self.partial);
        if joined.len() + tail.len() > MAX_LINE {
            return Err(ProtocolError::TooLarge);
        }
        joined.extend_from_slice(tail);
        let result = self.handle_line(strip_cr(&joined), pos);
        joined.clear();
        self.partial = joined;
        result
    }

    fn handle_line(&mut self, line: &[u8], pos: usize) -> Result<Option<Parsed>, ProtocolError> {
        match self.state {
            State::StatusLine => {
                if line.is_empty() {
                    // Tolerate stray blank lines before a status line.
                    return Ok(None);
                }
                self.head = parse_status_line(line)?;
                self.head.bytes = line.len() + 2;
                self.state = State::Headers;
            }
            State::Headers => {
                self.head.bytes += line.len() + 2;
                if self.head.bytes > MAX_HEAD {
                    return Err(ProtocolError::TooLarge);
                }
                if line.is_empty() {
                    return Ok(self.end_of_head(pos));
                }
                parse_header(line, &mut self.head)?;
            }
            State::ChunkSize => {
                let size = parse_chunk_size(line)?;
                self.state = if size == 0 {
                    State::Trailers
                } else {
                    State::ChunkData { remaining: size }
                };
            }
            State::ChunkEnd => {
                if !line.is_empty() {
                    return Err(ProtocolError::Chunk);
                }
                self.state = State::ChunkSize;
            }
            State::Trailers => {
                if line.is_empty() {
                    return Ok(Some(self.complete(pos)));
                }
            }
            State::Body { .. } | State::ChunkData { .. } | State::UntilClose => {}
        }
        Ok(None)
    }

    /// Chooses how the body is delimited once the head has ended.
    fn end_of_head(&mut self, pos: usize) -> Option<Parsed> {
        let h = &self.head;
        if (100..200).contains(&h.status) {
            // Interim response (100 Continue, 103 Early Hints): the real
            // one follows.
            self.state = State::StatusLine;
            return None;
        }
        let no_body = self.head_request || h.status == 204 || h.status == 304;
        self.state = if no_body {
            return Some(self.complete(pos));
        } else if h.chunked {
            State::ChunkSize
        } else if h.transfer_encoding {
            State::UntilClose
        } else {
            match h.content_length {
                Some(0) => return Some(self.complete(pos)),
                Some(n) => State::Body { remaining: n },
                None => State::UntilClose,
            }
        };
        None
    }

    fn complete(&mut self, consumed: usize) -> Parsed {
        let h = &self.head;
        let response = Response {
            status: h.status,
            close: h.close || (h.http10 && !h.keep_alive),
        };
        self.state = State::StatusLine;
        Parsed::Complete { response, consumed }
    }
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `HTTP/1.x SSS reason`.
fn parse_status_line(line: &[u8]) -> Result<Head, ProtocolError> {
    let rest = line
        .strip_prefix(b"HTTP/1.")
        .ok_or(ProtocolError::StatusLine)?;
    let (minor, rest) = rest.split_first().ok_or(ProtocolError::StatusLine)?;
    if !minor.is_ascii_digit() || rest.len() < 4 || rest[0] != b' ' {
        return Err(ProtocolError::StatusLine);
    }
    let code = &rest[1..4];
    if !code.iter().all(u8::is_ascii_digit) || rest.get(4).is_some_and(|&b| b != b' ') {
        return Err(ProtocolError::StatusLine);
    }
    let status = code
        .iter()
        .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0'));
    Ok(Head {
        status,
        http10: *minor == b'0',
        ..Head::default()
    })
}

/// `Name: value`; only the headers that frame the body are interpreted.
fn parse_header(line: &[u8], head: &mut Head) -> Result<(), ProtocolError> {
    let colon = memchr::memchr(b':', line).ok_or(ProtocolError::Header)?;
    let name = &line[..colon];
    if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
        return Err(ProtocolError::Header);
    }
    let value = line[colon + 1..].trim_ascii();
    if name.eq_ignore_ascii_case(b"content-length") {
        let n = parse_decimal(value).ok_or(ProtocolError::ContentLength)?;
        if head.content_length.is_some_and(|old| old != n) {
            return Err(ProtocolError::ContentLength);
        }
        head.content_length = Some(n);
    } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
        head.transfer_encoding = true;
        head.chunked = tokens(value)
            .last()
            .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
    } else if name.eq_ignore_ascii_case(b"connection") {
        for t in tokens(value) {
            head.close |= t.eq_ignore_ascii_case(b"close");
            head.keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
        }
    }
    Ok(())
}

fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        if d.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        } else {
            None
        }
    })
}

/// A chunk-size line: hex digits, then optional `;extensions`.
fn parse_chunk_size(line: &[u8]) -> Result<u64, ProtocolError> {
    let end = line
        .iter()
        .position(|b| !b.is_ascii_hexdigit())
        .unwrap_or(line.len());
    let rest = line[end..].trim_ascii_start();
    if end == 0 || end > 15 || !(rest.is_empty() || rest[0] == b';') {
        return Err(ProtocolError::Chunk);
    }
    let hex = std::str::from_utf8(&line[..end]).map_err(|_| ProtocolError::Chunk)?;
    u64::from_str_radix(hex, 16).map_err(|_| ProtocolError::Chunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NGINX: &[u8] = b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n\
        Date: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Type: application/json\r\n\
        Content-Length: 2\r\nConnection: keep-alive\r\n\r\n{}";

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n";

    /// Feeds `input` in pieces of `piece` bytes; returns the responses and
    /// how many bytes each consumed from its last piece.
    fn feed(p: &mut ResponseParser, input: &[u8], piece: usize) -> Vec<Response> {
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            let mut rest = chunk;
            while let Parsed::Complete { response, consumed } = p.parse(rest).unwrap() {
                out.push(response);
                rest = &rest[consumed..];
                if rest.is_empty() {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn whole_response_in_one_read() {
        let mut p = ResponseParser::new(false);
        let r = p.parse(NGINX).unwrap();
        let want = Response {
            status: 200,
            close: false,
        };
        assert_eq!(
            r,
            Parsed::Complete {
                response: want,
                consumed: NGINX.len()
            }
        );
        assert!(!p.in_progress());
    }

    #[test]
    fn every_split_point_gives_the_same_response() {
        for input in [NGINX, CHUNKED] {
            for piece in 1..input.len() {
                let mut p = ResponseParser::new(false);
                let got = feed(&mut p, input, piece);
                assert_eq!(got.len(), 1, "piece size {piece}");
                assert_eq!(got[0].status, 200);
                assert!(!p.in_progress());
            }
        }
    }

    #[test]
    fn pipelined_responses_in_one_read() {
        let mut many = Vec::new();
        many.extend_from_slice(NGINX);
        many.extend_from_slice(CHUNKED);
        many.extend_from_slice(b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!");
        for piece in [many.len(), 7, 1] {
            let mut p = ResponseParser::new(false);
            let got = feed(&mut p, &many, piece);
            let codes: Vec<u16> = got.iter().map(|r| r.status).collect();
            assert_eq!(codes, vec![200, 200, 404], "piece size {piece}");
        }
    }

    #[test]
    fn consumed_stops_at_the_end_of_the_first_response() {
        let mut two = NGINX.to_vec();
        two.extend_from_slice(NGINX);
        let mut p = ResponseParser::new(false);
        match p.parse(&two).unwrap() {
            Parsed::Complete { consumed, .. } => assert_eq!(consumed, NGINX.len()),
            other => panic!("expected a response, got {other:?}"),
        }
    }

    #[test]
    fn connection_close_and_http10() {
        let mut p = ResponseParser::new(false);
        let close = b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n";
        assert!(feed(&mut p, close, close.len())[0].close);
        let old = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(feed(&mut p, old, old.len())[0].close);
        let old_ka = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n";
        assert!(!feed(&mut p, old_ka, old_ka.len())[0].close);
    }

    #[test]
    fn body_until_close() {
        let mut p = ResponseParser::new(false);
        let r = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body";
        assert_eq!(p.parse(r).unwrap(), Parsed::Incomplete);
        assert_eq!(
            p.eof(),
            Eof::Complete(Response {
                status: 200,
                close: true
            })
        );
        assert_eq!(p.eof(), Eof::Clean);
    }

    #[test]
    fn eof_inside_a_response_is_truncation() {
        let mut p = ResponseParser::new(false);
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b";
        assert_eq!(p.parse(r).unwrap(), Parsed::Incomplete);
        assert_eq!(p.eof(), Eof::Truncated);
        let mut p = ResponseParser::new(false);
        assert_eq!(p.parse(b"HTTP/1.1 2").unwrap(), Parsed::Incomplete);
        assert!(p.in_progress());
        assert_eq!(p.eof(), Eof::Truncated);
    }

    #[test]
    fn no_body_for_head_204_304_and_interim_is_skipped() {
        let mut p = ResponseParser::new(true);
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
        assert_eq!(feed(&mut p, r, r.len()).len(), 1);
        let mut p = ResponseParser::new(false);
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n";
        let codes: Vec<u16> = feed(&mut p, r, r.len()).iter().map(|r| r.status).collect();
        assert_eq!(codes, vec![204, 304]);
    }

    #[test]
    fn chunked_wins_over_content_length() {
        let mut p = ResponseParser::new(false);
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 999\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n";
        assert_eq!(feed(&mut p, r, r.len()).len(), 1);
        assert!(!p.in_progress());
    }

    #[test]
    fn malformed_input_is_a_protocol_error() {
        let cases: &[(&[u8], ProtocolError)] = &[
            (b"NOT HTTP AT ALL\r\n\r\n", ProtocolError::StatusLine),
            (b"HTTP/1.1 2x0 OK\r\n\r\n", ProtocolError::StatusLine),
            (b"HTTP/2 200 OK\r\n\r\n", ProtocolError::StatusLine),
            (
                b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
                ProtocolError::Header,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
                ProtocolError::ContentLength,
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                ProtocolError::ContentLength,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                ProtocolError::Chunk,
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX\r\n",
                ProtocolError::Chunk,
            ),
        ];
        for (input, want) in cases {
            let mut p = ResponseParser::new(false);
            assert_eq!(
                p.parse(input),
                Err(*want),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn endless_header_line_is_refused() {
        let mut p = ResponseParser::new(false);
        p.parse(b"HTTP/1.1 200 OK\r\nX: ").unwrap();
        let junk = vec![b'a'; 4096];
        let mut result = Ok(Parsed::Incomplete);
        for _ in 0..8 {
            result = p.parse(&junk);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(ProtocolError::TooLarge));
    }

    #[test]
    fn requests_are_built_once_with_host_and_length() {
        let hdrs = vec![("X-Test".to_string(), "1".to_string())];
        let r = build_request("POST", "/p?q=1", "127.0.0.1:80", &hdrs, Some(b"abc"), false);
        assert_eq!(
            r,
            b"POST /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-Test: 1\r\nContent-Length: 3\r\n\r\nabc"
        );
        let c = build_request("GET", "/", "h", &[], None, true);
        assert!(c.ends_with(b"Connection: close\r\n\r\n"));
        let own = vec![("connection".to_string(), "keep-alive".to_string())];
        let k = build_request("GET", "/", "h", &own, None, true);
        assert!(!String::from_utf8(k).unwrap().contains("close"));
    }
}
