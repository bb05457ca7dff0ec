//! When each query is due, per worker thread, in the three modes: as fast
//! as the outstanding cap allows (dnsperf), a fixed rate (dnsperf -Q), and
//! resperf's linear ramp.

use std::time::Duration;

/// How queries are paced across the whole run (all threads together).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Send whenever fewer than `outstanding` queries are in flight.
    Flat { outstanding: u32 },
    /// A constant rate in queries per second.
    Fixed { rate: f64 },
    /// The rate rises linearly from 0 to `max_rate` over `over`
    /// (resperf's ramp).
    Ramp { max_rate: f64, over: Duration },
}

/// One thread's share of a [`Mode`].
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    mode: Mode,
    /// This thread's fraction of the total load.
    share: f64,
}

impl Schedule {
    pub fn new(mode: Mode, threads: u32) -> Schedule {
        Schedule {
            mode,
            share: 1.0 / f64::from(threads.max(1)),
        }
    }

    /// Whether this is resperf's ramp.
    pub fn is_ramp(&self) -> bool {
        matches!(self.mode, Mode::Ramp { .. })
    }

    /// This thread's outstanding cap in flat mode.
    pub fn outstanding(&self) -> Option<u64> {
        match self.mode {
            Mode::Flat { outstanding } => Some((f64::from(outstanding) * self.share).ceil() as u64),
            _ => None,
        }
    }

    /// Queries this thread should have sent `t` seconds in: `r t` at a fixed
    /// rate, `M t^2 / 2D` on a ramp (the integral of the rate `M t / D`).
    /// `None` in flat mode, which has no schedule.
    pub fn due(&self, t: f64) -> Option<u64> {
        match self.mode {
            Mode::Flat { .. } => None,
            Mode::Fixed { rate } => Some((rate * self.share * t) as u64),
            Mode::Ramp { max_rate, over } => {
                let d = over.as_secs_f64();
                let t = t.min(d);
                Some((max_rate * self.share * t * t / (2.0 * d)) as u64)
            }
        }
    }

    /// When this thread's query number `k` (0-based) is scheduled, in
    /// seconds from the start: the inverse of [`Schedule::due`].
    pub fn time_of(&self, k: u64) -> Option<f64> {
        let k = k as f64 + 1.0;
        match self.mode {
            Mode::Flat { .. } => None,
            Mode::Fixed { rate } => Some(k / (rate * self.share)),
            Mode::Ramp { max_rate, over } => {
                Some((2.0 * over.as_secs_f64() * k / (max_rate * self.share)).sqrt())
            }
        }
    }

    /// The whole run's offered rate `t` seconds in (all threads).
    pub fn rate_at(&self, t: f64) -> Option<f64> {
        match self.mode {
            Mode::Flat { .. } => None,
            Mode::Fixed { rate } => Some(rate),
            Mode::Ramp { max_rate, over } => Some(max_rate * (t / over.as_secs_f64()).min(1.0)),
        }
    }

    /// How far behind its schedule a thread may fall before the run counts
    /// as client-bound: a tenth of a second of its load, and at least 500
    /// queries (resperf stops at a similar lag and says "fell behind").
    pub fn behind_limit(&self, t: f64) -> u64 {
        let rate = self.rate_at(t).unwrap_or(0.0) * self.share;
        (rate * 0.1).max(500.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_due_and_time_are_inverse() {
        let s = Schedule::new(
            Mode::Ramp {
                max_rate: 10_000.0,
                over: Duration::from_secs(10),
            },
            2,
        );
        // Half the threads' share: 5000/s at the top, 25k queries over 10 s.
        assert_eq!(s.due(10.0), Some(25_000));
        assert_eq!(s.due(20.0), Some(25_000));
        assert_eq!(s.due(5.0), Some(6_250));
        let t = s.time_of(6_249).unwrap();
        assert!((t - 5.0).abs() < 1e-9, "{t}");
        assert_eq!(s.rate_at(5.0), Some(5_000.0));
    }

    #[test]
    fn fixed_rate_is_even() {
        let s = Schedule::new(Mode::Fixed { rate: 1000.0 }, 4);
        assert_eq!(s.due(2.0), Some(500));
        assert!((s.time_of(0).unwrap() - 0.004).abs() < 1e-12);
        assert_eq!(s.behind_limit(1.0), 500);
        let flat = Schedule::new(Mode::Flat { outstanding: 100 }, 3);
        assert_eq!(flat.outstanding(), Some(34));
        assert_eq!(flat.due(1.0), None);
    }
}
