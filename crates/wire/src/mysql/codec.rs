//! The MySQL client protocol, sans-IO: bytes in, events out, bytes to send.
//!
//! Packet framing, the handshake, `mysql_native_password` and the binary
//! `COM_STMT_EXECUTE` request come from the `mysql_common` crate; this
//! module strings them into small state machines that never touch a socket:
//! [`Framer`] (packets and sequence ids), [`Handshake`] (greeting to OK),
//! [`PrepareReader`] (a `COM_STMT_PREPARE` reply) and [`ReplyReader`] (OK,
//! ERR or a result set of text or binary rows).

use bytes::BytesMut;
use mysql_common::constants::{CapabilityFlags, ColumnType, MariadbCapabilities};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, AuthSwitchRequest, ErrPacket, HandshakePacket, HandshakeResponse, StmtPacket,
};
use mysql_common::proto::MySerialize;
use mysql_common::Value;

/// Capabilities scalelab asks for (those the server lacks are dropped).
/// No `CLIENT_DEPRECATE_EOF`: result sets end with the classic EOF packet,
/// as with libmariadb (sysbench's client library).
const CLIENT_CAPS: CapabilityFlags = CapabilityFlags::CLIENT_LONG_PASSWORD
    .union(CapabilityFlags::CLIENT_LONG_FLAG)
    .union(CapabilityFlags::CLIENT_PROTOCOL_41)
    .union(CapabilityFlags::CLIENT_TRANSACTIONS)
    .union(CapabilityFlags::CLIENT_SECURE_CONNECTION)
    .union(CapabilityFlags::CLIENT_MULTI_RESULTS)
    .union(CapabilityFlags::CLIENT_PS_MULTI_RESULTS)
    .union(CapabilityFlags::CLIENT_PLUGIN_AUTH);

const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_QUIT: u8 = 0x01;

/// Why the conversation cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The first packet was not a MySQL greeting (another server listens).
    #[error("the server on this port does not speak the MySQL protocol ({0})")]
    NotMysql(String),
    /// A packet that does not parse as the one the protocol expects next.
    #[error("malformed packet: {0}")]
    Malformed(String),
    /// The account authenticates with a plugin other than
    /// `mysql_native_password`.
    #[error("authentication needs plugin `{0}`, which scalelab does not support; create the user WITH mysql_native_password")]
    Plugin(String),
    /// The server answered with an ERR packet.
    #[error("{0}")]
    Server(ErrReply),
    /// TLS was asked for, and the server's greeting offers none
    /// (`CLIENT_SSL`).
    #[error("the server does not serve TLS (its greeting has no CLIENT_SSL); serve it (a managed mariadb: `tls = true`; else `ssl_cert` and `ssl_key`), or leave `ssl_mode` at \"disabled\"")]
    NoTls,
}

/// An ERR packet: MySQL error number, SQLSTATE and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrReply {
    /// The server's error number (1213 is a deadlock, 1045 access denied).
    pub code: u16,
    /// The five-character SQLSTATE (`40001` for a deadlock).
    pub state: String,
    /// The server's human-readable message.
    pub message: String,
}

impl std::fmt::Display for ErrReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.message)
    }
}

fn malformed(what: impl std::fmt::Display) -> ProtocolError {
    ProtocolError::Malformed(what.to_string())
}

/// Parses an ERR packet (first byte 0xFF).
pub fn server_error(pkt: &[u8]) -> ProtocolError {
    match ParseBuf(pkt).parse::<ErrPacket>(CLIENT_CAPS) {
        Ok(ErrPacket::Error(e)) => ProtocolError::Server(ErrReply {
            code: e.error_code(),
            state: e
                .sql_state_ref()
                .map(|s| s.as_str().into_owned())
                .unwrap_or_default(),
            message: e.message_str().into_owned(),
        }),
        Ok(ErrPacket::Progress(_)) => malformed("unexpected progress report"),
        Err(e) => malformed(e),
    }
}

/// MariaDB's extended capability (10.6+) that libmariadb, sysbench's
/// client library, asks for: the server sends a prepared statement's column
/// definitions only when they changed since the last execution, which
/// saves it building and sending one packet per column per execution.
const MARIADB_CAPS: MariadbCapabilities = MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA;

