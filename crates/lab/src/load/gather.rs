//! Opt-in reply coalescing (`LoadSpec::coalesce`, `--coalesce`): a
//! closed-loop worker with many requests in flight sleeps until *half* of
//! them have been answered, and is woken once for all of those replies
//! instead of once per reply.
//!
//! Why: `epoll_wait` returns at the first ready socket, so a worker whose
//! server answers one reply at a time is woken for each. Each wakeup costs
//! both sides: the server's send path wakes the client (on a VM, an IPI and
//! a VM exit), and the client pays a context switch and a poll that finds
//! one event. Here each busy socket carries a multishot `POLLIN` poll in a
//! per-worker io_uring created with `IORING_SETUP_DEFER_TASKRUN`. Since
//! Linux 6.7 such a ring queues poll wakeups as task work *lazily*
//! (`IOU_F_TWQ_LAZY_WAKE` in `io_req_local_work_add`): the sleeping worker
//! is woken only when as many sockets have signalled as its
//! `io_uring_enter(min_complete = n)` asked for. No timer is involved, so
//! there is no timer wakeup either (on this project's VM a timer-woken
//! sleep costs the client about 20 us of CPU, a socket-woken one 6 to 13).
//! The readiness itself is still read from epoll (mio) afterwards, so the
//! sessions are driven exactly as without coalescing.
//!
//! Each turn the worker (1) arms a poll on every busy socket it has not
//! armed yet and cancels those of sockets that closed, (2) *flushes*: runs
//! the wakeups already queued by replies it has read since (they would
//! otherwise satisfy the next wait at once) and releases cancelled
//! sockets, which a poll keeps open, (3) reads what epoll already has, and
//! only if that is nothing (4) waits. Each run ends with a note, "coalesced:
//! W waits gathered R replies", so a reader (and the tests) can see that it
//! did. A kernel before 6.7 builds the ring but wakes per reply (a note
//! says so); a ring that cannot be built or fails leaves the run uncoalesced,
//! with a note. HTTP coalesces keep-alive connections only: a new socket
//! per request would arm a poll per request.
//!
//! The cost is latency. While the worker waits for half of its replies,
//! the server still holds the other half, so a saturated server loses no
//! throughput (and usually gains some, as it is no longer interrupted to
//! wake the client). A server that is *not* saturated does lose it: in a
//! closed loop each microsecond a reply waits is a microsecond its
//! connection sends nothing (`bench/coalesce-cost.sh` measures it). The
//! wait is therefore bounded by one round trip (estimated by Little's law,
//! [`ReplyGap`], and kept within 20 us..2 ms), and the mode is opt-in:
//! recipes, which sweep through unsaturated points, never use it. Below
//! [`MIN_IN_FLIGHT`] a worker blocks in `epoll_wait` as usual: with few
//! replies outstanding, waking late would leave the server idle (on this
//! VM a sleeping vCPU takes tens of microseconds to wake).

use io_uring::types::{Fd, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, IoUring};
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Fewest requests in flight on a worker for it to gather: it then waits
/// for at least MIN_IN_FLIGHT / [`SHARE`] replies.
pub const MIN_IN_FLIGHT: usize = 8;
/// The worker waits for 1 / SHARE of its requests in flight.
pub const SHARE: usize = 2;
/// Bounds of the wait, whatever the estimated round trip.
pub const MIN_WAIT: Duration = Duration::from_micros(20);
pub const MAX_WAIT: Duration = Duration::from_millis(2);

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

/// How many replies to wait for and for how long at most, given the time
/// between replies and the requests in flight on this worker; `None`
/// means block in `epoll_wait` as usual.
pub fn plan(gap: Duration, in_flight: usize) -> Option<(usize, Duration)> {
    if in_flight < MIN_IN_FLIGHT || gap.is_zero() {
        return None;
    }
    // Little's law: a round trip is the replies in flight times their gap.
    let round_trip = gap * u32::try_from(in_flight).unwrap_or(u32::MAX);
    Some((in_flight / SHARE, round_trip.clamp(MIN_WAIT, MAX_WAIT)))
}

