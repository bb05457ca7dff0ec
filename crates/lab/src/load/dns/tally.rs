//! What one DNS load thread counted, mergeable across threads: the common
//! [`LoadResult`] (answers, latency, answers per second) plus what only a
//! datagram protocol has (queries sent and lost per second, RCODEs,
//! unmatched datagrams, the schedule lag).

use crate::load::histogram::new_histogram;
use crate::load::{ErrorKind, LoadResult};
use crate::units::Micros;
use hdrhistogram::Histogram;
use hickory_proto::op::ResponseCode;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Tally {
    /// Answers (any RCODE) with their latency and 100 ms timeline.
    pub result: LoadResult,
    pub sent: u64,
    pub in_flight: u64,
    pub lost: u64,
    /// Datagrams that matched no query in flight (late, or a wrong question).
    pub mismatched: u64,
    /// Answers by RCODE (the header's four bits).
    pub rcodes: [u64; 16],
    pub sent_by_sec: Vec<u64>,
    /// Lost queries by the second they were sent in.
    pub lost_by_sec: Vec<u64>,
    /// Latency by the second the query was sent in (ramp mode).
    pub latency_by_sec: Option<Vec<Histogram<u64>>>,
    /// First time the thread fell behind its schedule: (seconds in,
    /// queries behind, offered rate then).
    pub fell_behind: Option<(f64, u64, f64)>,
    /// When the thread stopped sending, that far behind its schedule
    /// (seconds in).
    pub stopped_at: Option<f64>,
    /// Answers the kernel dropped at the thread's own sockets (their
    /// receive buffers were full), by the second the drops were seen in.
    pub dropped_by_sec: Vec<u64>,
    pub last_answer_ns: u64,
    pub elapsed_ns: u64,
    /// The query IDs this thread's flights hold, and when they all were in
    /// flight while queries were due.
    pub ids: IdCount,
    /// DoT and DoH: what the first connection's handshake settled.
    pub tls: Option<crate::tls::client::Negotiated>,
    /// What the thread's connections met.
    pub streams: super::transport::StreamCounts,
}

/// The ID space of the generator's clients: each holds 65536 query IDs
/// (less one batch, kept free), and a query holds its ID until its answer
/// or its timeout, so a paced run can ask at most `ids / timeout` queries
/// a second of a server that does not answer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IdCount {
    /// Query IDs over the clients.
    pub ids: u64,
    /// The clients (sockets, or source ports under XDP).
    pub clients: u32,
    /// How long a query waits for its answer.
    pub timeout: Duration,
    /// The first time (seconds in) every ID was in flight while the
    /// schedule was behind: the ID space, not the server, held it back.
    pub ran_out_at: Option<f64>,
}

impl IdCount {
    /// The highest rate the IDs allow when no answer comes back, per second.
    pub fn max_rate(&self) -> f64 {
        self.ids as f64 / self.timeout.as_secs_f64().max(1e-9)
    }