/// Packet framing with sequence ids (mysql_common's `PacketCodec`), and
/// what the handshake negotiated that changes how replies are framed.
#[derive(Debug, Default)]
pub struct Framer {
    codec: mysql_common::proto::codec::PacketCodec,
    scratch: Vec<u8>,
    cache_metadata: bool,
}

impl Framer {
    /// Whether the server may skip column definitions
    /// (`MARIADB_CLIENT_CACHE_METADATA` was negotiated).
    pub fn caches_metadata(&self) -> bool {
        self.cache_metadata
    }

    /// A reader for the reply to the command just sent.
    pub fn reply_reader(&self) -> ReplyReader {
        ReplyReader {
            state: ReplyState::First,
            cache_metadata: self.cache_metadata,
        }
    }

    /// Frames `payload` as a new command (sequence id 0).
    pub fn command(&mut self, payload: &[u8], out: &mut BytesMut) {
        self.codec.reset_seq_id();
        self.reply(payload, out);
    }

    /// Frames `payload` as the next packet of the current exchange.
    pub fn reply(&mut self, mut payload: &[u8], out: &mut BytesMut) {
        // Only packets over max_allowed_packet fail, and ours are tiny.
        let _ = self.codec.encode(&mut payload, out);
    }

    /// Moves the next whole packet out of `recv` into `pkt` (cleared
    /// first); false if `recv` holds no whole packet yet.
    pub fn next_packet(
        &mut self,
        recv: &mut BytesMut,
        pkt: &mut Vec<u8>,
    ) -> Result<bool, ProtocolError> {
        pkt.clear();
        self.codec.decode(recv, pkt).map_err(malformed)
    }

    /// `COM_QUERY` with `sql`.
    pub fn query(&mut self, sql: &str, out: &mut BytesMut) {
        self.command_with(COM_QUERY, sql.as_bytes(), out);
    }

    /// `COM_STMT_PREPARE` of `sql`.
    pub fn prepare(&mut self, sql: &str, out: &mut BytesMut) {
        self.command_with(COM_STMT_PREPARE, sql.as_bytes(), out);
    }

    /// COM_QUIT: the client's goodbye before it closes.
    pub fn quit(&mut self, out: &mut BytesMut) {
        self.command_with(COM_QUIT, &[], out);
    }

    /// `COM_STMT_EXECUTE` of statement `id` with `params` (binary protocol).
    /// The parameter types go with the first execution of a statement only
    /// (`send_types`), as libmariadb sends them: the server keeps them
    /// while the types stay the same, and a script's statement always binds
    /// the same types.
    pub fn execute(&mut self, id: u32, params: &[Value], send_types: bool, out: &mut BytesMut) {
        let mut payload = std::mem::take(&mut self.scratch);
        payload.clear();
        payload.push(COM_STMT_EXECUTE);
        payload.extend_from_slice(&id.to_le_bytes());
        payload.push(0); // CURSOR_TYPE_NO_CURSOR
        payload.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if !params.is_empty() {
            let bitmap = payload.len();
            payload.resize(bitmap + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if *p == Value::NULL {
                    payload[bitmap + i / 8] |= 1 << (i % 8);
                }
            }
            payload.push(u8::from(send_types));
            if send_types {
                for p in params {
                    payload.extend_from_slice(&param_type(p));
                }
            }
            for p in params.iter().filter(|p| **p != Value::NULL) {
                p.serialize(&mut payload);
            }
        }
        self.command(&payload, out);
        self.scratch = payload;
    }

    fn command_with(&mut self, cmd: u8, body: &[u8], out: &mut BytesMut) {
        let mut payload = std::mem::take(&mut self.scratch);
        payload.clear();
        payload.push(cmd);
        payload.extend_from_slice(body);
        self.command(&payload, out);
        self.scratch = payload;
    }
}

