//! io_uring: each batch is `n` independent `IORING_OP_SEND`s on a
//! connected UDP socket, submitted and reaped with one `io_uring_enter(2)`.
//! (Linking them would cost a task-work round per frame; a failed send
//! just leaves a gap in the sequence numbers.)

use super::{udp_socket, Route, Transmit, BATCH};
use crate::load::forward::frame::{self, FrameSize};
use io_uring::{opcode, types, IoUring};
use socket2::Socket;
use std::os::fd::AsRawFd;

/// The io_uring transmitter.
pub struct Uring {
    sock: Socket,
    ring: IoUring,
    bufs: Vec<Vec<u8>>,
}

impl Uring {
    pub fn open(route: &Route, frame: FrameSize) -> std::io::Result<Uring> {
        Ok(Uring {
            sock: udp_socket(route)?,
            ring: IoUring::new(2 * BATCH as u32)?,
            bufs: vec![vec![0u8; frame.payload()]; BATCH],
        })
    }
}

impl Transmit for Uring {
    fn send(&mut self, n: usize, seq: u64, ts_ns: u64) -> std::io::Result<usize> {
        let fd = types::Fd(self.sock.as_raw_fd());
        {
            let mut sq = self.ring.submission();
            for (i, b) in self.bufs.iter_mut().take(n).enumerate() {
                frame::encode(b, seq + i as u64, ts_ns);
                let e = opcode::Send::new(fd, b.as_ptr(), b.len() as u32)
                    .build()
                    .user_data(i as u64);
                // SAFETY: the buffer lives in self.bufs, untouched until
                // every entry has completed (submit_and_wait below).
                unsafe { sq.push(&e) }.map_err(|_| std::io::Error::other("io_uring queue full"))?;
            }
        }
        self.ring.submit_and_wait(n)?;
        let (mut taken, mut error) = (0, None);
        for cqe in self.ring.completion() {
            if cqe.result() >= 0 {
                taken += 1;
            } else {
                error = Some(-cqe.result());
            }
        }
        match (taken, error) {
            (0, Some(errno)) => Err(std::io::Error::from_raw_os_error(errno)),
            _ => Ok(taken),
        }
    }
}
