//! One fixed-rate trial through the lab: receivers bound, kernel counters
//! read in A, R and B, senders run, in-flight frames drained, counters read
//! again, and the generator's counts reconciled with the kernel's.

use super::frame::FrameSize;
use super::tx::{Generator, Route};
use super::worker::{self, Receiver, RecvJob, RecvStats, SendJob, SendStats};
use crate::load::LoadError;
use crate::model::topology::*;
use crate::probe::netns::NsCounters;
use crate::shutdown::Shutdown;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// UDP ports: senders bind SRC_PORT, receivers listen on DST_PORT.
const SRC_PORT: u16 = 9000;
const DST_PORT: u16 = 9001;
/// How long receivers keep reading after the senders stop.
const DRAIN: Duration = Duration::from_millis(100);

/// How one trial is run.
#[derive(Clone, Debug)]
pub struct TrialPlan {
    /// The lab to send through (its namespaces must exist).
    pub topology: Topology,
    /// Every frame's size; already checked against the lab's MTU.
    pub frame: FrameSize,
    /// Send A→B and B→A at once, each at half of `rate`.
    pub bidirectional: bool,
    /// Total frames/s over both directions; `None`: as fast as possible.
    pub rate: Option<f64>,
    /// How long the senders send; receivers keep reading 100 ms longer
    /// for frames still in flight.
    pub duration: Duration,
    /// CPUs the generator's threads are spread over.
    pub cpus: Option<Vec<usize>>,
    /// How the senders hand frames to the kernel.
    pub generator: Generator,
}

/// Where the receiver's count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountedBy {
    /// `recvmmsg` saw every frame the receiving interface took in.
    Socket,
    /// The socket fell behind (its buffer overflowed), so frames received
    /// are the receiving interface's RX packets.
    Interface,
}

/// One direction of a trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Direction {
    /// `a_to_b` or `b_to_a`.
    pub name: String,
    /// Frames the generator handed to the kernel.
    pub sent: u64,
    /// Frames the sending interface took from the generator: its `ip -s
    /// link` TX packets plus TX dropped (a veth drops when the router's
    /// input queue is full, which is the router's loss).
    pub sent_kernel: u64,
    /// Frames that reached the receiving host (its interface's RX packets).
    pub received_kernel: u64,
    /// Distinct frames the receiving socket read.
    pub received_socket: u64,
    /// Which count `lost` subtracts from `sent`.
    pub counted_by: CountedBy,
    /// `sent - received`, with `received` from `counted_by`.
    pub lost: u64,
    /// The kernel's loss: `sent_kernel - received_kernel`.
    pub lost_kernel: u64,
    /// Frames whose sequence number the socket had already read (0 on a
    /// sound path: a frame is never sent twice under one number).
    pub duplicates: u64,
    /// Frames the socket read after a higher sequence number.
    pub reordered: u64,
    /// Frames the router handed to its interface toward the receiver: that
    /// interface's TX packets plus TX dropped (a veth drops when the
    /// receiving host's input queue is full, which is the receiver's loss).
    #[serde(default)]
    pub router_out: u64,
    /// Frames lost in the router: taken by the sending interface
    /// (`sent_kernel`) but never handed on toward the receiver (the router's
    /// input queue full, its firewall, its routing).
    #[serde(default)]
    pub lost_in_router: u64,
    /// Frames lost entering the receiving host: handed on by the router
    /// (`router_out`) but not received (its input queue full, its socket
    /// buffer full).
    #[serde(default)]
    pub lost_at_receiver: u64,
}

/// Where a step's frames were lost, from the kernel's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossSite {
    /// In the router R (its input queue, firewall or routing).
    Router,
    /// Entering the receiving host (its input queue or socket buffer).
    Receiver,
}

impl LossSite {
    /// Where more frames were lost (the router on a tie); `None` when
    /// neither lost any.
    pub fn of(in_router: u64, at_receiver: u64) -> Option<LossSite> {
        match (in_router, at_receiver) {
            (0, 0) => None,
            (router, receiver) if router >= receiver => Some(LossSite::Router),
            _ => Some(LossSite::Receiver),
        }
    }

    /// In prose: `in the router R`, `entering the receiving host`.
    pub fn describe(self) -> &'static str {
        match self {
            LossSite::Router => "in the router R",
            LossSite::Receiver => "entering the receiving host",
        }
    }
}

/// The kernel's counters over the trial, per node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelCounters {
    /// Host A's counters (sender of `a_to_b`).
    pub a: NsCounters,
    /// The router's counters (forwarded datagrams, both interfaces).
    pub r: NsCounters,
    /// Host B's counters (sender of `b_to_a`).
    pub b: NsCounters,
}

