//! AF_XDP in copy mode: the packet ring's whole frames, written into an
//! XDP socket's UMEM and queued on its TX ring; each `sendto(2)` kick
//! moves up to 32 of them straight to the driver's transmit. Sending
//! needs no XDP program: nothing is received on this socket.

use super::ring::{template, PAYLOAD_AT};
use super::{Route, Transmit};
use crate::load::forward::frame::{self, FrameSize};
use crate::load::xdp::socket::Xsk;
use std::io::{Error, Result};
use std::time::Duration;

/// How long `finish` waits for the TX ring to drain.
const DRAIN: Duration = Duration::from_secs(2);

/// The AF_XDP transmitter.
pub struct XdpTx {
    xsk: Xsk,
    /// The frame as sent (FCS excluded), payload header left blank.
    template: Vec<u8>,
}

impl XdpTx {
    pub fn open(route: &Route, frame: FrameSize) -> Result<XdpTx> {
        let template = template(route, frame)?;
        let name = std::ffi::CString::new(route.ifname.as_str()).map_err(Error::other)?;
        // SAFETY: a NUL-terminated name.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(Error::last_os_error());
        }
        let xsk = Xsk::open(index, 0).map_err(Error::other)?;
        Ok(XdpTx { xsk, template })
    }
}

impl Transmit for XdpTx {
    fn send(&mut self, n: usize, seq: u64, ts_ns: u64) -> Result<usize> {
        let t = &self.template;
        let queued = self.xsk.transmit(n, |i, f| {
            f[..t.len()].copy_from_slice(t);
            frame::encode(&mut f[PAYLOAD_AT..], seq + i as u64, ts_ns);
            t.len()
        });
        self.xsk.kick();
        Ok(queued)
    }

    fn finish(&mut self) -> Result<()> {
        if self.xsk.drain(DRAIN) {
            Ok(())
        } else {
            Err(Error::other(format!(
                "frames still queued on the AF_XDP TX ring after {DRAIN:?}"
            )))
        }
    }
}