/// A parameter's type and flag bytes in `COM_STMT_EXECUTE`.
fn param_type(v: &Value) -> [u8; 2] {
    const UNSIGNED: u8 = 0x80;
    let (ty, flag) = match v {
        Value::NULL => (ColumnType::MYSQL_TYPE_NULL, 0),
        Value::Bytes(_) => (ColumnType::MYSQL_TYPE_VAR_STRING, 0),
        Value::Int(_) => (ColumnType::MYSQL_TYPE_LONGLONG, 0),
        Value::UInt(_) => (ColumnType::MYSQL_TYPE_LONGLONG, UNSIGNED),
        Value::Float(_) => (ColumnType::MYSQL_TYPE_FLOAT, 0),
        Value::Double(_) => (ColumnType::MYSQL_TYPE_DOUBLE, 0),
        Value::Date(..) => (ColumnType::MYSQL_TYPE_DATETIME, 0),
        Value::Time(..) => (ColumnType::MYSQL_TYPE_TIME, 0),
    };
    [ty as u8, flag]
}

/// The server's greeting, or why `pkt` is none (an ERR packet, such as
/// "too many connections", or another protocol).
fn parse_greeting(pkt: &[u8]) -> Result<HandshakePacket<'_>, ProtocolError> {
    match pkt.first() {
        Some(0xFF) => return Err(server_error(pkt)),
        Some(10) => {}
        _ => {
            return Err(ProtocolError::NotMysql(
                "its first packet is not a protocol-10 greeting".into(),
            ))
        }
    }
    ParseBuf(pkt)
        .parse(())
        .map_err(|e| ProtocolError::NotMysql(format!("unreadable greeting: {e}")))
}

/// The capabilities a client answers `hello` with: scalelab's, as far as
/// the server has them, and `CLIENT_SSL` with `tls` (an error where the
/// server offers no TLS). A MariaDB server clears CLIENT_MYSQL (the old
/// CLIENT_LONG_PASSWORD bit) and announces extended capabilities; a client
/// that wants them clears it too, as libmariadb does.
fn client_caps(
    hello: &HandshakePacket<'_>,
    tls: bool,
) -> Result<(CapabilityFlags, MariadbCapabilities), ProtocolError> {
    let mut caps = CLIENT_CAPS & hello.capabilities();
    if tls {
        if !hello.capabilities().contains(CapabilityFlags::CLIENT_SSL) {
            return Err(ProtocolError::NoTls);
        }
        caps.insert(CapabilityFlags::CLIENT_SSL);
    }
    let mariadb = !hello
        .capabilities()
        .contains(CapabilityFlags::CLIENT_LONG_PASSWORD);
    let ext = if mariadb {
        caps.remove(CapabilityFlags::CLIENT_LONG_PASSWORD);
        MARIADB_CAPS & hello.mariadb_ext_capabilities()
    } else {
        MariadbCapabilities::empty()
    };
    Ok((caps, ext))
}

/// The HandshakeResponse payload to `hello`.
fn response(
    hello: &HandshakePacket<'_>,
    caps: CapabilityFlags,
    ext: MariadbCapabilities,
    scramble: Option<&[u8]>,
    login: &Login,
) -> Vec<u8> {
    let resp = HandshakeResponse::new(
        scramble,
        hello.server_version_parsed().unwrap_or((5, 5, 0)),
        Some(login.user.as_bytes()),
        Some(login.database.as_bytes()),
        Some(AuthPlugin::MysqlNativePassword),
        caps,
        None,
        16 << 20,
    )
    .with_mariadb_ext_capabilities(ext);
    let mut payload = Vec::new();
    resp.serialize(&mut payload);
    payload
}

/// The SSLRequest that answers the greeting `pkt` (its payload) when the
/// client asks for TLS: the first 32 bytes of the HandshakeResponse it
/// will send inside TLS (capabilities with `CLIENT_SSL`, the largest
/// packet, the character set, the filler with MariaDB's extended
/// capabilities), framed as packet 1, as libmariadb sends it
/// (protocol: "Protocol::SSLRequest"). An error where the server offers
/// no TLS.
pub fn ssl_request(pkt: &[u8]) -> Result<Vec<u8>, ProtocolError> {
    let hello = parse_greeting(pkt)?;
    let (caps, ext) = client_caps(&hello, true)?;
    let login = Login {
        user: String::new(),
        password: String::new(),
        database: String::new(),
    };
    let payload = response(&hello, caps, ext, None, &login);
    let body = payload
        .get(..32)
        .ok_or_else(|| malformed("short handshake response"))?;
    let mut framed = vec![32, 0, 0, 1];
    framed.extend_from_slice(body);
    Ok(framed)
}