/// What one trial measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialReport {
    /// The offered total rate (frames/s); `None` when unpaced.
    pub offered_pps: Option<f64>,
    /// Frames sent per second of sending, summed over directions.
    pub sent_pps: f64,
    /// Seconds of sending: the longest sender's, drain not included.
    pub duration_s: f64,
    /// One entry per direction: `a_to_b`, then `b_to_a` when bidirectional.
    pub directions: Vec<Direction>,
    /// Each node's counters over the trial (after minus before).
    pub kernel: KernelCounters,
    /// Frames lost over all directions.
    pub lost: u64,
    /// Frames the generator handed to the kernel, over all directions.
    pub sent: u64,
    /// Frames that arrived, over all directions: `sent - lost`.
    pub received: u64,
    /// Frames R routed onward (its `ForwDatagrams`; this kernel counts a
    /// packet before the nftables forward hook, so firewall drops are in
    /// it, and they show as loss at B).
    pub forwarded: u64,
    /// Generator send calls the kernel refused.
    pub send_errors: u64,
    /// Every direction's generator counts equal the kernel's: frames sent
    /// as the sending interface counted them, and the loss as the kernel
    /// saw it.
    pub reconciled: bool,
    /// One-way latency of every frame received, in microseconds, all
    /// directions merged. Not stored: `None` in a report read back from the
    /// store.
    #[serde(skip)]
    pub latency: Option<Histogram<u64>>,
}

impl TrialReport {
    /// Frames lost in the router, over all directions.
    pub fn lost_in_router(&self) -> u64 {
        self.directions.iter().map(|d| d.lost_in_router).sum()
    }

    /// Frames lost entering the receiving hosts, over all directions.
    pub fn lost_at_receiver(&self) -> u64 {
        self.directions.iter().map(|d| d.lost_at_receiver).sum()
    }

    /// Where most of the trial's frames were lost; `None` when neither the
    /// router nor a receiver lost any.
    pub fn loss_site(&self) -> Option<LossSite> {
        LossSite::of(self.lost_in_router(), self.lost_at_receiver())
    }

    /// Frames received per second of sending.
    pub fn received_pps(&self) -> f64 {
        self.received as f64 / self.duration_s.max(1e-9)
    }

    /// Lost frames as a fraction of frames sent.
    pub fn loss_fraction(&self) -> f64 {
        if self.sent == 0 {
            return 1.0;
        }
        self.lost as f64 / self.sent as f64
    }
}

struct Flow {
    name: &'static str,
    send: SendJob,
    recv: RecvJob,
    tx_ns: &'static str,
    tx_if: &'static str,
    rx_if: &'static str,
    /// The router's interface toward the receiver.
    router_out_if: &'static str,
}

fn flows(plan: &TrialPlan) -> Vec<Flow> {
    let t = &plan.topology;
    let dirs = if plan.bidirectional { 2.0 } else { 1.0 };
    let cpu = |i: usize| plan.cpus.as_ref().map(|c| c[i % c.len()]);
    let flow = |name,
                from_ns: &str,
                from,
                to_ns: &str,
                to,
                i,
                tx_ns,
                tx_if: &'static str,
                rx_if,
                router_out_if,
                gateway| Flow {
        name,
        send: SendJob {
            netns: Some(from_ns.to_string()),
            route: Route {
                from: SocketAddrV4::new(from, SRC_PORT),
                to: SocketAddrV4::new(to, DST_PORT),
                ifname: tx_if.to_string(),
                gateway,
            },
            generator: plan.generator,
            frame: plan.frame,
            rate: plan.rate.map(|r| r / dirs),
            duration: plan.duration,
            cpu: cpu(i),
        },
        recv: RecvJob {
            netns: to_ns.to_string(),
            bind: SocketAddrV4::new(to, DST_PORT),
            frame: plan.frame,
            cpu: cpu(i + 1),
        },
        tx_ns,
        tx_if,
        rx_if,
        router_out_if,
    };
    let mut v = vec![flow(
        "a_to_b", &t.a.netns, A_ADDR, &t.b.netns, B_ADDR, 0, "a", A_IF, B_IF, R_B_IF, R_A_ADDR,
    )];
    if plan.bidirectional {
        v.push(flow(
            "b_to_a", &t.b.netns, B_ADDR, &t.a.netns, A_ADDR, 1, "b", B_IF, A_IF, R_A_IF, R_B_ADDR,
        ));
    }
    v
}

