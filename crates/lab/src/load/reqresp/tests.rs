//! The lifecycle's fault tests, against an in-process fake server that
//! speaks a line protocol (`HELLO`/`READY`, then `Q`/`OK` per transaction):
//! a third request/response protocol is one [`Protocol`] impl, and every
//! fault the server plays is counted once, by kind, as the server counted
//! it.

use super::*;
use crate::load::event_loop::run_workers;
use crate::load::{LoadResult, LoadSpec};
use crate::shutdown::Shutdown;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The fake protocol: one line per message.
struct Line {
    recv: Vec<u8>,
}

struct LineRun {
    addr: SocketAddr,
}

impl Protocol for Line {
    type Driver = LineRun;
    type Local = ();
    const SERVER_SPEAKS_FIRST: bool = false;

    fn local(_: &Shared<LineRun>) {}

    fn new(_: SmallRng, _: &Ctx<'_, Self>) -> Self {
        Line { recv: Vec::new() }
    }

    fn open(run: &LineRun) -> io::Result<Stream> {
        Stream::tcp(run.addr)
    }

    fn hello(&mut self, _: &Ctx<'_, Self>, out: &mut BytesMut) -> Verdict {
        out.extend_from_slice(b"HELLO\n");
        Verdict::Send
    }

    fn receive(&mut self, from: &mut Stream) -> io::Result<Received> {
        let len = self.recv.len();
        self.recv.resize(len + 512, 0);
        let read = from.read(&mut self.recv[len..]);
        self.recv.truncate(len + read.as_ref().map_or(0, |&n| n));
        read.map(|bytes| Received { bytes, room: 512 })
    }

    fn take_message(
        &mut self,
        at: Awaiting,
        _: &mut Ctx<'_, Self>,
        _: &mut BytesMut,
    ) -> Option<Verdict> {
        let end = self.recv.iter().position(|&b| b == b'\n')?;
        let line: Vec<u8> = self.recv.drain(..=end).collect();
        Some(match (at, &line[..end]) {
            (Awaiting::Handshake, b"READY") => Verdict::Ready,
            (Awaiting::Handshake, _) => Verdict::Lost(ErrorKind::Connect),
            (Awaiting::Reply, b"OK") => Verdict::Done,
            (Awaiting::Reply, b"ERR") => Verdict::Failed(ErrorKind::Other),
            _ => Verdict::Lost(ErrorKind::Protocol),
        })
    }

    fn prepare(&mut self, _: &mut Ctx<'_, Self>, _: &mut BytesMut) -> Verdict {
        Verdict::Ready
    }

    fn begin(&mut self, _: &mut Ctx<'_, Self>, out: &mut BytesMut) -> Verdict {
        out.extend_from_slice(b"Q\n");
        Verdict::Send
    }

    fn goodbye(&mut self, out: &mut BytesMut) {
        out.extend_from_slice(b"BYE\n");
    }

    fn reset(&mut self) {
        self.recv.clear();
    }
}

/// What the fake server does, per connection (requests numbered from 1).
#[derive(Clone, Copy, Default)]
struct Faults {
    /// Refuse the login.
    deny_login: bool,
    /// Close the connection on the request after this many.
    drop_after: Option<u64>,
    /// Answer every n-th request with a line that means nothing.
    garble_every: Option<u64>,
    /// Answer every n-th request with ERR.
    refuse_every: Option<u64>,
    /// On the first connection only, never answer this request.
    stall_first_at: Option<u64>,
}

/// What the fake server counted.
#[derive(Default)]
struct Counts {
    accepted: AtomicU64,
    ok: AtomicU64,
    dropped: AtomicU64,
    garbled: AtomicU64,
    refused: AtomicU64,
    stalled: AtomicU64,
    /// The most requests one connection carried.
    most_per_connection: AtomicU64,
}

struct FakeServer {
    addr: SocketAddr,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
    acceptor: Option<std::thread::JoinHandle<()>>,
}

