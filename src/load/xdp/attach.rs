//! An XDP socket with the redirect program in front of it: the whole
//! receive-and-transmit end one generator thread drives.

use super::bpf;
use super::path::Path;
use super::socket::Xsk;
use super::XdpError;
use std::ops::RangeInclusive;
use std::os::fd::{AsRawFd, OwnedFd};

/// XSKMAP entries: one per receive queue the redirect may look up (only
/// queue 0 holds a socket; frames on others pass to the kernel).
const QUEUES: u32 = 64;

/// The socket on queue 0 of `path`'s interface, and the program that
/// brings it UDP frames to `path.src`, ports `ports`. Dropping it detaches
/// the program (the link goes first) and closes the socket.
pub(crate) struct Attached {
    _link: OwnedFd,
    _prog: OwnedFd,
    _map: OwnedFd,
    /// The socket.
    pub xsk: Xsk,
}

impl Attached {
    /// Loads and attaches the program and binds the socket.
    pub(crate) fn new(path: &Path, ports: RangeInclusive<u16>) -> Result<Attached, XdpError> {
        let map = bpf::xskmap(QUEUES)?;
        let prog = bpf::load_xdp(&bpf::program(map.as_raw_fd(), path.src, &ports))?;
        let xsk = Xsk::open(path.ifindex, 0)?;
        bpf::set_xsk(&map, 0, xsk.fd())?;
        let link = bpf::attach(&prog, path.ifindex)?;
        Ok(Attached {
            _link: link,
            _prog: prog,
            _map: map,
            xsk,
        })
    }
}
