//! An in-process HTTP/1.1 test server whose faults the HTTP load driver's
//! tests control (std threads, one per connection, on 127.0.0.1:0). It
//! counts what it receives so tests can compare the client's counts with
//! the server's.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the server answers each request.
#[derive(Clone, Copy, Debug)]
pub enum Behaviour {
    /// `200 OK` with a small body; closes when the request asks to.
    Ok,
    /// `500 Internal Server Error` with a small body.
    Status500,
    /// Promises 100 body bytes, sends 10, closes.
    CloseMidResponse,
    /// Reads requests and never answers.
    Silent,
    /// Answers with bytes that are not HTTP.
    Garbage,
    /// Like `Ok`, but answers falling in `[after, after + length)` since
    /// the server started are held until the window ends.
    Stall { after: Duration, length: Duration },
}

/// What the server saw.
#[derive(Debug, Default)]
pub struct Seen {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    /// Requests carrying `Connection: close`.
    pub close_requests: AtomicU64,
    /// Requests per finished connection.
    pub per_connection: Mutex<Vec<u64>>,
    pub peers: Mutex<Vec<IpAddr>>,
}

pub struct TestServer {
    pub addr: SocketAddr,
    pub seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl TestServer {
    pub fn start(behaviour: Behaviour) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let seen = Arc::new(Seen::default());
        let stop = Arc::new(AtomicBool::new(false));
        let threads = Arc::new(Mutex::new(Vec::new()));
        let started = Instant::now();
        let acceptor = {
            let (seen, stop, threads) = (seen.clone(), stop.clone(), threads.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, peer)) => {
                            seen.connections.fetch_add(1, Ordering::SeqCst);
                            seen.peers.lock().unwrap().push(peer.ip());
                            let (seen, stop) = (seen.clone(), stop.clone());
                            let h = std::thread::spawn(move || {
                                serve(stream, behaviour, started, &seen, &stop)
                            });
                            threads.lock().unwrap().push(h);
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(1))
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
        };
        TestServer {
            addr,
            seen,
            stop,
            threads,
            acceptor: Some(acceptor),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops accepting, waits for every connection thread, and returns
    /// what was seen.
    pub fn finish(mut self) -> Arc<Seen> {
        self.shut();
        self.seen.clone()
    }

    fn shut(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        let handles: Vec<_> = self.threads.lock().unwrap().drain(..).collect();
        for h in handles {
            let _ = h.join();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shut();
    }
}

fn serve(mut s: TcpStream, b: Behaviour, started: Instant, seen: &Seen, stop: &AtomicBool) {
    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
    let _ = s.set_nodelay(true);
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let mut count = 0;
    'conn: while !stop.load(Ordering::Relaxed) {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => break,
        }
        // Requests in these tests carry no body: each ends at a blank line.
        while let Some(end) = find(&pending, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
            pending.drain(..end + 4);
            count += 1;
            seen.requests.fetch_add(1, Ordering::SeqCst);
            let close = head.contains("\r\nconnection: close");
            if close {
                seen.close_requests.fetch_add(1, Ordering::SeqCst);
            }
            if !answer(&mut s, b, started) || close {
                break 'conn;
            }
        }
    }
    seen.per_connection.lock().unwrap().push(count);
}

/// Writes the answer; false when the connection must end.
fn answer(s: &mut TcpStream, b: Behaviour, started: Instant) -> bool {
    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    let reply: &[u8] = match b {
        Behaviour::Ok => ok,
        Behaviour::Status500 => {
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops"
        }
        Behaviour::CloseMidResponse => {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b");
            return false;
        }
        Behaviour::Silent => return true,
        Behaviour::Garbage => b"SSH-2.0-not-http\r\n\r\n",
        Behaviour::Stall { after, length } => {
            let since = started.elapsed();
            if since >= after && since < after + length {
                std::thread::sleep(after + length - since);
            }
            ok
        }
    };
    s.write_all(reply).is_ok()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
