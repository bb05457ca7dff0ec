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
//! us), so a nap pays only when it collects several replies. The nap is a
//! fixed share (1 / [`NAP_SHARE`]) of one round trip, which the worker
//! estimates by Little's law as the transactions in flight times the
//! smoothed time between its socket events ([`ReplyGap`]): a worker with
//! `n` in flight then gets about `n / NAP_SHARE` replies per nap, whatever
//! the latency. It naps only from [`MIN_IN_FLIGHT`] on, where that is two or
//! more; with fewer it blocks in `epoll_wait` as before. Round trips, not
//! transactions: a transaction of several statements (tpcb-like,
//! oltp_read_only) is several round trips, and a nap as long as a share of
//! the whole transaction would leave the server idle.
//!
//! The cost is latency: a reply waits at most one nap before it is read
//! (the recorded latency includes that wait), on average an eighth of a
//! round trip. While the worker naps, the server still holds the other
//! statements in flight (three quarters of them), so a saturated server
//! loses no throughput. A server that is *not* saturated does lose it: in
//! a closed loop every microsecond a reply waits is a microsecond its
//! connection sends nothing, so at such points throughput drops by up to
//! about a ninth. That is why the nap is opt-in (`LoadSpec::coalesce`,
//! `scalelab load pg|mysql --coalesce`) and recipes, which sweep through
//! unsaturated points, never use it.

use std::time::{Duration, Instant};

/// The nap is this fraction (1 / NAP_SHARE) of the estimated round trip.
pub const NAP_SHARE: u32 = 4;
/// Naps shorter than this are not worth a timer: block as usual.
pub const MIN_NAP: Duration = Duration::from_micros(5);
/// The longest nap, whatever the round trip (bounds the added latency of
/// slow statements and how late the worker sees the deadline).
pub const MAX_NAP: Duration = Duration::from_micros(200);
/// Fewest transactions in flight on a worker for it to nap: from here on a
/// nap collects about MIN_IN_FLIGHT / NAP_SHARE = 2 replies or more.
pub const MIN_IN_FLIGHT: usize = 8;

/// Socket events a window of [`ReplyGap`] spans before it yields a sample.
const WINDOW_EVENTS: u32 = 64;

/// The smoothed time between a worker's socket events (its replies): each
/// window of [`WINDOW_EVENTS`] events gives one sample, its time divided by
/// its events, averaged with weight 1/4 per sample (an exponentially
/// weighted moving average).
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplyGap {
    window_start: Option<Instant>,
    window_events: u32,
    gap: Duration,
}

impl ReplyGap {
    /// Counts the `events` one poll returned at `now`.
    pub fn add(&mut self, events: usize, now: Instant) {
        let Some(start) = self.window_start else {
            self.window_start = Some(now);
            return;
        };
        self.window_events = self
            .window_events
            .saturating_add(u32::try_from(events).unwrap_or(u32::MAX));
        if self.window_events >= WINDOW_EVENTS {
            let sample = now.saturating_duration_since(start) / self.window_events;
            self.gap = if self.gap.is_zero() {
                sample
            } else {
                self.gap - self.gap / 4 + sample / 4
            };
            self.window_start = Some(now);
            self.window_events = 0;
        }
    }

    /// The current estimate (zero before the first full window).
    pub fn get(&self) -> Duration {
        self.gap
    }
}

/// How long to nap before polling, given the time between replies and the
/// transactions in flight on this worker; `None` means block in poll.
pub fn nap_length(gap: Duration, in_flight: usize) -> Option<Duration> {
    if in_flight < MIN_IN_FLIGHT {
        return None;
    }
    // Little's law: a round trip is the replies in flight times their gap.
    let round_trip = gap * u32::try_from(in_flight).unwrap_or(u32::MAX);
    let nap = (round_trip / NAP_SHARE).min(MAX_NAP);
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
    fn the_gap_is_a_window_s_time_over_its_events_then_smoothed() {
        let t0 = Instant::now();
        let mut g = ReplyGap::default();
        g.add(1, t0);
        g.add(32, t0 + Duration::from_micros(640));
        assert_eq!(g.get(), Duration::ZERO, "the window is not full yet");
        g.add(32, t0 + Duration::from_micros(1280));
        assert_eq!(g.get(), Duration::from_micros(20));
        g.add(64, t0 + Duration::from_micros(1280 + 64 * 60));
        assert_eq!(g.get(), Duration::from_micros(30), "20 + (60 - 20) / 4");
    }

    #[test]
    fn the_nap_is_a_quarter_of_the_round_trip_within_its_bounds() {
        let us = Duration::from_micros;
        assert_eq!(nap_length(us(25), 16), Some(us(100)), "400 us round trip");
        assert_eq!(nap_length(us(2), 8), None, "under the minimum");
        assert_eq!(nap_length(us(5000), 8), Some(MAX_NAP));
        assert_eq!(nap_length(us(25), 7), None, "too few in flight");
        assert_eq!(nap_length(Duration::ZERO, 16), None, "nothing measured yet");
    }
}
