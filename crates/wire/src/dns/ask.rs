//! One DNS question asked from inside a namespace: how the lab checks that
//! its servers answer, and how tests check what leaves (or does not).

use super::codec::Query;
use super::codec::{self, Template};
use hickory_proto::op::ResponseCode;
use hickory_proto::rr::{Name, RecordType};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// Asks `server` for `name`/`rtype` from inside namespace `netns` (or the
/// caller's own namespace with `None`); returns the answer's RCODE.
pub fn ask(
    netns: Option<&str>,
    server: SocketAddr,
    name: &str,
    rtype: RecordType,
    timeout: Duration,
) -> Result<ResponseCode, String> {
    let q = Query {
        name: Name::from_ascii(name).map_err(|e| format!("bad name {name}: {e}"))?,
        rtype,
    };
    let template = Template::new(&q)?;
    let netns = netns.map(str::to_string);
    std::thread::spawn(move || {
        if let Some(ns) = &netns {
            crate::procfs::netns::join(ns).map_err(|e| e.to_string())?;
        }
        exchange(&template, server, timeout)
    })
    .join()
    .map_err(|_| "the DNS probe thread panicked".to_string())?
}

fn exchange(t: &Template, server: SocketAddr, timeout: Duration) -> Result<ResponseCode, String> {
    let io = |e: std::io::Error| format!("{server}: {e}");
    let sock = UdpSocket::bind(if server.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    })
    .map_err(io)?;
    sock.connect(server).map_err(io)?;
    sock.set_read_timeout(Some(timeout)).map_err(io)?;
    let id = (std::process::id() as u16) ^ 0x5A5A;
    let mut buf = [0u8; 1232];
    let n = t.write(id, &mut buf);
    sock.send(&buf[..n]).map_err(io)?;
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        let n = match sock.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(io(e)),
        };
        if let Some(r) = codec::parse_response(&buf[..n]) {
            if r.id == id && codec::same_question(t.question(), r.question) {
                return Ok(r.rcode);
            }
        }
    }
    Err(format!("no answer from {server} within {timeout:?}"))
}
