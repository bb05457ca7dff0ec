//! One DNS load thread: joins the lab's namespace, opens its UDP sockets,
//! and loops: receive a batch, expire timeouts, send what the schedule (or
//! the outstanding cap) allows, sleep until the next event. It owns its
//! counters and hands back one [`Tally`] at the end.

use super::schedule::Schedule;
use super::sys::{Batch, BATCH};
use super::tally::Tally;
use super::transport::Transport;
use super::Generator;
use crate::shutdown::Shutdown;
use crate::units::Micros;
use crate::wire::dns::codec::{self, Template};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Query IDs per socket.
const IDS: usize = 1 << 16;
/// How far behind its schedule a paced thread may fall before it stops
/// sending: past this the rest of the run would measure the client, and
/// catching up would send a burst the schedule never asked for.
const GIVE_UP_BEHIND: Duration = Duration::from_secs(1);

/// What one thread does.
pub struct Plan {
    pub server: SocketAddr,
    pub netns: Option<String>,
    pub sockets: u32,
    pub schedule: Schedule,
    pub duration: Duration,
    pub timeout: Duration,
    pub templates: Arc<Vec<Template>>,
    pub first_query: usize,
    /// Stop sending after this many queries (tests use it for exact counts).
    pub quota: Option<u64>,
    pub cpus: Option<Vec<usize>>,
    /// Keep a latency histogram per send second (ramp mode).
    pub per_second_latency: bool,
    /// Sockets or AF_XDP.
    pub generator: Generator,
    /// UDP, TCP, DoT or DoH.
    pub transport: super::DnsTransport,
    /// DoT: each connection's TLS.
    pub tls: Option<super::tcp::DnsTls>,
    /// DoH: each connection's TLS and requests.
    pub doh: Option<super::doh::DohPlan>,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    query: u32,
    generation: u32,
    /// When the query was sent (flat mode) or scheduled (paced modes), ns.
    start_ns: u64,
    send_sec: u32,
    /// When its timeout passes (send time + timeout), ns.
    deadline_ns: u64,
    live: bool,
}

/// One flight (a socket, or a source port under XDP) and the queries in
/// flight on it, by ID.
struct Flight {
    slots: Vec<Slot>,
    /// Free IDs, reused oldest first so a late answer rarely meets a reused ID.
    free: VecDeque<u16>,
}

/// A query waiting for its answer, in send order (so deadlines are sorted).
struct Pending {
    socket: u16,
    id: u16,
    generation: u32,
    deadline_ns: u64,
}

pub fn run(plan: &Plan, shutdown: &Shutdown) -> std::io::Result<Tally> {
    if let Some(ns) = &plan.netns {
        crate::procfs::netns::join(ns).map_err(std::io::Error::other)?;
    }
    if let Some(cpus) = &plan.cpus {
        crate::placement::affinity::pin_current_thread(cpus)?;
    }
    let (transport, note) = open_transport(plan)?;
    let flights = (0..plan.sockets.max(1)).map(|_| Flight::new()).collect();
    let mut tally = Tally::new(plan.per_second_latency);
    tally.result.notes.extend(note);
    tally.tls = transport.negotiated();
    let clients = plan.sockets.max(1);
    tally.ids = super::tally::IdCount {
        ids: (IDS - BATCH) as u64 * u64::from(clients),
        clients,
        timeout: plan.timeout,
        ran_out_at: None,
    };
    let mut w = Worker {
        plan,
        transport,
        flights,
        pending: VecDeque::new(),
        batch: Batch::new(),
        tally,
        start: Instant::now(),
        next_query: plan.first_query % plan.templates.len(),
        next_socket: 0,
        generation: 0,
        drops_seen: 0,
        drops_read_sec: None,
    };
    w.run(shutdown);
    w.tally.streams = w.transport.counts();
    Ok(w.tally)
}

impl Flight {
    fn new() -> Flight {
        Flight {
            slots: vec![Slot::default(); IDS],
            free: (0..=u16::MAX).collect(),
        }
    }
}

