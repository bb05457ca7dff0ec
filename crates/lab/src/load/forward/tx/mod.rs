//! How the generator hands frames to the kernel. Each method is one
//! [`Transmit`]: the pacing loop in `super::worker` asks it to send `n`
//! frames numbered from `seq`, and it says how many the kernel took.
//!
//! - [`Generator::Sendmmsg`]: a connected UDP socket, `sendmmsg(2)` of a
//!   batch; every frame walks the kernel's UDP/IP output path.
//! - [`Generator::PacketRing`]: `AF_PACKET` with `PACKET_TX_RING`
//!   (PACKET_MMAP) and `PACKET_QDISC_BYPASS`: whole Ethernet frames built
//!   here into a ring shared with the kernel, one `send(2)` per batch.
//! - [`Generator::IoUring`]: a batch of `IORING_OP_SEND`s on a connected
//!   UDP socket, one `io_uring_enter(2)` per batch.
//! - [`Generator::Xdp`]: AF_XDP in copy mode: the same whole frames
//!   written into a UMEM and queued on an XDP socket's TX ring
//!   ([`crate::load::xdp`]); a `sendto(2)` per 32 frames moves them to the
//!   driver, past the qdisc and the packet socket's skb setup.
//!
//! `bench/generator-methods.sh` measures their raw rates on this machine;
//! the default is the fastest there.

mod mmsg;
mod ring;
mod uring;
mod xsk;

pub(crate) use mmsg::MsgBatch;

use serde::{Deserialize, Serialize};
use socket2::{Domain, Socket, Type};
use std::net::{Ipv4Addr, SocketAddrV4};

use super::frame::FrameSize;

/// Frames handed to the kernel per send (or `recvmmsg`) call.
pub const BATCH: usize = 64;

/// The method that hands frames to the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Generator {
    /// UDP socket, `sendmmsg(2)`.
    Sendmmsg,
    /// `AF_PACKET` with `PACKET_TX_RING` and `PACKET_QDISC_BYPASS`.
    #[default]
    PacketRing,
    /// io_uring, a batch of `IORING_OP_SEND`s per submission.
    IoUring,
    /// AF_XDP (copy mode): frames on an XDP socket's TX ring.
    Xdp,
}

impl Generator {
    /// Every method, in declaration order (what the tests and
    /// `bench/generator-methods.sh` iterate over).
    pub const ALL: [Generator; 4] = [
        Generator::Sendmmsg,
        Generator::PacketRing,
        Generator::IoUring,
        Generator::Xdp,
    ];

    /// The method's name in settings, flags and reports (`packet_ring`,
    /// ...): the name [`Generator::parse`] reads and serde writes.
    pub fn name(self) -> &'static str {
        match self {
            Generator::Sendmmsg => "sendmmsg",
            Generator::PacketRing => "packet_ring",
            Generator::IoUring => "io_uring",
            Generator::Xdp => "xdp",
        }
    }

    /// Reads a method's name, or names the ones there are.
    pub fn parse(text: &str) -> Result<Generator, String> {
        Generator::ALL
            .into_iter()
            .find(|g| g.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Generator::ALL.iter().map(|g| g.name()).collect();
                format!(
                    "unknown generator `{text}`; use one of {}",
                    names.join(", ")
                )
            })
    }
}

/// Where one direction's frames go: the UDP addresses, and for methods that
/// build whole frames, the sending interface and the next hop.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    /// The sender's address and port, in the sender's namespace.
    pub from: SocketAddrV4,
    /// The receiver's address and port, across the router.
    pub to: SocketAddrV4,
    /// The sending interface (in the sender's namespace).
    pub ifname: String,
    /// The next hop, whose link-layer address frames are sent to.
    pub gateway: Ipv4Addr,
}

/// One method's way of handing frames to the kernel.
pub trait Transmit {
    /// Hands frames `seq..seq + n` (`n` at most [`BATCH`]),
    /// stamped `ts_ns`, to the kernel; returns how many it took. The
    /// numbers `seq..seq + n` are used up either way (a frame not taken
    /// leaves a gap, never a number sent twice). An error means it took none.
    fn send(&mut self, n: usize, seq: u64, ts_ns: u64) -> std::io::Result<usize>;

    /// Waits until every frame taken has left (a ring's queued frames).
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Transmissions beyond the frames taken: frames the interface dropped
    /// (R's input queue full) that the method then sent again. Each is a
    /// frame sent and lost, as the interface's `tx_dropped` counts it.
    fn resent(&self) -> u64 {
        0
    }
}

/// Opens `generator`'s transmitter for `route`. Call it on a thread that
/// has joined the sender's network namespace.
pub(crate) fn open(
    generator: Generator,
    route: &Route,
    frame: FrameSize,
) -> std::io::Result<Box<dyn Transmit>> {
    Ok(match generator {
        Generator::Sendmmsg => Box::new(mmsg::Mmsg::open(route, frame)?),
        Generator::PacketRing => Box::new(ring::PacketRing::open(route, frame)?),
        Generator::IoUring => Box::new(uring::Uring::open(route, frame)?),
        Generator::Xdp => Box::new(xsk::XdpTx::open(route, frame)?),
    })
}

/// A UDP socket bound to `route.from` and connected to `route.to`.
fn udp_socket(route: &Route) -> std::io::Result<Socket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, None)?;
    s.bind(&route.from.into())?;
    s.set_send_buffer_size(4 << 20)?;
    s.connect(&route.to.into())?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_listed() {
        for g in Generator::ALL {
            assert_eq!(Generator::parse(g.name()), Ok(g));
        }
        let e = Generator::parse("dpdk").unwrap_err();
        assert!(e.contains("`dpdk`") && e.contains("packet_ring"), "{e}");
    }
}
