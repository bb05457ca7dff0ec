//! A small blocking client for setup work: readiness checks, scale
//! detection, the pre-run vacuum, dataset loading with COPY, and the checks
//! tests make. Not used on the load path.

use super::auth::{Handshake, Progress};
use super::codec::{self, PgError, RecvBuf};
use super::conninfo::{ConnConfig, Host};
use bytes::BytesMut;
use postgres_protocol::message::frontend;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn connect(host: &Host, timeout: Duration) -> std::io::Result<Stream> {
        match host {
            Host::Tcp(addr) => {
                let s = TcpStream::connect_timeout(addr, timeout)?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Host::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path)?)),
        }
    }

    fn set_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Stream::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
        }
    }
}

/// Rows of text values; `None` is SQL NULL.
pub type Rows = Vec<Vec<Option<String>>>;

/// A blocking PostgreSQL connection for setup and checks (simple Query
/// protocol, text results), over TCP or a Unix socket; not the load path,
/// which runs `conn` in the shared event loop.
pub struct Client {
    stream: Stream,
    recv: RecvBuf,
    send: BytesMut,
    timeout: Option<Duration>,
}

impl Client {
    /// Connects and authenticates; every read and write is bounded by
    /// `timeout`.
    pub fn connect(cfg: &ConnConfig, timeout: Duration) -> Result<Client, PgError> {
        let stream = Stream::connect(&cfg.host, timeout)?;
        stream.set_timeout(Some(timeout))?;
        let mut c = Client {
            stream,
            recv: RecvBuf::with_capacity(16 << 10),
            send: BytesMut::with_capacity(1024),
            timeout: Some(timeout),
        };
        let mut hs = Handshake::start(cfg, &mut c.send)?;
        c.flush()?;
        loop {
            c.fill()?;
            while let Some(f) = c.recv.next_frame()? {
                if hs.on_frame(f, &mut c.send)? == Progress::Ready {
                    return Ok(c);
                }
            }
            c.flush()?;
        }
    }

    /// Changes the bound on each read and write (`None`: wait as long as it
    /// takes, for long statements such as index builds).
    pub fn set_timeout(&mut self, t: Option<Duration>) -> Result<(), PgError> {
        self.timeout = t;
        Ok(self.stream.set_timeout(t)?)
    }

    fn flush(&mut self) -> Result<(), PgError> {
        if !self.send.is_empty() {
            self.stream
                .write_all(&self.send)
                .map_err(|e| self.io_error(e))?;
            self.send.clear();
        }
        Ok(())
    }

    fn fill(&mut self) -> Result<(), PgError> {
        let n = self
            .stream
            .read(self.recv.spare())
            .map_err(|e| self.io_error(e))?;
        if n == 0 {
            return Err(PgError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        self.recv.filled(n);
        Ok(())
    }

    fn io_error(&self, e: std::io::Error) -> PgError {
        match (e.kind(), self.timeout) {
            (std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut, Some(t)) => {
                PgError::Timeout(t)
            }
            _ => PgError::Io(e),
        }
    }

    /// Runs `sql` (one or more statements) with the simple protocol and
    /// returns the rows of the last result; the first error is returned
    /// after the server is ready again.
    pub fn query(&mut self, sql: &str) -> Result<Rows, PgError> {
        codec::simple_query(sql, &mut self.send)?;
        self.flush()?;
        self.collect_rows()
    }

    /// Runs statements that return nothing of interest.
    pub fn execute(&mut self, sql: &str) -> Result<(), PgError> {
        self.query(sql).map(|_| ())
    }

    /// The single integer a query such as `select count(*) ...` returns.
    pub fn query_i64(&mut self, sql: &str) -> Result<i64, PgError> {
        let rows = self.query(sql)?;
        rows.first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_deref())
            .and_then(|v| v.parse::<i64>().ok())
            .ok_or_else(|| PgError::Protocol(format!("`{sql}` did not return one integer")))
    }

    fn collect_rows(&mut self) -> Result<Rows, PgError> {
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            while let Some(f) = self.recv.next_frame()? {
                match f.tag {
                    b'T' => rows.clear(),
                    b'D' => rows.push(
                        codec::data_row(f.body)?
                            .into_iter()
                            .map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                            .collect(),
                    ),
                    b'E' => {
                        error.get_or_insert(codec::server_error(f.body));
                    }
                    b'G' => {
                        // COPY FROM STDIN where a plain query was expected.
                        frontend::copy_fail("unexpected COPY", &mut self.send)?;
                        self.flush()?;
                    }
                    b'Z' => return error.map_or(Ok(rows), Err),
                    _ => {}
                }
            }
            self.fill()?;
        }
    }

    /// Runs `COPY ... FROM STDIN` and streams what `produce` writes into the
    /// buffer it is handed; `produce` returns `false` when it has no more.
    pub fn copy_in(
        &mut self,
        sql: &str,
        mut produce: impl FnMut(&mut BytesMut) -> bool,
    ) -> Result<(), PgError> {
        codec::simple_query(sql, &mut self.send)?;
        self.flush()?;
        self.await_copy_in()?;
        let mut chunk = BytesMut::with_capacity(64 << 10);
        loop {
            chunk.clear();
            let more = produce(&mut chunk);
            if !chunk.is_empty() {
                frontend::CopyData::new(&chunk[..])?.write(&mut self.send);
                self.flush()?;
            }
            if !more {
                break;
            }
        }
        frontend::copy_done(&mut self.send);
        self.flush()?;
        self.collect_rows().map(|_| ())
    }

    fn await_copy_in(&mut self) -> Result<(), PgError> {
        loop {
            while let Some(f) = self.recv.next_frame()? {
                match f.tag {
                    b'G' => return Ok(()),
                    b'E' => {
                        let e = codec::server_error(f.body);
                        self.collect_rows()?;
                        return Err(e);
                    }
                    b'Z' => {
                        return Err(PgError::Protocol(
                            "the server did not start COPY FROM STDIN".into(),
                        ))
                    }
                    _ => {}
                }
            }
            self.fill()?;
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.send.clear();
        frontend::terminate(&mut self.send);
        let _ = self.stream.write_all(&self.send);
    }
}