/// Opens the thread's transport, as `plan.generator` says. `auto` takes
/// XDP when the server's address has an XDP path and sockets when it has
/// none (loopback); any other XDP failure under `auto` is said in the
/// returned note, and sockets carry the load.
fn open_transport(plan: &Plan) -> std::io::Result<(Box<dyn Transport>, Option<String>)> {
    let flights = plan.sockets.max(1) as usize;
    if let Some(doh) = &plan.doh {
        let t = super::doh::DohTransport::open(plan.server, flights, doh.clone())?;
        return Ok((Box::new(t), None));
    }
    if plan.transport.is_stream() {
        let tls = plan.tls.clone();
        return Ok((
            Box::new(super::tcp::TcpTransport::open(plan.server, flights, tls)?),
            None,
        ));
    }
    let netns = plan.netns.as_deref();
    let sockets = || -> std::io::Result<Box<dyn Transport>> {
        Ok(Box::new(super::transport::SocketTransport::open(
            plan.server,
            flights,
        )?))
    };
    let SocketAddr::V4(server) = plan.server else {
        return match plan.generator {
            Generator::Xdp => Err(std::io::Error::other("the xdp generator speaks IPv4 only")),
            Generator::Auto | Generator::Socket => Ok((sockets()?, None)),
        };
    };
    match plan.generator {
        Generator::Socket => Ok((sockets()?, None)),
        Generator::Xdp => {
            let t = super::xdp::XdpTransport::open(server, flights, netns)
                .map_err(std::io::Error::other)?;
            let note = t.describe();
            Ok((Box::new(t), Some(note)))
        }
        Generator::Auto => match super::xdp::XdpTransport::open(server, flights, netns) {
            Ok(t) => {
                let note = t.describe();
                Ok((Box::new(t), Some(note)))
            }
            Err(crate::load::xdp::XdpError::NoPath { .. }) => Ok((sockets()?, None)),
            Err(e) => Ok((
                sockets()?,
                Some(format!("generator auto: UDP sockets, as XDP failed ({e})")),
            )),
        },
    }
}

struct Worker<'a> {
    plan: &'a Plan,
    transport: Box<dyn Transport>,
    flights: Vec<Flight>,
    pending: VecDeque<Pending>,
    batch: Box<Batch>,
    tally: Tally,
    start: Instant,
    next_query: usize,
    next_socket: usize,
    generation: u32,
    /// The kernel's drop count over this thread's sockets, last read.
    drops_seen: u64,
    /// The second the drop count was last read in.
    drops_read_sec: Option<u32>,
}