fn read_all(t: &Topology) -> Result<KernelCounters, LoadError> {
    let read = |ns: &str| NsCounters::read(ns).map_err(|e| LoadError::Setup(e.to_string()));
    Ok(KernelCounters {
        a: read(&t.a.netns)?,
        r: read(&t.r.netns)?,
        b: read(&t.b.netns)?,
    })
}

/// Runs one trial. `stop` ends it early (Ctrl-C).
pub fn run(plan: &TrialPlan, stop: &Shutdown) -> Result<TrialReport, LoadError> {
    let flows = flows(plan);
    let receivers = flows
        .iter()
        .map(|f| Receiver::bind(f.recv.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| LoadError::Setup(format!("receiver socket in the lab: {e}")))?;
    let before = read_all(&plan.topology)?;
    let recv_stop = AtomicBool::new(false);
    let (sent, received) = std::thread::scope(|s| {
        let rx: Vec<_> = receivers
            .into_iter()
            .map(|r| s.spawn(|| r.run(&recv_stop)))
            .collect();
        let tx: Vec<_> = flows
            .iter()
            .map(|f| s.spawn(|| worker::send(&f.send, stop)))
            .collect();
        let sent: Vec<_> = tx.into_iter().map(join).collect();
        std::thread::sleep(DRAIN);
        recv_stop.store(true, Ordering::Relaxed);
        let received: Vec<_> = rx.into_iter().map(join).collect();
        (sent, received)
    });
    let sent = sent.into_iter().collect::<Result<Vec<SendStats>, _>>()?;
    let received = received
        .into_iter()
        .collect::<Result<Vec<RecvStats>, _>>()?;
    let after = read_all(&plan.topology)?;
    let kernel = KernelCounters {
        a: after.a.since(&before.a),
        r: after.r.since(&before.r),
        b: after.b.since(&before.b),
    };
    Ok(reconcile(plan, &flows, &sent, received, kernel))
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, std::io::Result<T>>) -> Result<T, LoadError> {
    h.join()
        .map_err(|_| LoadError::Setup("a generator thread panicked".into()))?
        .map_err(LoadError::Io)
}

fn reconcile(
    plan: &TrialPlan,
    flows: &[Flow],
    sent: &[SendStats],
    received: Vec<RecvStats>,
    kernel: KernelCounters,
) -> TrialReport {
    let mut latency = crate::load::histogram::new_histogram();
    let mut directions = Vec::new();
    for ((f, s), r) in flows.iter().zip(sent).zip(received) {
        let (tx_node, rx_node) = if f.tx_ns == "a" {
            (&kernel.a, &kernel.b)
        } else {
            (&kernel.b, &kernel.a)
        };
        let sent_kernel = tx_node
            .link(f.tx_if)
            .map_or(0, |l| l.tx_packets + l.tx_dropped);
        let received_kernel = rx_node.link(f.rx_if).map_or(0, |l| l.rx_packets);
        let counted_by = if r.seq.unique >= received_kernel {
            CountedBy::Socket
        } else {
            CountedBy::Interface
        };
        let received = match counted_by {
            CountedBy::Socket => r.seq.unique,
            CountedBy::Interface => received_kernel,
        };
        let _ = latency.add(&r.latency);
        let router_out = kernel
            .r
            .link(f.router_out_if)
            .map_or(0, |l| l.tx_packets + l.tx_dropped);
        directions.push(Direction {
            name: f.name.to_string(),
            sent: s.sent,
            sent_kernel,
            received_kernel,
            received_socket: r.seq.unique,
            counted_by,
            lost: s.sent.saturating_sub(received),
            lost_kernel: sent_kernel.saturating_sub(received_kernel),
            duplicates: r.seq.duplicates,
            reordered: r.seq.reordered,
            router_out,
            lost_in_router: sent_kernel.saturating_sub(router_out),
            lost_at_receiver: router_out.saturating_sub(received),
        });
    }
    let elapsed = sent
        .iter()
        .map(|s| s.elapsed)
        .max()
        .unwrap_or_default()
        .as_secs_f64();
    let total_sent: u64 = directions.iter().map(|d| d.sent).sum();
    let lost: u64 = directions.iter().map(|d| d.lost).sum();
    TrialReport {
        offered_pps: plan.rate,
        sent_pps: if elapsed > 0.0 {
            total_sent as f64 / elapsed
        } else {
            0.0
        },
        duration_s: elapsed,
        lost,
        sent: total_sent,
        received: total_sent - lost,
        forwarded: kernel.r.ip.forw_datagrams,
        send_errors: sent.iter().map(|s| s.errors).sum(),
        reconciled: directions
            .iter()
            .all(|d| d.sent == d.sent_kernel && d.lost == d.lost_kernel),
        directions,
        kernel,
        latency: Some(latency),
    }
}
