//! Open-loop pacing: when each idle connection's next request is due, and
//! a timerfd that wakes the event loop at the earliest such moment with
//! nanosecond precision (epoll_wait's own timeout has millisecond steps).

use super::sys::Timer;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

pub struct Pacer {
    /// Spacing between one connection's scheduled requests.
    pub interval_ns: u64,
    /// (due, client) for idle connections waiting for their slot.
    queue: BinaryHeap<Reverse<(u64, u32)>>,
    timer: Timer,
}

impl Pacer {
    /// A pacer for `clients` connections whose timer reports as `token`.
    pub fn new(
        registry: &Registry,
        token: Token,
        interval_ns: u64,
        clients: usize,
    ) -> io::Result<Pacer> {
        let timer = Timer::new()?;
        registry.register(&mut SourceFd(&timer.raw_fd()), token, Interest::READABLE)?;
        Ok(Pacer {
            interval_ns,
            queue: BinaryHeap::with_capacity(clients),
            timer,
        })
    }

    /// Client `client` sends at `due_ns`.
    pub fn schedule(&mut self, due_ns: u64, client: u32, now_ns: u64) {
        self.queue.push(Reverse((due_ns, client)));
        self.timer.arm_by(due_ns, now_ns);
    }

    /// The next (due, client) whose time has come; otherwise arms the timer
    /// for the earliest one and returns `None`.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<(u64, u32)> {
        let &Reverse((due, client)) = self.queue.peek()?;
        if due > now_ns {
            self.timer.arm_by(due, now_ns);
            return None;
        }
        self.queue.pop();
        Some((due, client))
    }
}