impl Worker<'_> {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn run(&mut self, shutdown: &Shutdown) {
        let send_end = self.plan.duration.as_nanos() as u64;
        let hard_end = send_end + self.plan.timeout.as_nanos() as u64;
        let cap = self
            .plan
            .schedule
            .outstanding()
            .unwrap_or((IDS as u64 - BATCH as u64) * self.flights.len() as u64);
        let mut send_end = send_end;
        let mut hard_end = hard_end;
        loop {
            let now = self.now_ns();
            let sending = now < send_end && self.plan.quota.map_or(true, |q| self.tally.sent < q);
            if shutdown.is_triggered() || now >= hard_end || (!sending && self.pending.is_empty()) {
                break;
            }
            let got = self.receive();
            self.expire(self.now_ns());
            self.count_drops(now);
            let mut sent = 0;
            if sending && self.hopelessly_behind(now) {
                // Stop the ramp here: from now on it would measure the
                // client. Answers still in flight get their timeout.
                send_end = now;
                hard_end = now + self.plan.timeout.as_nanos() as u64;
            } else if sending {
                let want = self.wanted(now, cap);
                sent = self.send(want);
            }
            if got == 0 && sent == 0 {
                self.idle(now, sending);
            }
        }
        self.tally.elapsed_ns = self.tally.last_answer_ns.max(send_end.min(self.now_ns()));
        self.lose_the_rest();
        self.count_drops(u64::MAX);
    }

    /// Whether a ramp's thread is more than [`GIVE_UP_BEHIND`] behind its
    /// schedule; notes the time in the tally when it is. A fixed rate runs
    /// on, behind or not (as dnsperf -Q does), and says it fell behind.
    fn hopelessly_behind(&mut self, now: u64) -> bool {
        if !self.plan.schedule.is_ramp() {
            return false;
        }
        let Some(next) = self.plan.schedule.time_of(self.tally.sent) else {
            return false;
        };
        let t = now as f64 / 1e9;
        let behind = t - next > GIVE_UP_BEHIND.as_secs_f64();
        if behind {
            self.tally.stopped_at = Some(t);
        }
        behind
    }

    /// Reads the kernel's count of answers dropped at this thread's own
    /// sockets (full receive buffers) once a second, and books the new ones
    /// to the second they were noticed in; `u64::MAX` reads it one last time.
    fn count_drops(&mut self, now: u64) {
        let sec = if now == u64::MAX {
            (self.now_ns() / 1_000_000_000) as u32
        } else {
            (now / 1_000_000_000) as u32
        };
        if now != u64::MAX && self.drops_read_sec == Some(sec) {
            return;
        }
        self.drops_read_sec = Some(sec);
        let total = self.transport.drops();
        let new = total.saturating_sub(self.drops_seen);
        self.drops_seen = total;
        self.tally.dropped_at(sec, new);
    }

    /// Queries to send now: what the schedule says is due (noting when the
    /// thread falls behind it), or what the outstanding cap leaves room for.
    fn wanted(&mut self, now: u64, cap: u64) -> u64 {
        let room = cap.saturating_sub(self.tally.in_flight);
        let quota_left = self
            .plan
            .quota
            .map_or(u64::MAX, |q| q.saturating_sub(self.tally.sent));
        let t = now as f64 / 1e9;
        let want = match self.plan.schedule.due(t) {
            None => room,
            Some(due) => {
                let behind = due.saturating_sub(self.tally.sent);
                let limit = self.plan.schedule.behind_limit(t);
                if behind > limit && self.tally.fell_behind.is_none() {
                    let rate = self.plan.schedule.rate_at(t).unwrap_or(0.0);
                    self.tally.fell_behind = Some((t, behind, rate));
                }
                if behind > limit && behind > room && self.tally.ids.ran_out_at.is_none() {
                    // Every ID is in flight: the ID space holds it back.
                    self.tally.ids.ran_out_at = Some(t);
                }
                behind.min(room)
            }
        };
        // One batch per socket at a time, so answers are read between
        // batches however far behind the schedule is: a thread that caught
        // up in one burst would overflow its own receive buffers, and then
        // read a second's worth of answers at once.
        let burst = (BATCH * self.flights.len()) as u64;
        want.min(quota_left).min(burst)
    }

    /// Sleeps until a response may be waiting or the next query is due.
    fn idle(&self, now: u64, sending: bool) {
        let next_due = if sending {
            self.plan
                .schedule
                .time_of(self.tally.sent)
                .map(|t| (t * 1e9) as u64)
        } else {
            None
        };
        let next_deadline = self.pending.front().map(|p| p.deadline_ns);
        let until = [next_due, next_deadline]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + 1_000_000);
        let wait = Duration::from_nanos(until.saturating_sub(now).min(1_000_000));
        self.transport.wait(wait);
    }

    /// Sends up to `n` queries in batches; returns how many left.
    fn send(&mut self, mut n: u64) -> u64 {
        let mut total = 0;
        while n > 0 {
            let s = self.next_socket;
            self.next_socket = (s + 1) % self.flights.len();
            let k = (n as usize)
                .min(BATCH)
                .min(self.flights[s].free.len().saturating_sub(BATCH));
            if k == 0 {
                break;
            }
            let now = self.now_ns();
            let sec = (now / 1_000_000_000) as u32;
            let mut ids = [0u16; BATCH];
            for (i, id_slot) in ids.iter_mut().enumerate().take(k) {
                let id = self.flights[s].free.pop_front().expect("k <= free IDs");
                *id_slot = id;
                let q = self.next_query;
                self.next_query = (q + 1) % self.plan.templates.len();
                self.batch.lens[i] = self.plan.templates[q].write(id, &mut self.batch.bufs[i]);
                let scheduled = self
                    .plan
                    .schedule
                    .time_of(self.tally.sent + i as u64)
                    .map(|t| ((t * 1e9) as u64).min(now));
                if let Some(at) = scheduled {
                    self.tally.result.record_lag(Micros((now - at) / 1000));
                }
                let scheduled = scheduled.unwrap_or(now);
                self.generation = self.generation.wrapping_add(1);
                self.flights[s].slots[id as usize] = Slot {
                    query: q as u32,
                    generation: self.generation,
                    start_ns: scheduled,
                    send_sec: sec,
                    deadline_ns: u64::MAX,
                    live: true,
                };
            }
            let done = match self.transport.send(s, &mut self.batch, k) {
                Ok(d) => d,
                Err(e) => {
                    self.tally.send_error(&e);
                    0
                }
            };
            for &id in ids[done..k].iter().rev() {
                self.flights[s].slots[id as usize].live = false;
                self.flights[s].free.push_front(id);
            }
            let deadline = now + self.plan.timeout.as_nanos() as u64;
            for &id in &ids[..done] {
                self.flights[s].slots[id as usize].deadline_ns = deadline;
                let generation = self.flights[s].slots[id as usize].generation;
                self.pending.push_back(Pending {
                    socket: s as u16,
                    id,
                    generation,
                    deadline_ns: deadline,
                });
            }
            self.tally.sent_at(sec, done as u64);
            total += done as u64;
            if done < k {
                break;
            }
            n -= done as u64;
        }
        self.transport.flush();
        total
    }

    /// Reads every waiting response; returns how many datagrams came.
    fn receive(&mut self) -> usize {
        let mut got = 0;
        loop {
            let n = match self.transport.recv(&mut self.batch) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    self.tally.recv_error(&e);
                    continue;
                }
            };
            let now = self.now_ns();
            for i in 0..n {
                self.answer(usize::from(self.batch.from[i]), i, now);
            }
            got += n;
        }
        got
    }

    /// Matches datagram `i` of the batch to its query by ID and question.
    fn answer(&mut self, s: usize, i: usize, now: u64) {
        let buf = &self.batch.bufs[i][..self.batch.lens[i]];
        let Some(r) = codec::parse_response(buf) else {
            self.tally.malformed();
            return;
        };
        let slot = self.flights[s].slots[r.id as usize];
        let question = self.plan.templates[slot.query as usize].question();
        if !slot.live || !codec::same_question(question, r.question) {
            self.tally.mismatched += 1;
            return;
        }
        self.flights[s].slots[r.id as usize].live = false;
        self.flights[s].free.push_back(r.id);
        // An answer after its query's timeout is a lost query, as for
        // dnsperf and resperf, even when this thread reads it before its
        // expiry pass (a loaded machine runs the worker late): a count of
        // answers must not depend on when the worker got a CPU.
        if now > slot.deadline_ns {
            self.tally.lost_at(slot.send_sec);
            return;
        }
        let latency = Micros(now.saturating_sub(slot.start_ns) / 1000);
        self.tally.answered(r.rcode, latency, slot.send_sec, now);
    }

    /// Counts queries whose deadline passed as lost and frees their IDs.
    fn expire(&mut self, now: u64) {
        while let Some(p) = self.pending.front() {
            let slot = &mut self.flights[p.socket as usize].slots[p.id as usize];
            let stale = !slot.live || slot.generation != p.generation;
            if !stale && p.deadline_ns > now {
                break;
            }
            if !stale {
                slot.live = false;
                self.tally.lost_at(slot.send_sec);
                self.flights[p.socket as usize].free.push_back(p.id);
            }
            self.pending.pop_front();
        }
    }

    /// At the end, whatever is still unanswered is lost.
    fn lose_the_rest(&mut self) {
        self.expire(u64::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::dns::schedule::Mode;

    fn worker(plan: &Plan) -> Worker<'_> {
        let sockets = super::super::transport::SocketTransport::open(plan.server, 4).unwrap();
        Worker {
            plan,
            transport: Box::new(sockets),
            flights: (0..plan.sockets).map(|_| Flight::new()).collect(),
            pending: VecDeque::new(),
            batch: Batch::new(),
            tally: Tally::new(true),
            start: Instant::now(),
            next_query: 0,
            next_socket: 0,
            generation: 0,
            drops_seen: 0,
            drops_read_sec: None,
        }
    }

    fn plan(mode: Mode) -> Plan {
        Plan {
            // A UDP connect needs no listener, and nothing is sent here.
            server: "127.0.0.1:9".parse().unwrap(),
            netns: None,
            sockets: 4,
            schedule: Schedule::new(mode, 1),
            duration: Duration::from_secs(20),
            timeout: Duration::from_secs(2),
            templates: Arc::new(Vec::new()),
            first_query: 0,
            quota: None,
            cpus: None,
            per_second_latency: true,
            generator: Generator::Socket,
            transport: super::super::DnsTransport::Udp,
            tls: None,
            doh: None,
        }
    }

    /// A response read after its query's deadline is lost, not answered,
    /// whenever the worker gets to read it (dnsperf's and resperf's rule);
    /// one read before the deadline is an answer.
    #[test]
    fn an_answer_after_its_timeout_is_a_lost_query() {
        let q = codec::Query {
            name: "h1.bench.test.".parse().unwrap(),
            rtype: hickory_proto::rr::RecordType::A,
        };
        let mut p = plan(Mode::Flat { outstanding: 1 });
        p.templates = Arc::new(vec![Template::new(&q).unwrap()]);
        let mut w = worker(&p);
        w.tally.sent_at(0, 2);
        for (id, deadline, now) in [(7u16, 1_000, 2_000), (8, 5_000, 2_000)] {
            w.flights[0].slots[id as usize] = Slot {
                query: 0,
                generation: 1,
                start_ns: 0,
                send_sec: 0,
                deadline_ns: deadline,
                live: true,
            };
            let n = p.templates[0].write(id, &mut w.batch.bufs[0]);
            w.batch.bufs[0][2] |= 0x80; // QR: a response, RCODE 0
            w.batch.lens[0] = n;
            w.answer(0, 0, now);
        }
        assert_eq!((w.tally.lost, w.tally.result.requests), (1, 1));
    }

    #[test]
    fn a_thread_far_behind_sends_one_batch_per_socket_at_a_time_and_gives_up_past_a_second() {
        let ramp = plan(Mode::Ramp {
            max_rate: 150_000.0,
            over: Duration::from_secs(20),
        });
        let mut w = worker(&ramp);
        // 9 s in with nothing sent, 303,750 queries behind: at most one
        // batch per socket goes before the answers are read again.
        let nine = 9_000_000_000;
        assert_eq!(w.wanted(nine, u64::MAX), (4 * BATCH) as u64);
        assert!(w.tally.fell_behind.is_some());
        // Its next query was due at 0.008 s: that is hopelessly behind.
        assert!(w.hopelessly_behind(nine));
        assert_eq!(w.tally.stopped_at, Some(9.0));
        // A fixed rate runs on, however far behind (dnsperf -Q).
        let fixed = plan(Mode::Fixed { rate: 1e6 });
        let mut w = worker(&fixed);
        assert!(!w.hopelessly_behind(nine));
        assert_eq!(w.wanted(nine, u64::MAX), (4 * BATCH) as u64);
    }
}