/// Why a coalesced wait failed: the ring (the run goes on without
/// coalescing, with a note: [`give_up`]) or epoll itself (an error as it
/// is without coalescing).
#[derive(Debug)]
pub enum WaitError {
    Ring(io::Error),
    Poll(io::Error),
}

/// Drops a worker's failed ring and notes that the run stopped coalescing.
pub fn give_up(ring: &mut Option<Gather>, notes: &mut Vec<String>, e: &io::Error) {
    *ring = None;
    notes.push(unavailable(e));
}

/// What a worker's waits gathered: the waits that slept and the replies
/// they gathered (for the run's note).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gathered {
    pub waits: u64,
    pub replies: u64,
}

impl Gathered {
    /// The sum of two workers' counts (`None`: a worker that did not
    /// coalesce).
    pub fn merge(a: Option<Gathered>, b: Option<Gathered>) -> Option<Gathered> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Gathered {
                waits: a.waits + b.waits,
                replies: a.replies + b.replies,
            }),
            (x, None) | (None, x) => x,
        }
    }

    /// The run's note: how much the waits gathered.
    pub fn note(&self) -> String {
        format!(
            "coalesced: {} waits gathered {} replies ({:.1} per wakeup)",
            self.waits,
            self.replies,
            self.replies as f64 / self.waits.max(1) as f64
        )
    }
}

/// User data of the cancel entries (their completions are ignored).
const CANCEL: u64 = u64::MAX;

/// The note of a run that asked to coalesce where it cannot.
pub fn unavailable(e: &io::Error) -> String {
    format!(
        "--coalesce needs io_uring with deferred task work (Linux 6.1 or later, not \
         refused by seccomp): {e}; this run did not coalesce"
    )
}

/// The note of a worker asked to coalesce with too few connections.
pub fn too_few_note() -> String {
    format!(
        "--coalesce: a client thread with fewer than {MIN_IN_FLIGHT} connections does not \
         coalesce (waiting for half of so few replies lets the server run dry); this run \
         did not coalesce on such threads: give each thread at least {MIN_IN_FLIGHT} \
         connections (-c / -j)"
    )
}

/// The note of a run whose kernel builds the ring but wakes the client for
/// each reply anyway (lazy poll wakeups came in Linux 6.7).
pub fn kernel_note() -> Option<String> {
    let release = crate::procfs::sysctl::read_file(crate::procfs::sysctl::OSRELEASE).ok()?;
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    ((major, minor) < (6, 7)).then(|| {
        format!(
            "--coalesce on Linux {}: before 6.7 io_uring wakes the client for every \
             reply, so coalescing saves little here",
            release.trim()
        )
    })
}

/// One worker's ring and what each token's poll watches.
pub struct Gather {
    ring: IoUring,
    /// Per token: the identity (see [`Gather::watch`]) of the socket its
    /// multishot poll is armed on, if any.
    armed: Vec<Option<u64>>,
    /// Per token: bumped per arm, so a stale poll's completion is told
    /// apart from the current one's.
    arms: Vec<u32>,
    /// Arms or cancels queued and not yet submitted.
    queued: bool,
    /// What the waits gathered so far.
    pub gathered: Gathered,
}

fn user_data(token: usize, arm: u32) -> u64 {
    (u64::from(arm) << 32) | token as u64
}

/// Entries of the submission queue (a full queue is submitted and reused).
const MAX_ENTRIES: usize = 4096;

impl Gather {
    /// A ring for tokens `0..tokens`. Fails where io_uring or deferred
    /// task work is unavailable (Linux < 6.1, seccomp); the caller then
    /// does not coalesce, and says so.
    pub fn new(tokens: usize) -> io::Result<Gather> {
        let entries = (tokens * 2 + 8).next_power_of_two().min(MAX_ENTRIES) as u32;
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
            .setup_clamp()
            .setup_cqsize(entries * 4)
            .build(entries)?;
        Ok(Gather {
            ring,
            armed: vec![None; tokens],
            arms: vec![0; tokens],
            queued: false,
            gathered: Gathered::default(),
        })
    }

