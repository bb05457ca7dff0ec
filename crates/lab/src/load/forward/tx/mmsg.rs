//! `sendmmsg(2)` on a connected UDP socket, and the message batch that
//! `sendmmsg`/`recvmmsg` share.

use super::{udp_socket, Route, Transmit, BATCH};
use crate::load::forward::frame::{self, FrameSize};
use socket2::Socket;
use std::os::fd::AsRawFd;

/// `BATCH` datagram buffers of `len` bytes, each behind its own iovec and
/// mmsghdr, as `sendmmsg`/`recvmmsg` take them. The pointers aim into heap
/// blocks that never move, so the batch itself may move.
pub(crate) struct MsgBatch {
    pub(crate) bufs: Vec<Vec<u8>>,
    _iovs: Vec<libc::iovec>,
    pub(crate) msgs: Vec<libc::mmsghdr>,
}

impl MsgBatch {
    pub(crate) fn new(len: usize) -> MsgBatch {
        let mut bufs = vec![vec![0u8; len]; BATCH];
        let mut iovs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: len,
            })
            .collect();
        // SAFETY: a zeroed mmsghdr is valid; each then points at its iovec.
        let mut msgs: Vec<libc::mmsghdr> =
            (0..BATCH).map(|_| unsafe { std::mem::zeroed() }).collect();
        for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
        }
        MsgBatch {
            bufs,
            _iovs: iovs,
            msgs,
        }
    }
}

/// The `sendmmsg` transmitter.
pub struct Mmsg {
    sock: Socket,
    batch: MsgBatch,
}

impl Mmsg {
    pub fn open(route: &Route, frame: FrameSize) -> std::io::Result<Mmsg> {
        Ok(Mmsg {
            sock: udp_socket(route)?,
            batch: MsgBatch::new(frame.payload()),
        })
    }
}

impl Transmit for Mmsg {
    fn send(&mut self, n: usize, seq: u64, ts_ns: u64) -> std::io::Result<usize> {
        for (i, b) in self.batch.bufs.iter_mut().take(n).enumerate() {
            frame::encode(b, seq + i as u64, ts_ns);
        }
        // SAFETY: msgs point at live iovecs and buffers of `len` bytes.
        let sent = unsafe {
            libc::sendmmsg(
                self.sock.as_raw_fd(),
                self.batch.msgs.as_mut_ptr(),
                n as u32,
                0,
            )
        };
        if sent < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(sent as usize)
    }
}
