//! The PostgreSQL wire protocol, sans-IO: bytes in, frames out; messages in,
//! bytes out. No sockets here.
//!
//! Frontend messages are encoded with `postgres-protocol`. Backend messages
//! on the hot path (one statement's BindComplete, DataRow, CommandComplete,
//! ReadyForQuery) are read in place as [`Frame`]s without allocating; rarer
//! ones (authentication) are decoded into `postgres-protocol` messages.

use bytes::{BufMut, BytesMut};
use postgres_protocol::message::backend::{self, Message};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

/// A backend message larger than this is treated as a protocol violation
/// rather than a reason to allocate without bound.
const MAX_MESSAGE: usize = 256 << 20;

/// Why a PostgreSQL exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The server answered with an ErrorResponse.
    #[error("{severity} {code}: {message}")]
    Server {
        /// Its non-localized `V` field (else `S`): `ERROR`, `FATAL` or
        /// `PANIC`.
        severity: String,
        /// Its `C` field, the SQLSTATE (`40001` is a serialization failure,
        /// `40P01` a deadlock): see [`PgError::code`].
        code: String,
        /// Its `M` field, the primary human-readable message.
        message: String,
    },
    /// The server sent bytes that are not the message the protocol allows
    /// at that point (or an implausibly large one).
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The server asked for an authentication method scalelab lacks, or for
    /// a password none was given, or the SCRAM exchange did not verify.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// The socket failed (connect, read, write, or the server closed it).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// No complete answer within this bound.
    #[error("no answer within {0:?}")]
    Timeout(std::time::Duration),
}

impl PgError {
    /// The SQLSTATE of a server error.
    pub fn code(&self) -> Option<&str> {
        match self {
            PgError::Server { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// One complete backend message, borrowed from the receive buffer.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    /// The message type byte (`Z` ReadyForQuery, `E` ErrorResponse, ...).
    pub tag: u8,
    /// The message body after the 5-byte header.
    pub body: &'a [u8],
    /// The whole message, header included.
    pub raw: &'a [u8],
}

impl Frame<'_> {
    /// Decodes the frame with `postgres-protocol` (allocates; not for the
    /// hot path).
    pub fn decode(&self) -> Result<Message, PgError> {
        let mut buf = BytesMut::from(self.raw);
        match Message::parse(&mut buf) {
            Ok(Some(m)) => Ok(m),
            Ok(None) => Err(PgError::Protocol("truncated message".into())),
            Err(e) => Err(PgError::Protocol(e.to_string())),
        }
    }
}

/// A receive buffer that hands out complete frames in place.
pub struct RecvBuf {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl RecvBuf {
    /// An empty buffer of `n` bytes (at least 64); it grows as frames need.
    pub fn with_capacity(n: usize) -> Self {
        RecvBuf {
            data: vec![0; n.max(64)],
            start: 0,
            end: 0,
        }
    }

    /// Free space to read into; compacts or grows so at least a quarter of
    /// the buffer (and the rest of a pending large frame) fits.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        let pending = self.pending_frame_len();
        let want = pending.max(self.data.len() / 4);
        if self.data.len() - self.end < want {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.data.len() - self.end < want {
                let grown = (self.end + want).max(self.data.len() * 2);
                self.data.resize(grown, 0);
            }
        }
        &mut self.data[self.end..]
    }

    /// Marks `n` bytes of [`spare`](Self::spare) as received.
    pub fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.data.len());
    }

    /// Whether no unread byte is left.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Drops every unread byte.
    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Length still missing of a partially received frame (0 if none).
    fn pending_frame_len(&self) -> usize {
        let b = &self.data[self.start..self.end];
        if b.len() < 5 {
            return 0;
        }
        let len = u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize + 1;
        len.saturating_sub(b.len())
    }

    /// The next complete frame, if one has fully arrived.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, PgError> {
        let avail = &self.data[self.start..self.end];
        let header = backend::Header::parse(avail).map_err(|e| PgError::Protocol(e.to_string()))?;
        let Some(header) = header else {
            return Ok(None);
        };
        let total = header.len() as usize + 1;
        if total > MAX_MESSAGE {
            return Err(PgError::Protocol(format!(
                "a {total}-byte message (tag `{}`) is implausibly large",
                header.tag() as char
            )));
        }
        if avail.len() < total {
            return Ok(None);
        }
        let begin = self.start;
        self.start += total;
        let raw = &self.data[begin..begin + total];
        Ok(Some(Frame {
            tag: raw[0],
            body: &raw[5..],
            raw,
        }))
    }
}

/// Transaction status from a ReadyForQuery body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// `I`: not in a transaction block.
    Idle,
    /// `T`: in a transaction block.
    InBlock,
    /// `E`: in a failed transaction block (queries refused until it ends).
    Failed,
}

/// The transaction status a ReadyForQuery body (`Z`) carries.
pub fn ready_status(body: &[u8]) -> Result<TxStatus, PgError> {
    match body.first() {
        Some(b'I') => Ok(TxStatus::Idle),
        Some(b'T') => Ok(TxStatus::InBlock),
        Some(b'E') => Ok(TxStatus::Failed),
        other => Err(PgError::Protocol(format!(
            "bad ReadyForQuery status {other:?}"
        ))),
    }
}