/// Credentials and schema for the handshake.
#[derive(Clone, Debug)]
pub struct Login {
    /// The account's user name.
    pub user: String,
    /// Its password (empty for none).
    pub password: String,
    /// The schema to use after the handshake.
    pub database: String,
}

/// Where the handshake stands after a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// Bytes were queued; wait for the next packet.
    Continue,
    /// Authenticated.
    Ready,
}

/// The connection phase: greeting, response, optional auth switch, OK.
#[derive(Debug)]
pub struct Handshake {
    login: Login,
    greeted: bool,
    server_version: String,
    /// The connection switched to TLS after the SSLRequest
    /// ([`ssl_request`]), before this handshake saw the greeting.
    tls: bool,
}

impl Handshake {
    /// A handshake that will log in as `login`, before the server's greeting.
    pub fn new(login: Login) -> Self {
        Handshake {
            login,
            greeted: false,
            server_version: String::new(),
            tls: false,
        }
    }

    /// The handshake of a connection that sent [`ssl_request`] (sequence
    /// id 1) and is inside TLS now: its response says `CLIENT_SSL` and is
    /// packet 2.
    pub fn after_ssl_request(mut self) -> Self {
        self.tls = true;
        self
    }

    /// The version the server announced in its greeting.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Feeds one packet from the server; queues the reply (if any) in
    /// `out` and says whether the connection is ready.
    pub fn on_packet(
        &mut self,
        pkt: &[u8],
        framer: &mut Framer,
        out: &mut BytesMut,
    ) -> Result<Progress, ProtocolError> {
        if !self.greeted {
            self.greeted = true;
            return self.on_greeting(pkt, framer, out);
        }
        match pkt.first() {
            Some(0x00) => Ok(Progress::Ready),
            Some(0xFF) => Err(server_error(pkt)),
            Some(0xFE) => self.on_auth_switch(pkt, framer, out),
            // caching_sha2_password's "fast auth succeeded"; the OK follows.
            Some(0x01) if pkt == [0x01, 0x03] => Ok(Progress::Continue),
            Some(0x01) => Err(ProtocolError::Plugin(
                "caching_sha2_password (full auth)".into(),
            )),
            _ => Err(malformed("unexpected packet during authentication")),
        }
    }

    fn on_greeting(
        &mut self,
        pkt: &[u8],
        framer: &mut Framer,
        out: &mut BytesMut,
    ) -> Result<Progress, ProtocolError> {
        let hello = parse_greeting(pkt)?;
        self.server_version = hello.server_version_str().into_owned();
        let scramble = self.scramble(&hello.nonce());
        let (caps, ext) = client_caps(&hello, self.tls)?;
        framer.cache_metadata = ext.contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA);
        let payload = response(&hello, caps, ext, Some(&scramble), &self.login);
        if self.tls {
            // The SSLRequest was packet 1, sent before TLS.
            framer.reply(&[], &mut BytesMut::new());
        }
        framer.reply(&payload, out);
        Ok(Progress::Continue)
    }

    fn on_auth_switch(
        &mut self,
        pkt: &[u8],
        framer: &mut Framer,
        out: &mut BytesMut,
    ) -> Result<Progress, ProtocolError> {
        let switch: AuthSwitchRequest = ParseBuf(pkt).parse(()).map_err(malformed)?;
        match switch.auth_plugin() {
            AuthPlugin::MysqlNativePassword => {
                let nonce: Vec<u8> = switch
                    .plugin_data()
                    .iter()
                    .copied()
                    .take_while(|&b| b != 0)
                    .collect();
                let scramble = self.scramble(&nonce);
                framer.reply(&scramble, out);
                Ok(Progress::Continue)
            }
            other => Err(ProtocolError::Plugin(
                String::from_utf8_lossy(other.as_bytes()).into_owned(),
            )),
        }
    }

    fn scramble(&self, nonce: &[u8]) -> Vec<u8> {
        mysql_common::auth::plugins::mysql_native_password::scramble_native(
            nonce,
            self.login.password.as_bytes(),
        )
        .map(|s| s.to_vec())
        .unwrap_or_default()
    }
}

