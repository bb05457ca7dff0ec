//! A timerfd in the worker's epoll set, for microsecond wakeups.
//!
//! `epoll_wait` takes its timeout in whole milliseconds, which would make
//! open-loop transactions start up to a millisecond late. The timerfd wakes
//! the poll at the scheduled instant instead. It is armed only when timers
//! are pending, so the closed-loop hot path never touches it.

use mio::{Registry, Token};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

pub struct TimerFd {
    fd: OwnedFd,
    armed: Option<Instant>,
}

impl TimerFd {
    /// Creates the timer and adds it to `registry`'s epoll set as `token`
    /// (edge-triggered, like mio's own registrations).
    pub fn new(registry: &Registry, token: Token) -> io::Result<TimerFd> {
        // SAFETY: plain syscalls; the fd is owned from here on.
        let fd = unsafe {
            let raw = libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            );
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            OwnedFd::from_raw_fd(raw)
        };
        let mut event = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: token.0 as u64,
        };
        // SAFETY: both fds are valid; the event struct outlives the call.
        let rc = unsafe {
            libc::epoll_ctl(
                registry.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                fd.as_raw_fd(),
                &mut event,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(TimerFd { fd, armed: None })
    }

    /// Makes the poll wake at `at` (no syscall if already armed for it).
    pub fn arm(&mut self, at: Instant, now: Instant) -> io::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        // A zero value would disarm the timer; fire in 1 ns instead.
        let wait = at
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_nsec: wait.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: valid fd and itimerspec.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(at);
        Ok(())
    }

    /// Consumes an expiry after the poll reported the timer.
    pub fn fired(&mut self) {
        let mut ticks = [0u8; 8];
        // SAFETY: reads at most 8 bytes into our buffer; EAGAIN is fine.
        unsafe {
            libc::read(self.fd.as_raw_fd(), ticks.as_mut_ptr().cast(), ticks.len());
        }
        self.armed = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll};

    #[test]
    fn wakes_the_poll_well_before_a_millisecond_timeout_would() {
        let mut poll = Poll::new().unwrap();
        let mut timer = TimerFd::new(poll.registry(), Token(7)).unwrap();
        let mut events = Events::with_capacity(4);
        // Armed once, then re-armed for a new instant: it fires each time.
        for delay in [Duration::from_micros(300), Duration::from_micros(100)] {
            let start = Instant::now();
            timer.arm(start + delay, start).unwrap();
            poll.poll(&mut events, Some(Duration::from_secs(5)))
                .unwrap();
            assert_eq!(events.iter().next().map(|e| e.token()), Some(Token(7)));
            assert!(
                start.elapsed() < Duration::from_secs(4),
                "the timer never fired"
            );
            timer.fired();
        }
    }
}