    /// The ring of a worker with `tokens` connections that was asked to
    /// coalesce, with the notes a reader needs (an old kernel), or `None`
    /// with a note saying why it does not coalesce (fewer connections than
    /// [`MIN_IN_FLIGHT`], or no ring).
    pub fn for_run(tokens: usize, notes: &mut Vec<String>) -> Option<Gather> {
        if tokens < MIN_IN_FLIGHT {
            notes.push(too_few_note());
            return None;
        }
        match Gather::new(tokens) {
            Ok(g) => {
                notes.extend(kernel_note());
                Some(g)
            }
            Err(e) => {
                notes.push(unavailable(&e));
                None
            }
        }
    }

    /// Makes `token`'s poll watch `fd`. `identity` tells sockets apart
    /// when a descriptor number is reused (the fd and the connection's
    /// serial): a new identity cancels the poll on the old socket.
    pub fn watch(&mut self, token: usize, fd: RawFd, identity: u64) -> io::Result<()> {
        let Some(&current) = self.armed.get(token) else {
            return Ok(());
        };
        if current == Some(identity) {
            return Ok(());
        }
        self.forget(token)?;
        self.arms[token] = self.arms[token].wrapping_add(1);
        let poll = opcode::PollAdd::new(Fd(fd), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(user_data(token, self.arms[token]));
        self.push(&poll)?;
        self.armed[token] = Some(identity);
        Ok(())
    }

    /// Stops watching `token`'s socket. A poll holds its socket open (and
    /// in the worker's epoll set) until the cancel runs, at the next
    /// [`Gather::flush`] or wait: callers closing a socket flush.
    pub fn forget(&mut self, token: usize) -> io::Result<()> {
        if let Some(Some(_)) = self.armed.get(token) {
            let cancel = opcode::AsyncCancel::new(user_data(token, self.arms[token]))
                .build()
                .flags(squeue::Flags::SKIP_SUCCESS)
                .user_data(CANCEL);
            self.push(&cancel)?;
            self.armed[token] = None;
        }
        Ok(())
    }

    fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        self.queued = true;
        loop {
            // SAFETY: poll and cancel entries point at no user memory.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
            self.reap();
        }
    }