impl FakeServer {
    fn start(faults: Faults) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let counts = Arc::new(Counts::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counts.clone(), stop.clone());
        let acceptor = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let first = c.accepted.fetch_add(1, Ordering::Relaxed) == 0;
                        let c = c.clone();
                        std::thread::spawn(move || serve(conn, faults, first, &c));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        FakeServer {
            addr,
            counts,
            stop,
            acceptor: Some(acceptor),
        }
    }

    fn count(&self, of: impl Fn(&Counts) -> &AtomicU64) -> u64 {
        of(&self.counts).load(Ordering::Relaxed)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

/// One connection of the fake server; returns when the client leaves or
/// a fault closes it.
fn serve(conn: TcpStream, faults: Faults, first: bool, counts: &Counts) {
    let mut out = conn.try_clone().unwrap();
    let mut lines = BufReader::new(conn).lines();
    match lines.next() {
        Some(Ok(l)) if l == "HELLO" && !faults.deny_login => {
            let _ = out.write_all(b"READY\n");
        }
        _ => {
            let _ = out.write_all(b"NO\n");
            return;
        }
    }
    let mut n = 0;
    for line in lines {
        match line.as_deref() {
            Ok("Q") => {}
            _ => return,
        }
        n += 1;
        counts.most_per_connection.fetch_max(n, Ordering::Relaxed);
        let every = |k: Option<u64>| k.is_some_and(|k| n % k == 0);
        let reply: &[u8] = if faults.drop_after.is_some_and(|d| n > d) {
            counts.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        } else if first && faults.stall_first_at == Some(n) {
            counts.stalled.fetch_add(1, Ordering::Relaxed);
            continue;
        } else if every(faults.garble_every) {
            counts.garbled.fetch_add(1, Ordering::Relaxed);
            b"???\n"
        } else if every(faults.refuse_every) {
            counts.refused.fetch_add(1, Ordering::Relaxed);
            b"ERR\n"
        } else {
            counts.ok.fetch_add(1, Ordering::Relaxed);
            b"OK\n"
        };
        if out.write_all(reply).is_err() {
            return;
        }
    }
}

/// A closed loop of `connections` on one thread that stops after
/// `transactions` (or `duration`).
fn spec(connections: u32, transactions: u64) -> LoadSpec {
    let mut spec = LoadSpec::closed(connections, 1, Duration::from_secs(20));
    spec.max_requests = Some(transactions);
    spec
}

fn run(spec: &LoadSpec, addr: SocketAddr) -> LoadResult {
    let threads = spec.effective_threads();
    let shared = Shared::new(spec, &Shutdown::new(), threads, LineRun { addr });
    run_workers::<Conn<Line>>(&shared, threads).unwrap().0
}

#[test]
fn every_answered_transaction_is_counted_once_blocking_or_polled() {
    for connections in [1, 3] {
        let server = FakeServer::start(Faults::default());
        let r = run(&spec(connections, 40), server.addr);
        assert_eq!(r.requests, 40, "{connections} connections: {:?}", r.errors);
        assert_eq!(r.requests, server.count(|c| &c.ok));
        assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
        assert_eq!(r.connections_opened, u64::from(connections));
        assert_eq!(server.count(|c| &c.accepted), u64::from(connections));
    }
}

#[test]
fn a_dropped_connection_costs_one_read_error_and_is_replaced() {
    for connections in [1, 3] {
        let server = FakeServer::start(Faults {
            drop_after: Some(3),
            ..Faults::default()
        });
        let r = run(&spec(connections, 40), server.addr);
        let dropped = server.count(|c| &c.dropped);
        // Each connection's life is 3 answers and a drop, but for the lives
        // still open at the end (one per connection, up to 3 answers each):
        // 40 = ok + dropped <= 4 dropped + 3 connections.
        let fewest = (40 - 3 * u64::from(connections)).div_ceil(4);
        assert!(
            dropped >= fewest,
            "{connections} connections: {dropped} drops, fewer than {fewest}"
        );
        assert_eq!(r.errors.read, dropped, "{:?}", r.errors);
        assert_eq!(r.requests, server.count(|c| &c.ok));
        assert_eq!(r.requests + r.errors.read, 40, "{:?}", r.errors);
        // Each drop is replaced, but those while draining (at most one per
        // connection).
        let opened = r.connections_opened;
        assert!(opened >= dropped && opened <= dropped + u64::from(connections));
    }
}

#[test]
fn a_garbled_reply_is_a_protocol_error_and_the_connection_is_replaced() {
    let server = FakeServer::start(Faults {
        garble_every: Some(5),
        ..Faults::default()
    });
    let r = run(&spec(2, 30), server.addr);
    let garbled = server.count(|c| &c.garbled);
    assert!(garbled > 0);
    assert_eq!(r.errors.protocol, garbled, "{:?}", r.errors);
    assert_eq!(r.requests, server.count(|c| &c.ok));
    assert_eq!(r.requests + garbled, 30);
    let opened = r.connections_opened;
    assert!(opened >= garbled && opened <= garbled + 2, "{opened}");
}

#[test]
fn a_refused_transaction_is_counted_and_the_connection_kept() {
    let server = FakeServer::start(Faults {
        refuse_every: Some(4),
        ..Faults::default()
    });
    let r = run(&spec(2, 30), server.addr);
    let refused = server.count(|c| &c.refused);
    assert!(refused > 0);
    assert_eq!(r.errors.other, refused, "{:?}", r.errors);
    assert_eq!(r.errors.total(), refused, "{:?}", r.errors);
    assert_eq!(r.requests + refused, 30);
    assert_eq!(r.connections_opened, 2);
}

#[test]
fn a_stalled_reply_times_out_once_and_the_connection_is_replaced() {
    let server = FakeServer::start(Faults {
        stall_first_at: Some(2),
        ..Faults::default()
    });
    let mut spec = spec(1, 10);
    // Long enough that no answered request on a busy machine takes it.
    spec.timeout = Duration::from_secs(1);
    let r = run(&spec, server.addr);
    assert_eq!(server.count(|c| &c.stalled), 1);
    assert_eq!(r.errors.timeout, 1, "{:?}", r.errors);
    assert_eq!(r.errors.total(), 1, "{:?}", r.errors);
    assert_eq!(r.requests, 9);
    assert_eq!(r.requests, server.count(|c| &c.ok));
    assert_eq!(r.connections_opened, 2);
}

#[test]
fn connreqs_replaces_the_connection_after_that_many_transactions() {
    let server = FakeServer::start(Faults::default());
    let mut spec = spec(2, 20);
    spec.requests_per_connection = Some(3);
    let r = run(&spec, server.addr);
    assert_eq!(r.requests, 20);
    assert_eq!(r.requests, server.count(|c| &c.ok));
    assert_eq!(server.count(|c| &c.most_per_connection), 3);
    assert!(r.connections_opened >= 7, "{}", r.connections_opened);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
}

#[test]
fn a_refused_login_or_a_dead_port_backs_off_between_connect_errors() {
    let server = FakeServer::start(Faults {
        deny_login: true,
        ..Faults::default()
    });
    let dead = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    for addr in [server.addr, dead] {
        let spec = LoadSpec::closed(2, 1, Duration::from_millis(600));
        let started = std::time::Instant::now();
        let r = run(&spec, addr);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        assert_eq!(r.requests, 0);
        assert!(r.errors.connect > 0, "{addr}: {:?}", r.errors);
        assert_eq!(r.errors.total(), r.errors.connect, "{:?}", r.errors);
        // At most one attempt per 10 ms (the shortest backoff) each.
        assert!(
            r.errors.connect <= 2 * (elapsed_ms / 10 + 1),
            "{addr}: {} connect errors in {elapsed_ms} ms",
            r.errors.connect
        );
    }
    // The login, not the connect, failed there.
    assert!(server.count(|c| &c.accepted) > 0);
}