    fn merge(&mut self, o: &IdCount) {
        self.ids += o.ids;
        self.clients += o.clients;
        self.timeout = self.timeout.max(o.timeout);
        self.ran_out_at = match (self.ran_out_at, o.ran_out_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

fn bump(v: &mut Vec<u64>, sec: u32, by: u64) {
    let i = sec as usize;
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] += by;
}

impl Tally {
    pub fn new(per_second_latency: bool) -> Tally {
        Tally {
            result: LoadResult::new(),
            sent: 0,
            in_flight: 0,
            lost: 0,
            mismatched: 0,
            rcodes: [0; 16],
            sent_by_sec: Vec::new(),
            lost_by_sec: Vec::new(),
            latency_by_sec: per_second_latency.then(Vec::new),
            fell_behind: None,
            stopped_at: None,
            dropped_by_sec: Vec::new(),
            last_answer_ns: 0,
            elapsed_ns: 0,
            ids: IdCount::default(),
            tls: None,
            streams: Default::default(),
        }
    }

    pub fn sent_at(&mut self, sec: u32, n: u64) {
        if n > 0 {
            self.sent += n;
            self.in_flight += n;
            bump(&mut self.sent_by_sec, sec, n);
        }
    }

    /// `n` answers dropped at this thread's sockets, seen in second `sec`.
    pub fn dropped_at(&mut self, sec: u32, n: u64) {
        if n > 0 {
            bump(&mut self.dropped_by_sec, sec, n);
        }
    }

    /// Answers dropped at the client's own sockets, in all.
    pub fn dropped(&self) -> u64 {
        self.dropped_by_sec.iter().sum()
    }

    pub fn lost_at(&mut self, send_sec: u32) {
        self.lost += 1;
        self.in_flight -= 1;
        self.result.errors.add(ErrorKind::Timeout);
        bump(&mut self.lost_by_sec, send_sec, 1);
    }

    /// A datagram that is no DNS answer: mismatched, and a protocol error
    /// (a malformed reply is an error even in a ramp, where losses are not).
    pub fn malformed(&mut self) {
        self.mismatched += 1;
        self.result.errors.add(ErrorKind::Protocol);
    }

    /// One matched answer. NOERROR and NXDOMAIN are answers to the
    /// question; any other RCODE also counts as a status error.
    pub fn answered(&mut self, rcode: ResponseCode, latency: Micros, send_sec: u32, now_ns: u64) {
        self.in_flight -= 1;
        self.last_answer_ns = self.last_answer_ns.max(now_ns);
        self.result.record(latency, Duration::from_nanos(now_ns));
        self.rcodes[(u16::from(rcode) & 0xF) as usize] += 1;
        if !matches!(rcode, ResponseCode::NoError | ResponseCode::NXDomain) {
            self.result.errors.add(ErrorKind::Status);
        }
        if let Some(per_sec) = &mut self.latency_by_sec {
            let i = send_sec as usize;
            while per_sec.len() <= i {
                per_sec.push(new_histogram());
            }
            let _ = per_sec[i].record(latency.0.max(1));
        }
    }

    /// A failed `sendmmsg`: a full socket buffer is no error (the queries
    /// go out on the next round); anything else is counted.
    pub fn send_error(&mut self, e: &std::io::Error) {
        if e.kind() != std::io::ErrorKind::WouldBlock {
            self.result.errors.add(ErrorKind::Write);
        }
    }

    /// A failed `recvmmsg`: ICMP port unreachable shows up as ECONNREFUSED.
    pub fn recv_error(&mut self, e: &std::io::Error) {
        let kind = if e.raw_os_error() == Some(libc::ECONNREFUSED) {
            ErrorKind::Connect
        } else {
            ErrorKind::Read
        };
        self.result.errors.add(kind);
    }

    pub fn merge(&mut self, o: &Tally) {
        self.result.merge(&o.result);
        self.streams.add(&o.streams);
        self.sent += o.sent;
        self.lost += o.lost;
        self.mismatched += o.mismatched;
        for (a, b) in self.rcodes.iter_mut().zip(o.rcodes) {
            *a += b;
        }
        if self.tls.is_none() {
            self.tls.clone_from(&o.tls);
        }
        add_series(&mut self.sent_by_sec, &o.sent_by_sec);
        add_series(&mut self.lost_by_sec, &o.lost_by_sec);
        add_series(&mut self.dropped_by_sec, &o.dropped_by_sec);
        self.stopped_at = match (self.stopped_at, o.stopped_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let (Some(a), Some(b)) = (&mut self.latency_by_sec, &o.latency_by_sec) {
            while a.len() < b.len() {
                a.push(new_histogram());
            }
            for (x, y) in a.iter_mut().zip(b) {
                let _ = x.add(y);
            }
        }
        self.fell_behind = match (self.fell_behind, o.fell_behind) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        self.last_answer_ns = self.last_answer_ns.max(o.last_answer_ns);
        self.elapsed_ns = self.elapsed_ns.max(o.elapsed_ns);
        self.ids.merge(&o.ids);
    }
}

fn add_series(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_merge_into_one_count() {
        let mut a = Tally::new(true);
        let mut b = Tally::new(true);
        a.sent_at(0, 3);
        a.answered(ResponseCode::NoError, Micros(100), 0, 10);
        a.answered(ResponseCode::Refused, Micros(200), 0, 20);
        a.lost_at(0);
        b.sent_at(1, 1);
        b.answered(ResponseCode::NXDomain, Micros(300), 1, 1_500_000_000);
        b.fell_behind = Some((0.5, 900, 1000.0));
        a.ids = IdCount {
            ids: 100,
            clients: 1,
            timeout: Duration::from_secs(1),
            ran_out_at: None,
        };
        b.ids = IdCount {
            ran_out_at: Some(2.5),
            ..a.ids
        };
        a.merge(&b);
        assert_eq!((a.ids.ids, a.ids.clients), (200, 2));
        assert_eq!(a.ids.ran_out_at, Some(2.5));
        assert_eq!(a.ids.max_rate(), 200.0);
        assert_eq!((a.sent, a.lost, a.result.requests), (4, 1, 3));
        assert_eq!(a.sent_by_sec, vec![3, 1]);
        assert_eq!(
            crate::load::timeline::per_second(&a.result.timeline),
            vec![2, 1]
        );
        assert_eq!((a.rcodes[0], a.rcodes[3], a.rcodes[5]), (1, 1, 1));
        assert_eq!(a.result.errors.status, 1);
        assert_eq!(a.result.errors.timeout, 1);
        assert_eq!(a.latency_by_sec.as_ref().unwrap()[1].len(), 1);
        assert_eq!(a.fell_behind.unwrap().1, 900);
    }

    #[test]
    fn a_malformed_reply_is_a_protocol_error() {
        let mut a = Tally::new(false);
        a.malformed();
        assert_eq!((a.mismatched, a.result.errors.protocol), (1, 1));
    }
}