/// Iterates an ErrorResponse/NoticeResponse body: (field type, value).
fn error_fields(body: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut rest = body;
    std::iter::from_fn(move || {
        let (&kind, tail) = rest.split_first()?;
        if kind == 0 {
            return None;
        }
        let nul = tail.iter().position(|&b| b == 0)?;
        let value = &tail[..nul];
        rest = &tail[nul + 1..];
        Some((kind, value))
    })
}

/// The five-character SQLSTATE of an ErrorResponse body, without allocating.
pub fn sqlstate(body: &[u8]) -> [u8; 5] {
    error_fields(body)
        .find(|(k, _)| *k == b'C')
        .and_then(|(_, v)| v.try_into().ok())
        .unwrap_or(*b"XX000")
}

/// An ErrorResponse body as a [`PgError::Server`].
pub fn server_error(body: &[u8]) -> PgError {
    let field = |kind: u8| {
        error_fields(body)
            .find(|(k, _)| *k == kind)
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default()
    };
    let severity = Some(field(b'V'))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| field(b'S'));
    PgError::Server {
        severity,
        code: field(b'C'),
        message: field(b'M'),
    }
}

/// The columns of a DataRow body (text format); `None` is SQL NULL.
pub fn data_row(body: &[u8]) -> Result<Vec<Option<&[u8]>>, PgError> {
    let bad = || PgError::Protocol("malformed DataRow".into());
    let count = u16::from_be_bytes(
        body.get(..2)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?,
    );
    let mut rest = &body[2..];
    let mut out = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let len = i32::from_be_bytes(
            rest.get(..4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        );
        rest = &rest[4..];
        if len < 0 {
            out.push(None);
        } else {
            let len = len as usize;
            out.push(Some(rest.get(..len).ok_or_else(bad)?));
            rest = &rest[len..];
        }
    }
    Ok(out)
}

/// The SSLRequest a client sends before its StartupMessage to ask for TLS
/// (protocol §55.2.10): its length, 8, and the code 80877103. The server
/// answers one byte: `S` (TLS follows) or `N` (cleartext only).
pub const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];

/// Appends the decimal digits of `v` without allocating.
pub fn put_int(v: i64, out: &mut BytesMut) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.put_u8(b'-');
    }
    out.put_slice(&digits[i..]);
}

/// Bind (unnamed portal, text parameters and results), Execute and Sync for
/// prepared statement `name` with integer parameters: one round trip.
pub fn bind_execute_sync(name: &str, params: &[i64], out: &mut BytesMut) {
    let encoded = frontend::bind(
        "",
        name,
        std::iter::empty(),
        params.iter(),
        |v, buf| {
            put_int(*v, buf);
            Ok(IsNull::No)
        },
        std::iter::empty(),
        out,
    );
    // Only a statement name containing NUL or more than 32k parameters
    // could fail; ours are fixed ASCII names with at most five parameters.
    debug_assert!(encoded.is_ok());
    let _ = frontend::execute("", 0, out);
    frontend::sync(out);
}

/// Parse of `sql` as the unnamed statement, then Bind, Execute and Sync
/// with `params` (pgbench `-M extended`): one round trip, parsed every time.
pub fn parse_bind_execute_sync(sql: &str, params: &[i64], out: &mut BytesMut) {
    // Only SQL containing NUL could fail; the scripts' statements are fixed.
    let _ = frontend::parse("", sql, std::iter::empty(), out);
    bind_execute_sync("", params, out);
}

/// A simple-protocol Query with `$1`..`$9` in `sql` replaced by the
/// integer `params` (pgbench `-M simple`), written straight into `out`.
pub fn literal_query(sql: &str, params: &[i64], out: &mut BytesMut) {
    out.put_u8(b'Q');
    let len_at = out.len();
    out.put_i32(0);
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let slot = (bytes[i] == b'$')
            .then(|| bytes.get(i + 1))
            .flatten()
            .filter(|d| d.is_ascii_digit() && **d != b'0')
            .map(|d| usize::from(d - b'1'));
        match slot.and_then(|k| params.get(k)) {
            Some(v) => {
                put_int(*v, out);
                i += 2;
            }
            None => {
                out.put_u8(bytes[i]);
                i += 1;
            }
        }
    }
    out.put_u8(0);
    let len = (out.len() - len_at) as i32;
    out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Parse messages for `statements` (named `s0`, `s1`, ...) and one Sync.
pub fn prepare_all<'a>(
    statements: impl IntoIterator<Item = (&'a str, &'a str)>,
    out: &mut BytesMut,
) {
    for (name, sql) in statements {
        let _ = frontend::parse(name, sql, std::iter::empty(), out);
    }
    frontend::sync(out);
}