/// The reply to `COM_STMT_PREPARE`: the statement packet, then parameter
/// and column definitions, each list followed by an EOF packet.
#[derive(Debug, Default)]
pub struct PrepareReader {
    id: Option<u32>,
    left: u32,
}

impl PrepareReader {
    /// Feeds one packet; returns the statement id once the reply is whole.
    pub fn feed(&mut self, pkt: &[u8]) -> Result<Option<u32>, ProtocolError> {
        if self.id.is_none() {
            if pkt.first() == Some(&0xFF) {
                return Err(server_error(pkt));
            }
            let stmt: StmtPacket = ParseBuf(pkt).parse(()).map_err(malformed)?;
            let block = |n: u16| if n > 0 { u32::from(n) + 1 } else { 0 };
            self.left = block(stmt.num_params()) + block(stmt.num_columns());
            self.id = Some(stmt.statement_id());
        } else {
            self.left = self.left.saturating_sub(1);
        }
        Ok(if self.left == 0 { self.id } else { None })
    }
}

/// The outcome of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// An OK packet (statements that return no rows).
    Done,
    /// A result set with this many rows.
    Rows(u64),
    /// The server's ERR packet for the statement.
    Error(ErrReply),
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ReplyState {
    #[default]
    First,
    Columns(u64),
    ColumnsEof,
    Rows(u64),
}

/// Reads the reply to `COM_QUERY`, `COM_STMT_EXECUTE` or `COM_PING` packet
/// by packet. Rows are counted, not decoded: the load only needs to know
/// the server answered in full. Made by [`Framer::reply_reader`], which
/// knows whether column definitions may be skipped.
#[derive(Debug, Default)]
pub struct ReplyReader {
    state: ReplyState,
    cache_metadata: bool,
}

/// Whether `pkt` is an EOF packet (0xFE and short; a row can start with
/// 0xFE only in a packet of 9 bytes or more).
fn is_eof(pkt: &[u8]) -> bool {
    pkt.first() == Some(&0xFE) && pkt.len() < 9
}

impl ReplyReader {
    /// Whether `pkt`, fed next, is a row of the result set.
    pub fn at_row(&self, pkt: &[u8]) -> bool {
        matches!(self.state, ReplyState::Rows(_)) && !is_eof(pkt) && pkt.first() != Some(&0xFF)
    }

    /// The column count packet: the count, then with cached metadata a
    /// byte saying whether the column definitions follow (if not, the EOF
    /// that ends them comes next).
    fn column_count(&self, pkt: &[u8]) -> Result<ReplyState, ProtocolError> {
        let mut buf = ParseBuf(pkt);
        let n = buf
            .checked_eat_lenenc_int()
            .ok_or_else(|| malformed("bad column count"))?;
        if !self.cache_metadata {
            return Ok(ReplyState::Columns(n));
        }
        match buf.0.first() {
            Some(0) => Ok(ReplyState::ColumnsEof),
            Some(1) => Ok(ReplyState::Columns(n)),
            _ => Err(malformed("bad metadata-follows flag")),
        }
    }

