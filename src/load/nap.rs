//! The coalescing wait of the shared event loop: when several closed-loop
//! transactions are in flight, the worker sleeps on its own clock for a
//! short, bounded *nap* before it polls, instead of blocking in
//! `epoll_wait` until the first reply arrives.
//!
//! Why: a worker that blocks on its sockets must be woken by the server
//! each time a reply lands on an idle client CPU. That wakeup runs in the
//! server's send path (on a VM it is an IPI and a VM exit), so a light
//! client that sleeps after every reply costs the server more than a heavy
//! one. A thread asleep in `nanosleep` is not on any socket's wait queue:
//! replies are queued without a wakeup, and the worker, woken by its own
//! timer, reads every reply that arrived in one pass (as NICs coalesce
//! interrupts). Fewer wakeups per transaction saves CPU on both sides.
//!
//! A nap is not free either: on this project's VM a timer-woken sleep costs
//! the client about 20 us of CPU, more than a socket-woken one (6 to 13
//! us), so a nap pays only when it collects several replies. With the nap a
//! fixed share (1 / [`NAP_SHARE`]) of the smoothed latency, a worker with
//! `n` transactions in flight gets about `n / NAP_SHARE` replies per nap,
//! whatever the latency; it naps only from [`MIN_IN_FLIGHT`] on, where that
//! is two or more. Fewer in flight, it blocks in `epoll_wait` as before.
//!
//! The cost is latency: a reply waits at most one nap before it is read
//! (the recorded latency includes that wait), on average an eighth of the
//! latency. While the worker naps, the server still holds the other
//! statements in flight (three quarters of them), so a saturated server
//! loses no throughput.

use crate::units::Micros;
use std::time::Duration;

/// The nap is this fraction (1 / NAP_SHARE) of the smoothed latency.
pub const NAP_SHARE: u64 = 4;
/// Naps shorter than this are not worth a timer: block as usual.
pub const MIN_NAP: Duration = Duration::from_micros(5);
/// The longest nap, whatever the latency (bounds the added latency of slow
/// transactions and how late the worker sees the deadline).
pub const MAX_NAP: Duration = Duration::from_micros(200);
/// Fewest transactions in flight on a worker for it to nap: from here on a
/// nap collects about MIN_IN_FLIGHT / NAP_SHARE = 2 replies or more.
pub const MIN_IN_FLIGHT: usize = 8;

/// Exponentially weighted moving average of the transactions' latency, in
/// microseconds, with weight 1/16 for each new sample (the smoothing of
/// TCP's SRTT, RFC 6298, with alpha 1/16 instead of 1/8: latencies of
/// different connections interleave here).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencyAverage {
    /// Sixteen times the average, so the update stays in integers.
    scaled: u64,
}

impl LatencyAverage {
    /// Adds one transaction's latency.
    pub fn add(&mut self, latency: Micros) {
        if self.scaled == 0 {
            self.scaled = latency.0.saturating_mul(16);
        } else {
            self.scaled = self.scaled - self.scaled / 16 + latency.0;
        }
    }

    /// The current average (zero before the first sample).
    pub fn get(&self) -> Micros {
        Micros(self.scaled / 16)
    }
}

/// How long to nap before polling, given the smoothed latency and the
/// transactions in flight on this worker; `None` means block in poll.
pub fn nap_length(latency: Micros, in_flight: usize) -> Option<Duration> {
    if in_flight < MIN_IN_FLIGHT {
        return None;
    }
    let nap = Duration::from_micros(latency.0 / NAP_SHARE).min(MAX_NAP);
    (nap >= MIN_NAP).then_some(nap)
}

/// Makes the calling thread's timers (its naps) fire within 1 us of their
/// time instead of the default 50 us slack.
pub fn tighten_timer_slack() {
    // SAFETY: prctl on the calling thread with an integer argument.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_average_starts_at_the_first_sample_and_moves_a_sixteenth() {
        let mut a = LatencyAverage::default();
        assert_eq!(a.get(), Micros(0));
        a.add(Micros(400));
        assert_eq!(a.get(), Micros(400));
        a.add(Micros(1200));
        assert_eq!(a.get(), Micros(450));
    }

    #[test]
    fn the_nap_is_a_quarter_of_the_latency_within_its_bounds() {
        assert_eq!(
            nap_length(Micros(400), 16),
            Some(Duration::from_micros(100))
        );
        assert_eq!(nap_length(Micros(12), 8), None, "under the minimum");
        assert_eq!(nap_length(Micros(50_000), 8), Some(MAX_NAP));
        assert_eq!(nap_length(Micros(400), 7), None, "too few in flight");
        assert_eq!(nap_length(Micros(0), 16), None, "nothing measured yet");
    }
}