    /// Submits what is queued and runs the wakeups already pending (those
    /// of replies the worker has read through epoll since), discarding
    /// them, so the next wait counts only replies that arrive after it.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.queued && !self.ring.submission().taskrun() {
            return Ok(());
        }
        self.enter(1, Duration::ZERO)?;
        self.reap();
        Ok(())
    }

    /// Sleeps until `want` watched sockets have signalled since the last
    /// [`Gather::flush`], or `timeout` passed. Returns how many signalled.
    pub fn wait(&mut self, want: usize, timeout: Duration) -> io::Result<usize> {
        let deadline = Instant::now() + timeout;
        let mut seen = 0;
        self.gathered.waits += 1;
        while seen < want {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.enter(want - seen, left)?;
            seen += self.reap();
        }
        self.gathered.replies += seen as u64;
        Ok(seen)
    }

    fn enter(&mut self, want: usize, timeout: Duration) -> io::Result<()> {
        self.queued = false;
        let ts = Timespec::from(timeout);
        let args = SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Empties the completion queue, counting the current polls' signals;
    /// a poll that ended (no `MORE` flag: cancelled, or the ring ran short)
    /// is marked unarmed, so the next [`Gather::watch`] arms it again.
    fn reap(&mut self) -> usize {
        let mut seen = 0;
        let Gather {
            ring, armed, arms, ..
        } = self;
        for c in ring.completion() {
            let data = c.user_data();
            let token = (data & 0xffff_ffff) as usize;
            if data == CANCEL || arms.get(token) != Some(&((data >> 32) as u32)) {
                continue;
            }
            if !cqueue::more(c.flags()) {
                armed[token] = None;
            }
            if c.result() > 0 {
                seen += 1;
            }
        }
        seen
    }

    /// One wait of a worker that has watched its busy sockets: flushes,
    /// then, if `in_flight` allows coalescing ([`plan`]), reads what epoll
    /// already holds (`poll(timeout)` returns whether it read any events)
    /// and only if that was nothing waits for half the replies before
    /// reading epoll again; otherwise it simply polls for up to `timeout`.
    pub fn turn(
        &mut self,
        gap: &ReplyGap,
        in_flight: usize,
        timeout: Duration,
        mut poll: impl FnMut(Duration) -> io::Result<bool>,
    ) -> Result<(), WaitError> {
        // Runs the queued arms and cancels (releasing closed sockets) and
        // drops the signals of replies already read.
        self.flush().map_err(WaitError::Ring)?;
        let Some((want, bound)) = plan(gap.get(), in_flight) else {
            return poll(timeout).map(drop).map_err(WaitError::Poll);
        };
        if !poll(Duration::ZERO).map_err(WaitError::Poll)? {
            self.wait(want, bound.min(timeout))
                .map_err(WaitError::Ring)?;
            poll(Duration::ZERO).map_err(WaitError::Poll)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

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
    fn the_wait_is_for_half_the_replies_within_one_round_trip() {
        let us = Duration::from_micros;
        assert_eq!(plan(us(25), 16), Some((8, us(400))), "400 us round trip");
        assert_eq!(plan(us(1), 8), Some((4, MIN_WAIT)));
        assert_eq!(plan(us(5000), 9), Some((4, MAX_WAIT)));
        assert_eq!(plan(us(25), 7), None, "too few in flight");
        assert_eq!(plan(Duration::ZERO, 16), None, "nothing measured yet");
    }

    fn pairs(n: usize) -> Vec<(UnixStream, UnixStream)> {
        (0..n).map(|_| UnixStream::pair().unwrap()).collect()
    }

    #[test]
    fn one_wait_gathers_the_sockets_that_signalled() {
        let mut g = Gather::new(4).unwrap();
        let mut p = pairs(4);
        for (i, (ours, _)) in p.iter().enumerate() {
            g.watch(i, ours.as_raw_fd(), i as u64).unwrap();
        }
        p[1].1.write_all(b"x").unwrap();
        p[3].1.write_all(b"y").unwrap();
        let t0 = Instant::now();
        assert_eq!(g.wait(2, Duration::from_secs(5)).unwrap(), 2);
        assert!(
            t0.elapsed() < Duration::from_secs(4),
            "woken by the replies"
        );
        // Nothing more arrives: a wait for one more ends at its timeout.
        let t0 = Instant::now();
        assert_eq!(g.wait(1, Duration::from_millis(30)).unwrap(), 0);
        assert!(t0.elapsed() >= Duration::from_millis(25));
        // The polls are multishot: a second reply on a socket signals again.
        p[1].1.write_all(b"z").unwrap();
        assert_eq!(g.wait(1, Duration::from_secs(5)).unwrap(), 1);
        assert_eq!(
            g.gathered,
            Gathered {
                waits: 3,
                replies: 3
            }
        );
    }

    #[test]
    fn a_flush_drops_the_signals_of_replies_already_seen() {
        let mut g = Gather::new(1).unwrap();
        let (ours, mut peer) = UnixStream::pair().unwrap();
        g.watch(0, ours.as_raw_fd(), 7).unwrap();
        g.flush().unwrap();
        peer.write_all(b"read elsewhere").unwrap();
        g.flush().unwrap();
        let t0 = Instant::now();
        assert_eq!(g.wait(1, Duration::from_millis(30)).unwrap(), 0);
        assert!(t0.elapsed() >= Duration::from_millis(25), "not woken early");
        peer.write_all(b"new").unwrap();
        assert_eq!(g.wait(1, Duration::from_secs(5)).unwrap(), 1);
    }

    #[test]
    fn a_thread_with_too_few_connections_builds_no_ring_and_says_so() {
        let mut notes = Vec::new();
        assert!(Gather::for_run(MIN_IN_FLIGHT - 1, &mut notes).is_none());
        assert_eq!(notes, [too_few_note()]);
        assert!(notes[0].contains("did not coalesce"), "{notes:?}");
        notes.clear();
        assert!(Gather::for_run(MIN_IN_FLIGHT, &mut notes).is_some());
        assert!(
            notes.iter().all(|n| !n.contains("did not coalesce")),
            "{notes:?}"
        );
    }

    #[test]
    fn a_turn_waits_only_when_epoll_holds_nothing_and_tells_epoll_failures_apart() {
        let mut g = Gather::new(8).unwrap();
        let p = pairs(8);
        for (i, (ours, _)) in p.iter().enumerate() {
            g.watch(i, ours.as_raw_fd(), i as u64).unwrap();
        }
        let mut gap = ReplyGap::default();
        let t0 = Instant::now();
        gap.add(1, t0);
        gap.add(64, t0 + Duration::from_micros(64));
        let long = Duration::from_secs(5);
        // Nothing in epoll: one wait (bounded by the round trip), then epoll.
        let mut polls = Vec::new();
        g.turn(&gap, 8, long, |t| {
            polls.push(t);
            Ok(false)
        })
        .unwrap();
        assert_eq!(polls, [Duration::ZERO, Duration::ZERO]);
        assert_eq!(g.gathered.waits, 1);
        // Events already there: no wait.
        polls.clear();
        g.turn(&gap, 8, long, |t| {
            polls.push(t);
            Ok(true)
        })
        .unwrap();
        assert_eq!((polls.len(), g.gathered.waits), (1, 1));
        // Too few in flight: epoll alone, for the whole timeout.
        polls.clear();
        g.turn(&gap, 7, long, |t| {
            polls.push(t);
            Ok(false)
        })
        .unwrap();
        assert_eq!((polls, g.gathered.waits), (vec![long], 1));
        let failed = g.turn(&gap, 8, long, |_| Err(io::ErrorKind::Interrupted.into()));
        assert!(matches!(failed, Err(WaitError::Poll(_))), "{failed:?}");
    }

    #[test]
    fn workers_counts_add_up() {
        let one = Gathered {
            waits: 2,
            replies: 9,
        };
        assert_eq!(Gathered::merge(None, None), None);
        assert_eq!(Gathered::merge(Some(one), None), Some(one));
        assert_eq!(Gathered::merge(None, Some(one)), Some(one));
        assert_eq!(
            Gathered::merge(Some(one), Some(one)),
            Some(Gathered {
                waits: 4,
                replies: 18
            })
        );
    }

    #[test]
    fn the_note_says_how_much_each_wakeup_gathered() {
        assert_eq!(
            Gathered {
                waits: 4,
                replies: 30
            }
            .note(),
            "coalesced: 4 waits gathered 30 replies (7.5 per wakeup)"
        );
    }

    #[test]
    fn a_new_socket_under_the_same_token_is_watched_instead_of_the_old() {
        let mut g = Gather::new(1).unwrap();
        let (a, mut a_peer) = UnixStream::pair().unwrap();
        g.watch(0, a.as_raw_fd(), 1).unwrap();
        g.wait(0, Duration::ZERO).unwrap();
        let (b, mut b_peer) = UnixStream::pair().unwrap();
        g.watch(0, b.as_raw_fd(), 2).unwrap();
        a_peer.write_all(b"old").unwrap();
        let t0 = Instant::now();
        assert_eq!(
            g.wait(1, Duration::from_millis(30)).unwrap(),
            0,
            "the old socket's poll was cancelled"
        );
        assert!(t0.elapsed() >= Duration::from_millis(25), "not woken early");
        b_peer.write_all(b"new").unwrap();
        assert_eq!(g.wait(1, Duration::from_secs(5)).unwrap(), 1);
        drop(a);
    }
}