/// A simple-protocol query.
pub fn simple_query(sql: &str, out: &mut BytesMut) -> Result<(), PgError> {
    frontend::query(sql, out).map_err(|e| PgError::Protocol(format!("query text: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn feed(buf: &mut RecvBuf, bytes: &[u8]) {
        let spare = buf.spare();
        spare[..bytes.len()].copy_from_slice(bytes);
        buf.filled(bytes.len());
    }

    #[test]
    fn frames_come_out_whole_even_when_bytes_trickle_in() {
        let mut wire = message(b'2', b"");
        wire.extend(message(b'C', b"SELECT 1\0"));
        wire.extend(message(b'Z', b"I"));
        let mut buf = RecvBuf::with_capacity(64);
        let mut seen = Vec::new();
        for byte in &wire {
            feed(&mut buf, std::slice::from_ref(byte));
            while let Some(f) = buf.next_frame().unwrap() {
                seen.push((f.tag, f.body.to_vec()));
            }
        }
        assert_eq!(
            seen,
            vec![
                (b'2', vec![]),
                (b'C', b"SELECT 1\0".to_vec()),
                (b'Z', b"I".to_vec())
            ]
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn the_buffer_grows_for_a_large_frame() {
        let big = message(b'D', &vec![7u8; 10_000]);
        let mut buf = RecvBuf::with_capacity(64);
        let mut fed = 0;
        while fed < big.len() {
            let spare = buf.spare();
            let n = spare.len().min(big.len() - fed);
            spare[..n].copy_from_slice(&big[fed..fed + n]);
            buf.filled(n);
            fed += n;
        }
        let f = buf.next_frame().unwrap().unwrap();
        assert_eq!(f.body.len(), 10_000);
    }

    #[test]
    fn a_bad_length_is_a_protocol_error() {
        let mut buf = RecvBuf::with_capacity(64);
        feed(&mut buf, &[b'Z', 0, 0, 0, 1]);
        assert!(matches!(buf.next_frame(), Err(PgError::Protocol(_))));
    }

    #[test]
    fn error_responses_yield_their_sqlstate() {
        let body = b"SERROR\0VERROR\0C40001\0Mcould not serialize access\0\0";
        assert_eq!(&sqlstate(body), b"40001");
        match server_error(body) {
            PgError::Server {
                code,
                message,
                severity,
            } => {
                assert_eq!(code, "40001");
                assert_eq!(severity, "ERROR");
                assert_eq!(message, "could not serialize access");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(&sqlstate(b"Mno code\0\0"), b"XX000");
    }

    #[test]
    fn integers_format_like_printf() {
        for v in [0i64, 7, -5000, 5000, 100_000, i64::MAX, i64::MIN] {
            let mut out = BytesMut::new();
            put_int(v, &mut out);
            assert_eq!(std::str::from_utf8(&out).unwrap(), v.to_string());
        }
    }

    #[test]
    fn literal_queries_substitute_parameters() {
        let mut out = BytesMut::new();
        literal_query(
            "UPDATE t SET a = a + $1 WHERE aid = $2",
            &[-4, 11],
            &mut out,
        );
        let text = b"UPDATE t SET a = a + -4 WHERE aid = 11\0";
        assert_eq!(out[0], b'Q');
        assert_eq!(&out[1..5], &((4 + text.len()) as i32).to_be_bytes());
        assert_eq!(&out[5..], text);
        // The same bytes as the library's Query message of that text.
        let mut lib = BytesMut::new();
        simple_query("UPDATE t SET a = a + -4 WHERE aid = 11", &mut lib).unwrap();
        assert_eq!(out, lib);
    }

    #[test]
    fn extended_parses_the_unnamed_statement_every_time() {
        let mut out = BytesMut::new();
        parse_bind_execute_sync("SELECT $1", &[7], &mut out);
        let tags: Vec<u8> = frames(&out).iter().map(|f| f.0).collect();
        assert_eq!(tags, b"PBES");
        let parse = &frames(&out)[0].1;
        assert_eq!(&parse[..1], b"\0", "the unnamed statement");
    }

    /// (tag, body) of each frontend message in `bytes`.
    fn frames(bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let len = i32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
            out.push((rest[0], rest[5..1 + len].to_vec()));
            rest = &rest[1 + len..];
        }
        out
    }

    #[test]
    fn bind_carries_text_parameters() {
        let mut out = BytesMut::new();
        bind_execute_sync("s1", &[42, -7], &mut out);
        assert_eq!(out[0], b'B');
        let len = u32::from_be_bytes(out[1..5].try_into().unwrap()) as usize;
        let bind = &out[5..1 + len];
        // portal "", name "s1", 0 format codes, 2 params: "42", "-7", 0 result formats
        let expect: &[u8] = b"\0s1\0\0\0\0\x02\0\0\0\x0242\0\0\0\x02-7\0\0";
        assert_eq!(bind, expect);
        assert_eq!(&out[1 + len..], b"E\0\0\0\x09\0\0\0\0\0S\0\0\0\x04");
    }

    #[test]
    fn data_rows_split_into_columns() {
        let body = [0, 2, 0, 0, 0, 2, b'4', b'2', 0xff, 0xff, 0xff, 0xff];
        assert_eq!(data_row(&body).unwrap(), vec![Some(&b"42"[..]), None]);
        assert!(data_row(&body[..7]).is_err());
    }
}
