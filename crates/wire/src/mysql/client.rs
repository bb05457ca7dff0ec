//! A blocking client for setup and checks: building the dataset, reading
//! the schema, the server's status counters and variables. The load itself
//! runs on the non-blocking workers.

use super::codec::{self, Framer, Handshake, Login, PrepareReader, Progress, ProtocolError, Reply};
use super::url::MysqlUrl;
use bytes::BytesMut;
use mysql_common::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Why a setup exchange with the server failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The TCP connection was refused or timed out (nothing listens, or
    /// the server is still starting).
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The address from the URL.
        addr: std::net::SocketAddr,
        /// What `connect` said.
        source: std::io::Error,
    },
    /// A read or write on the connected socket failed or timed out.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The server refused something (an ERR packet: see
    /// [`ClientError::server_code`]) or did not speak the protocol.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

impl ClientError {
    /// The server's error number, if the server refused something.
    pub fn server_code(&self) -> Option<u16> {
        match self {
            ClientError::Protocol(ProtocolError::Server(e)) => Some(e.code),
            _ => None,
        }
    }
}

/// Rows of a text result set.
pub type Rows = Vec<Vec<Option<String>>>;

/// A blocking connection for setup and checks (text queries, server-side
/// prepared statements, `SHOW GLOBAL STATUS`); not the load path, which
/// runs `conn` in the shared event loop.
pub struct Client {
    stream: TcpStream,
    framer: Framer,
    recv: BytesMut,
    send: BytesMut,
    server_version: String,
}

impl Client {
    /// Connects and authenticates; each read or write waits at most
    /// `timeout`.
    pub fn connect(url: &MysqlUrl, timeout: Duration) -> Result<Client, ClientError> {
        let stream = TcpStream::connect_timeout(&url.addr, timeout).map_err(|source| {
            ClientError::Connect {
                addr: url.addr,
                source,
            }
        })?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        let mut c = Client {
            stream,
            framer: Framer::default(),
            recv: BytesMut::with_capacity(16 << 10),
            send: BytesMut::new(),
            server_version: String::new(),
        };
        c.handshake(url)?;
        Ok(c)
    }

    fn handshake(&mut self, url: &MysqlUrl) -> Result<(), ClientError> {
        let mut hs = Handshake::new(Login {
            user: url.user.clone(),
            password: url.password.clone(),
            database: url.database.clone(),
        });
        let mut greeted = false;
        loop {
            let pkt = match self.packet() {
                Ok(p) => p,
                Err(e) if !greeted => return Err(not_mysql(e)),
                Err(e) => return Err(e),
            };
            greeted = true;
            let mut out = BytesMut::new();
            let step = hs.on_packet(&pkt, &mut self.framer, &mut out)?;
            self.write(&out)?;
            if step == Progress::Ready {
                self.server_version = hs.server_version().to_string();
                return Ok(());
            }
        }
    }

    /// Whether the server skips unchanged column definitions on this
    /// connection (and so on the load's, which ask for the same).
    pub fn caches_metadata(&self) -> bool {
        self.framer.caches_metadata()
    }

    /// The version string from the server's greeting.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        if !bytes.is_empty() {
            self.stream.write_all(bytes)?;
        }
        Ok(())
    }

    /// Reads the next whole packet.
    fn packet(&mut self) -> Result<Vec<u8>, ClientError> {
        loop {
            let mut pkt = Vec::new();
            if self.framer.next_packet(&mut self.recv, &mut pkt)? {
                return Ok(pkt);
            }
            let mut buf = [0u8; 16 << 10];
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                )
                .into());
            }
            self.recv.extend_from_slice(&buf[..n]);
        }
    }

    /// Sends the framed command in `self.send` and reads its reply,
    /// collecting text rows.
    fn round_trip(&mut self) -> Result<Rows, ClientError> {
        let send = std::mem::take(&mut self.send);
        self.write(&send)?;
        self.send = send;
        self.send.clear();
        let mut reader = self.framer.reply_reader();
        let mut rows = Vec::new();
        loop {
            let pkt = self.packet()?;
            if reader.at_row(&pkt) {
                rows.push(codec::text_row(&pkt)?);
            }
            match reader.feed(&pkt)? {
                Some(Reply::Error(e)) => return Err(ProtocolError::Server(e).into()),
                Some(_) => return Ok(rows),
                None => {}
            }
        }
    }

    /// Runs one statement and returns its rows (text protocol).
    pub fn query(&mut self, sql: &str) -> Result<Rows, ClientError> {
        self.framer.query(sql, &mut self.send);
        self.round_trip()
    }

    /// Runs statements that return no rows.
    pub fn execute(&mut self, sql: &str) -> Result<(), ClientError> {
        self.query(sql).map(|_| ())
    }

    /// The first column of the first row as an integer.
    pub fn query_i64(&mut self, sql: &str) -> Result<i64, ClientError> {
        let rows = self.query(sql)?;
        let cell = rows.first().and_then(|r| r.first()).cloned().flatten();
        cell.and_then(|s| s.parse().ok()).ok_or_else(|| {
            ProtocolError::Malformed(format!("`{sql}` did not return an integer")).into()
        })
    }

    /// Prepares `sql` server-side and returns the statement id.
    pub fn prepare(&mut self, sql: &str) -> Result<u32, ClientError> {
        self.framer.prepare(sql, &mut self.send);
        let send = std::mem::take(&mut self.send);
        self.write(&send)?;
        self.send = send;
        self.send.clear();
        let mut reader = PrepareReader::default();
        loop {
            let pkt = self.packet()?;
            if let Some(id) = reader.feed(&pkt)? {
                return Ok(id);
            }
        }
    }

    /// Executes a prepared statement; returns the number of rows.
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<u64, ClientError> {
        self.framer.execute(id, params, true, &mut self.send);
        let send = std::mem::take(&mut self.send);
        self.write(&send)?;
        self.send = send;
        self.send.clear();
        let mut reader = self.framer.reply_reader();
        loop {
            let pkt = self.packet()?;
            match reader.feed(&pkt)? {
                Some(Reply::Error(e)) => return Err(ProtocolError::Server(e).into()),
                Some(Reply::Rows(n)) => return Ok(n),
                Some(Reply::Done) => return Ok(0),
                None => {}
            }
        }
    }

    /// `SHOW GLOBAL STATUS LIKE name` as a number.
    pub fn global_status(&mut self, name: &str) -> Result<u64, ClientError> {
        let rows = self.query(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
        let v = rows.first().and_then(|r| r.get(1)).cloned().flatten();
        v.and_then(|s| s.parse().ok()).ok_or_else(|| {
            ProtocolError::Malformed(format!("no global status variable {name}")).into()
        })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let mut out = BytesMut::new();
        self.framer.quit(&mut out);
        let _ = self.stream.write_all(&out);
    }
}

/// A failure before the greeting means the port is not a MySQL server.
fn not_mysql(e: ClientError) -> ClientError {
    let why = match &e {
        ClientError::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => {
            "it sent no greeting".to_string()
        }
        ClientError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            "it sent no greeting".to_string()
        }
        ClientError::Protocol(ProtocolError::Malformed(m)) => {
            format!("its first bytes are not a MySQL packet: {m}")
        }
        _ => return e,
    };
    ProtocolError::NotMysql(why).into()
}
