//! An XDP socket with the redirect program in front of it: the whole
//! receive-and-transmit end one generator thread drives.

use super::bpf;
use super::busy;
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
    /// Loads and attaches the program and binds the socket. An interface
    /// that already has a program is [`XdpError::Busy`], naming it and the
    /// fix (in namespace `netns`, where the load runs in one).
    pub(crate) fn new(
        path: &Path,
        ports: RangeInclusive<u16>,
        netns: Option<&str>,
    ) -> Result<Attached, XdpError> {
        let map = bpf::xskmap(QUEUES)?;
        let prog = bpf::load_xdp(&bpf::program(map.as_raw_fd(), path.src, &ports))?;
        let xsk = Xsk::open(path.ifindex, 0)?;
        bpf::set_xsk(&map, 0, xsk.fd())?;
        let link = bpf::attach(&prog, path.ifindex).map_err(|e| busy_or(e, path, netns))?;
        Ok(Attached {
            _link: link,
            _prog: prog,
            _map: map,
            xsk,
        })
    }
}

/// `e`, or, when the kernel said EBUSY (another program is attached),
/// [`XdpError::Busy`] naming that program.
fn busy_or(e: XdpError, path: &Path, netns: Option<&str>) -> XdpError {
    match &e {
        XdpError::Sys { source, .. } if source.raw_os_error() == Some(libc::EBUSY) => {
            XdpError::Busy {
                ifname: path.ifname.clone(),
                program: busy::attached_program(&path.ifname),
                fix: busy::detach_command(&path.ifname, netns),
            }
        }
        _ => e,
    }
}