    /// Feeds one packet of the reply; `Some` once the reply is complete.
    pub fn feed(&mut self, pkt: &[u8]) -> Result<Option<Reply>, ProtocolError> {
        let error = |pkt: &[u8]| match server_error(pkt) {
            ProtocolError::Server(e) => Ok(Some(Reply::Error(e))),
            other => Err(other),
        };
        let (next, reply) = match self.state {
            ReplyState::First => match pkt.first() {
                Some(0x00) => (ReplyState::First, Some(Reply::Done)),
                Some(0xFF) => return error(pkt),
                Some(0xFB) | None => return Err(malformed("unexpected reply")),
                Some(_) => (self.column_count(pkt)?, None),
            },
            ReplyState::Columns(n) if n > 1 => (ReplyState::Columns(n - 1), None),
            ReplyState::Columns(_) => (ReplyState::ColumnsEof, None),
            ReplyState::ColumnsEof if is_eof(pkt) => (ReplyState::Rows(0), None),
            ReplyState::ColumnsEof => return Err(malformed("missing EOF after columns")),
            ReplyState::Rows(_) if pkt.first() == Some(&0xFF) => {
                self.state = ReplyState::First;
                return error(pkt);
            }
            ReplyState::Rows(n) if is_eof(pkt) => (ReplyState::First, Some(Reply::Rows(n))),
            ReplyState::Rows(n) => (ReplyState::Rows(n + 1), None),
        };
        self.state = next;
        Ok(reply)
    }
}

