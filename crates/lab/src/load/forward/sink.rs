//! Sending only, into a sink: frames from the namespace scalelab runs in
//! (a private one the user made and entered with `ip netns exec`) to an
//! address in 198.18.0.0/15 behind one of its interfaces, for a fixed
//! time, at a rate or as fast as the generator can. No router and no
//! receiver: the frames are counted by the sending interface's own TX
//! counter (`ip -s link`), as `bench/xdp-ab.sh` counts trafgen in the
//! same sink, and reconciled with the generator's own count.

use super::frame::FrameSize;
use super::tx::{Generator, Route};
use super::worker::{self, SendJob};
use crate::load::{process_cpu, LoadError};
use crate::probe::netns::{LinkCounters, NsCounters};
use crate::shutdown::Shutdown;
use serde::Serialize;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

/// The UDP ports of the frames: from the discard port to the discard port
/// (RFC 863), which the sink, dropping everything, never answers.
const PORT: u16 = 9;
/// How the namespace is named in errors: scalelab did not name it.
const OWN_NS: &str = "the namespace scalelab runs in";

/// One sink run.
#[derive(Clone, Debug)]
pub struct SinkPlan {
    /// Where the frames go (198.18.0.0/15, not this namespace's own).
    pub dest: Ipv4Addr,
    /// How frames are handed to the kernel.
    pub generator: Generator,
    /// Every frame's size in bytes, FCS included (checked against the
    /// interface's MTU when the run starts).
    pub frame_size: u32,
    /// Frames/s; `None` sends as fast as the generator can.
    pub rate: Option<f64>,
    /// How long to send.
    pub duration: Duration,
}

/// What a sink run sent, by the generator's count and the interface's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SinkReport {
    /// The interface the route to `dest` names.
    pub interface: String,
    /// How frames were handed to the kernel.
    pub generator: Generator,
    /// Ethernet frame size in bytes, FCS included.
    pub frame_size: u32,
    /// The rate asked for (frames/s); `None` when unpaced.
    pub offered_pps: Option<f64>,
    /// Frames the generator handed to the kernel.
    pub sent: u64,
    /// Failed send calls (their frames were not sent).
    pub send_errors: u64,
    /// The interface's TX packets over the run: frames the sink took.
    pub tx_packets: u64,
    /// The interface's TX dropped over the run (the sink's queue full).
    pub tx_dropped: u64,
    /// Seconds of sending, the drain of queued frames included.
    pub duration_s: f64,
    /// `tx_packets` per second of sending.
    pub tx_pps: f64,
    /// CPU seconds scalelab used (user + system, all threads) while
    /// sending: the generator, and the sink's receive work wherever the
    /// kernel ran it inline on the sending thread.
    pub cpu_s: f64,
    /// `sent` equals `tx_packets + tx_dropped`: every frame the generator
    /// counted, the interface counted.
    pub reconciled: bool,
}

/// Refuses a sink that is not a lab's: scalelab must run inside a private
/// namespace and `dest` be in 198.18.0.0/15.
pub fn check(dest: Ipv4Addr) -> Result<(), LoadError> {
    let refuse = |reason: &str| LoadError::Target {
        target: dest.to_string(),
        reason: reason.to_string(),
    };
    if !crate::wire::policy::is_benchmark_range(dest) {
        return Err(refuse(
            "a sink must be in 198.18.0.0/15, the benchmarking range, such as 198.18.43.2",
        ));
    }
    if !crate::sys::netns::in_private_namespace() {
        return Err(refuse(
            "frames go to a sink only from inside a private network namespace (run under \
             `ip netns exec NAME`, in a namespace whose links lead nowhere else)",
        ));
    }
    Ok(())
}

/// Sends into the sink for `plan.duration` and reconciles the counts.
pub fn run(plan: &SinkPlan, stop: &Shutdown) -> Result<SinkReport, LoadError> {
    check(plan.dest)?;
    let path = crate::load::xdp::path::resolve(SocketAddrV4::new(plan.dest, PORT))
        .map_err(|e| LoadError::Setup(e.to_string()))?;
    let mtu = worker::own_link_mtu(&path.ifname)?;
    let frame = FrameSize::checked(plan.frame_size, mtu).map_err(LoadError::Spec)?;
    let job = SendJob {
        netns: None,
        route: Route {
            from: SocketAddrV4::new(path.src, PORT),
            to: SocketAddrV4::new(plan.dest, PORT),
            ifname: path.ifname.clone(),
            gateway: path.next_hop,
        },
        generator: plan.generator,
        frame,
        rate: plan.rate,
        duration: plan.duration,
        cpu: None,
    };
    let before = link(&path.ifname)?;
    let cpu0 = process_cpu();
    let stats = worker::send(&job, stop)?;
    let cpu_s = process_cpu().0 - cpu0.0;
    let after = link(&path.ifname)?;
    let tx_packets = after.tx_packets.saturating_sub(before.tx_packets);
    let tx_dropped = after.tx_dropped.saturating_sub(before.tx_dropped);
    let duration_s = stats.elapsed.as_secs_f64();
    Ok(SinkReport {
        interface: path.ifname,
        generator: plan.generator,
        frame_size: frame.0,
        offered_pps: plan.rate,
        sent: stats.sent,
        send_errors: stats.errors,
        tx_packets,
        tx_dropped,
        duration_s,
        tx_pps: tx_packets as f64 / duration_s.max(1e-9),
        cpu_s,
        reconciled: stats.sent == tx_packets + tx_dropped,
    })
}

/// The interface's counters, read in the calling thread's namespace.
fn link(ifname: &str) -> Result<LinkCounters, LoadError> {
    let dev = crate::procfs::netns::read_own_net_file(OWN_NS, "dev")
        .map_err(|e| LoadError::Setup(e.to_string()))?;
    NsCounters::parse("", &dev)
        .link(ifname)
        .cloned()
        .ok_or_else(|| LoadError::Setup(format!("{ifname} is not in {OWN_NS}'s /proc/net/dev")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_outside_the_benchmark_range_is_refused() {
        let e = check(Ipv4Addr::new(10, 0, 0, 2)).unwrap_err().to_string();
        assert!(e.contains("198.18.0.0/15") && e.contains("10.0.0.2"), "{e}");
    }
}