/// The columns of a text-protocol row (`None` for SQL NULL).
pub fn text_row(pkt: &[u8]) -> Result<Vec<Option<String>>, ProtocolError> {
    let mut buf = ParseBuf(pkt);
    let mut out = Vec::new();
    while !buf.is_empty() {
        if buf.0.first() == Some(&0xFB) {
            buf.skip(1);
            out.push(None);
            continue;
        }
        let s = buf
            .checked_eat_lenenc_str()
            .ok_or_else(|| malformed("truncated text row"))?;
        out.push(Some(String::from_utf8_lossy(s).into_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::packets::ComStmtExecuteRequestBuilder;

    #[test]
    fn result_sets_are_counted_to_their_eof() {
        let mut r = ReplyReader::default();
        assert_eq!(r.feed(&[1]).unwrap(), None); // one column
        assert_eq!(r.feed(b"\x03defcoldef").unwrap(), None);
        assert_eq!(r.feed(&[0xFE, 0, 0, 2, 0]).unwrap(), None);
        assert_eq!(r.feed(&[0x00, 0x00, 0x01]).unwrap(), None);
        assert_eq!(r.feed(&[0x00, 0x00, 0x02]).unwrap(), None);
        assert_eq!(r.feed(&[0xFE, 0, 0, 2, 0]).unwrap(), Some(Reply::Rows(2)));
        assert_eq!(
            r.feed(&[0x00, 0, 0, 2, 0, 0, 0]).unwrap(),
            Some(Reply::Done)
        );
    }

    #[test]
    fn cached_metadata_skips_the_column_definitions() {
        let framer = Framer {
            cache_metadata: true,
            ..Framer::default()
        };
        let mut r = framer.reply_reader();
        assert_eq!(r.feed(&[1, 0]).unwrap(), None); // one column, no metadata
        assert_eq!(r.feed(&[0xFE, 0, 0, 2, 0]).unwrap(), None);
        assert_eq!(r.feed(&[0x00, 0x00, 0x01]).unwrap(), None);
        assert_eq!(r.feed(&[0xFE, 0, 0, 2, 0]).unwrap(), Some(Reply::Rows(1)));
        assert_eq!(r.feed(&[1, 1]).unwrap(), None); // metadata follows
        assert_eq!(r.feed(b"\x03defcoldef").unwrap(), None);
        assert_eq!(r.feed(&[0xFE, 0, 0, 2, 0]).unwrap(), None);
        assert_eq!(r.feed(&[0xFE, 0, 0, 2, 0]).unwrap(), Some(Reply::Rows(0)));
        assert!(r.feed(&[1, 7]).is_err());
    }

    #[test]
    fn executes_send_parameter_types_only_when_asked() {
        let params = [Value::Int(7), Value::Bytes(b"abc".to_vec()), Value::NULL];
        let (req, _) = ComStmtExecuteRequestBuilder::new(5).build(&params[..]);
        let mut theirs = Vec::new();
        req.serialize(&mut theirs);
        let mut framer = Framer::default();
        let mut typed = BytesMut::new();
        framer.execute(5, &params, true, &mut typed);
        assert_eq!(&typed[4..], &theirs[..]);
        let mut bare = BytesMut::new();
        framer.execute(5, &params, false, &mut bare);
        // Without the 3 type pairs; the flag byte says "no types".
        assert_eq!(bare.len() + 6, typed.len());
        assert_eq!(bare[4 + 11], 0);
    }

    #[test]
    fn errors_carry_code_and_state() {
        let mut pkt = vec![0xFF, 0xBD, 0x04, b'#'];
        pkt.extend_from_slice(b"40001Deadlock found");
        let mut r = ReplyReader::default();
        match r.feed(&pkt).unwrap() {
            Some(Reply::Error(e)) => {
                assert_eq!((e.code, e.state.as_str()), (1213, "40001"));
                assert!(e.message.contains("Deadlock"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_non_mysql_greeting_is_named() {
        let mut h = Handshake::new(Login {
            user: "u".into(),
            password: "p".into(),
            database: "d".into(),
        });
        let e = h
            .on_packet(
                b"HTTP/1.1 400",
                &mut Framer::default(),
                &mut BytesMut::new(),
            )
            .unwrap_err();
        assert!(matches!(e, ProtocolError::NotMysql(_)), "{e}");
    }

    /// A MariaDB-style greeting (no CLIENT_MYSQL bit) with or without
    /// CLIENT_SSL, serialized by mysql_common.
    fn greeting(ssl: bool) -> Vec<u8> {
        let mut caps = CLIENT_CAPS - CapabilityFlags::CLIENT_LONG_PASSWORD;
        if ssl {
            caps |= CapabilityFlags::CLIENT_SSL;
        }
        let hello = HandshakePacket::new(
            10,
            &b"5.5.5-10.11.19-MariaDB"[..],
            7,
            *b"abcdefgh",
            Some(&b"ijklmnopqrst"[..]),
            caps,
            45,
            mysql_common::constants::StatusFlags::empty(),
            Some(&b"mysql_native_password"[..]),
        );
        let mut out = Vec::new();
        hello.serialize(&mut out);
        out
    }

    /// The SSLRequest is packet 1 and the first 32 bytes of the response
    /// sent inside TLS, which is packet 2; both say CLIENT_SSL. A server
    /// without CLIENT_SSL is named.
    #[test]
    fn the_ssl_request_is_the_responses_first_32_bytes_and_packet_1() {
        let hello = greeting(true);
        let req = ssl_request(&hello).unwrap();
        assert_eq!(req.len(), 36);
        assert_eq!(req[..4], [32, 0, 0, 1]);
        let caps = u32::from_le_bytes(req[4..8].try_into().unwrap());
        assert_ne!(caps & CapabilityFlags::CLIENT_SSL.bits(), 0);
        let login = Login {
            user: "u".into(),
            password: "p".into(),
            database: "d".into(),
        };
        let mut framer = Framer::default();
        let mut src = BytesMut::from(&[&[hello.len() as u8, 0, 0, 0][..], &hello].concat()[..]);
        let mut pkt = Vec::new();
        assert!(framer.next_packet(&mut src, &mut pkt).unwrap());
        let mut out = BytesMut::new();
        let mut h = Handshake::new(login.clone()).after_ssl_request();
        h.on_packet(&pkt, &mut framer, &mut out).unwrap();
        assert_eq!(out[3], 2, "the response is packet 2");
        assert_eq!(out[4..36], req[4..], "the SSLRequest is its first 32 bytes");
        assert!(matches!(
            ssl_request(&greeting(false)),
            Err(ProtocolError::NoTls)
        ));
        let mut plain = Handshake::new(login);
        let e = plain.on_packet(
            &greeting(false),
            &mut Framer::default(),
            &mut BytesMut::new(),
        );
        assert!(e.is_ok(), "cleartext needs no CLIENT_SSL");
    }

    #[test]
    fn text_rows_decode_nulls_and_strings() {
        let row = text_row(&[3, b'a', b'b', b'c', 0xFB, 1, b'7']).unwrap();
        assert_eq!(row, vec![Some("abc".into()), None, Some("7".into())]);
    }
}
