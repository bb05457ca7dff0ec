//! From readings to joules: a [`Meter`] reads its source; an
//! `EnergyTrack` keeps the previous reading and adds up the energy of
//! each interval. Counters (µJ) give the interval's energy as their
//! difference, across a wrap at `max_energy_range_uj`; power readings
//! (watts) give it as the mean of the two ends times the interval.

use super::command::{self, CommandError, COMMAND_TIMEOUT, MAX_WATTS};
use super::{EnergySource, EnergySummary};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// One cumulative energy counter, in µJ.
#[derive(Debug, Clone)]
pub(crate) struct Counter {
    /// The domain's name in the report.
    pub label: String,
    /// Its `energy_uj` (or `energyN_input`) file.
    pub path: PathBuf,
    /// The value after which it wraps to 0; `None`: not known.
    pub max_range_uj: Option<u64>,
}

impl Counter {
    /// The counter now; `None` when unreadable.
    pub fn read(&self) -> Option<u64> {
        std::fs::read_to_string(&self.path)
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// How a meter reads.
#[derive(Debug, Clone)]
pub(crate) enum Reader {
    /// Cumulative counters, summed.
    Counters(Vec<Counter>),
    /// Power inputs in µW (`label`, file), summed.
    MicroWatts(Vec<(String, PathBuf)>),
    /// A command that prints watts.
    Command(String),
}

/// An open energy source.
#[derive(Debug, Clone)]
pub struct Meter {
    source: EnergySource,
    reader: Reader,
}

/// A gap this share of the window between the readings' span and the
/// window (at its two ends) is said when the joules are scaled over it.
const EDGE_SHARE: f64 = 0.1;
/// Fewer readings than this in a window are coarse against it: its ends
/// are a large share of it, at the readings' mean watts.
const COARSE_READINGS: u32 = 4;

/// How close the instants around a sysfs reading should be.
const TIGHT: std::time::Duration = std::time::Duration::from_millis(1);
/// How many times a sysfs reading is tried for that.
const TIGHT_TRIES: u32 = 5;

/// One reading of a meter.
#[derive(Debug, Clone, PartialEq)]
enum Reading {
    /// Each counter in µJ, `None` where unreadable.
    Counters(Vec<Option<u64>>),
    /// Watts now.
    Watts(Result<f64, String>),
    /// The command ran out of time (a hung meter): it is not run again in
    /// this window.
    TimedOut(String),
    /// The window ended while the command ran: no reading, and no failure.
    CutOff(String),
}

impl Meter {
    pub(crate) fn new(source: EnergySource, reader: Reader) -> Meter {
        Meter { source, reader }
    }

    /// A meter running `cmd` once per reading.
    pub fn command(cmd: String) -> Meter {
        Meter::new(EnergySource::Command, Reader::Command(cmd))
    }

    /// Whether a reading takes microseconds (sysfs), not a command's run.
    pub(crate) fn is_fast(&self) -> bool {
        match self.reader {
            Reader::Counters(_) | Reader::MicroWatts(_) => true,
            Reader::Command(_) => false,
        }
    }

    /// What it reads.
    pub fn source(&self) -> EnergySource {
        self.source
    }

    /// The domains it sums, as the report names them.
    pub fn domains(&self) -> Vec<String> {
        match &self.reader {
            Reader::Counters(c) => c.iter().map(|c| c.label.clone()).collect(),
            Reader::MicroWatts(p) => p.iter().map(|(l, _)| l.clone()).collect(),
            // The report puts the source ("command: ") before the domains.
            Reader::Command(cmd) => vec![cmd.clone()],
        }
    }

    /// A reading and when it was taken: halfway between the instants
    /// before and after it. A file read that was held up (the thread lost
    /// its CPU on a busy machine) is read again, up to [`TIGHT_TRIES`]
    /// times, so the instant is within [`TIGHT`] of the value; a command
    /// is run once.
    fn read(&self, stop: &AtomicBool) -> (Instant, Reading) {
        let tries = match self.reader {
            Reader::Command(_) => 1,
            Reader::Counters(_) | Reader::MicroWatts(_) => TIGHT_TRIES,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let before = Instant::now();
            let reading = self.read_now(stop);
            let took = before.elapsed();
            if took <= TIGHT || attempt >= tries {
                return (before + took / 2, reading);
            }
        }
    }

    fn read_now(&self, stop: &AtomicBool) -> Reading {
        match &self.reader {
            Reader::Counters(c) => Reading::Counters(c.iter().map(Counter::read).collect()),
            Reader::MicroWatts(p) => Reading::Watts(
                p.iter()
                    .map(|(label, path)| {
                        std::fs::read_to_string(path)
                            .ok()
                            .and_then(|t| t.trim().parse::<f64>().ok())
                            .map(|uw| uw / 1e6)
                            .filter(|w| w.is_finite() && (0.0..MAX_WATTS).contains(w))
                            .ok_or_else(|| format!("cannot read {label} ({})", path.display()))
                    })
                    .sum(),
            ),
            Reader::Command(cmd) => match command::watts_until(cmd, COMMAND_TIMEOUT, stop) {
                Ok(w) => Reading::Watts(Ok(w)),
                Err(e @ CommandError::Timeout { .. }) => Reading::TimedOut(e.to_string()),
                Err(e @ CommandError::Stopped { .. }) => Reading::CutOff(e.to_string()),
                Err(e) => Reading::Watts(Err(e.to_string())),
            },
        }
    }
}

/// Energy between two readings of one counter, in µJ, and whether it
/// wrapped; `None` when it went backwards without a known range (reset).
pub(crate) fn counter_delta(prev: u64, cur: u64, max_range_uj: Option<u64>) -> Option<(u64, bool)> {
    if cur >= prev {
        return Some((cur - prev, false));
    }
    let max = max_range_uj.filter(|m| *m >= prev)?;
    Some((max - prev + cur, true))
}

/// A meter and what it measured so far in the window.
#[derive(Debug)]
pub(crate) struct EnergyTrack {
    meter: Meter,
    prev: Reading,
    prev_at: Instant,
    joules: f64,
    measured_s: f64,
    wraps: u32,
    missed: u32,
    /// The first failed reading, reported once.
    first_failure: Option<String>,
    /// The command timed out: no more readings in this window.
    gave_up: bool,
    /// A reading the window's end cut off, named when nothing was measured.
    cut_off: Option<String>,
    /// Intervals with an energy figure.
    intervals: u32,
}

impl EnergyTrack {
    /// Takes the baseline reading (cut short once `stop` is set).
    pub(crate) fn begin(meter: Meter, stop: &AtomicBool) -> EnergyTrack {
        let (prev_at, prev) = meter.read(stop);
        let mut track = EnergyTrack {
            meter,
            prev: Reading::Counters(Vec::new()),
            prev_at,
            joules: 0.0,
            measured_s: 0.0,
            wraps: 0,
            missed: 0,
            first_failure: None,
            gave_up: false,
            cut_off: None,
            intervals: 0,
        };
        track.note_failure(&prev);
        if let Reading::CutOff(e) = &prev {
            track.cut_off = Some(e.clone());
        }
        track.prev = prev;
        track
    }

    /// Reads again (cut short once `stop` is set: that reading is left
    /// out); returns the mean watts since the previous reading, or `None`
    /// when that interval has no energy figure.
    pub(crate) fn sample(&mut self, stop: &AtomicBool) -> Option<f64> {
        if self.gave_up {
            self.missed += 1;
            return None;
        }
        let (at, cur) = self.meter.read(stop);
        if let Reading::CutOff(e) = cur {
            self.cut_off = Some(e);
            return None;
        }
        self.note_failure(&cur);
        let interval_s = at.duration_since(self.prev_at).as_secs_f64();
        let joules = self.joules_between(&cur, interval_s);
        self.prev = cur;
        self.prev_at = at;
        // Never a non-finite or implausible figure (a stored infinity made
        // the trial's probe summary unreadable).
        let joules = joules.filter(|j| j.is_finite() && *j / interval_s < MAX_WATTS);
        match joules {
            Some(j) if interval_s > 0.0 => {
                self.intervals += 1;
                self.joules += j;
                self.measured_s += interval_s;
                Some(j / interval_s)
            }
            _ => {
                self.missed += 1;
                None
            }
        }
    }

    fn joules_between(&mut self, cur: &Reading, interval_s: f64) -> Option<f64> {
        match (&self.prev, cur) {
            (Reading::Counters(a), Reading::Counters(b)) if a.len() == b.len() => {
                let mut uj = 0u64;
                for (c, (x, y)) in self.counters().iter().zip(a.iter().zip(b)) {
                    let (d, wrapped) = counter_delta((*x)?, (*y)?, c.max_range_uj)?;
                    uj += d;
                    self.wraps += u32::from(wrapped);
                }
                Some(uj as f64 / 1e6)
            }
            (Reading::Watts(a), Reading::Watts(b)) => {
                let w = match (a, b) {
                    (Ok(a), Ok(b)) => (a + b) / 2.0,
                    (Ok(w), Err(_)) | (Err(_), Ok(w)) => *w,
                    (Err(_), Err(_)) => return None,
                };
                Some(w * interval_s)
            }
            _ => None,
        }
    }

    fn counters(&self) -> Vec<Counter> {
        match &self.meter.reader {
            Reader::Counters(c) => c.clone(),
            Reader::MicroWatts(_) | Reader::Command(_) => Vec::new(),
        }
    }

    fn note_failure(&mut self, r: &Reading) {
        self.gave_up |= matches!(r, Reading::TimedOut(_));
        if self.first_failure.is_some() {
            return;
        }
        self.first_failure = match r {
            Reading::Watts(Err(e)) => Some(e.clone()),
            Reading::TimedOut(e) => Some(format!("{e}; not run again in this trial")),
            Reading::Counters(c) => {
                let counters = self.counters();
                c.iter()
                    .zip(&counters)
                    .find(|(v, _)| v.is_none())
                    .map(|(_, c)| format!("cannot read {}", c.path.display()))
            }
            Reading::Watts(Ok(_)) | Reading::CutOff(_) => None,
        };
    }

    /// Where a command's readings span less of the window than it lasted
    /// (a meter whose reading takes a second leaves up to a reading at
    /// each end),
    /// the window's joules at the readings' mean watts, and what says so:
    /// left as it was, a 1 s meter gave a 2 s window at 100 W its 100 J
    /// of the 1 s between its readings. A gap of [`EDGE_SHARE`] of the
    /// window or more, or readings coarser than [`COARSE_READINGS`] a
    /// window, is said.
    fn cover_the_window(&mut self, window_s: f64) -> Option<String> {
        // A sysfs meter is read at the window's end: it spans it all.
        if self.meter.is_fast()
            || self.intervals == 0
            || window_s <= 0.0
            || self.measured_s >= window_s
        {
            return None;
        }
        let (spanned, watts) = (self.measured_s, self.joules / self.measured_s);
        self.joules = watts * window_s;
        self.measured_s = window_s;
        let every = spanned / f64::from(self.intervals);
        let coarse = every * f64::from(COARSE_READINGS) > window_s;
        let gap = window_s - spanned;
        if !coarse && gap < EDGE_SHARE * window_s {
            return None;
        }
        let pace = match coarse {
            true => format!(
                " (one reading every {every:.1} s, coarse against the window: a longer \
                 [trials] duration or a faster meter covers more of it)"
            ),
            false => String::new(),
        };
        Some(format!(
            "energy: the meter's readings span {spanned:.1} s of the {window_s:.1} s window{pace}; \
             the window's joules are their mean {watts:.0} W over all of it"
        ))
    }

    /// The window's energy, and the warnings about it (at most one failure,
    /// and the share of the window without a figure). A power meter slower
    /// than the window that gave one reading: that reading is the window's
    /// watts, as with two readings over ssh, and a warning says so.
    pub(crate) fn finish(mut self, window_s: f64) -> (EnergySummary, Vec<String>) {
        let mut warnings = Vec::new();
        if let (Reading::Watts(Ok(w)), 0, true) = (&self.prev, self.intervals, window_s > 0.0) {
            self.joules = w * window_s;
            self.measured_s = window_s;
            warnings.push(format!(
                "energy: one reading in the {window_s:.1} s window (the meter is slower than \
                 that); the window's watts are that reading"
            ));
        }
        if self.missed == 0 {
            warnings.extend(self.cover_the_window(window_s));
        }
        if let Some(e) = &self.first_failure {
            warnings.push(format!("energy: {e} (reported once)"));
        } else if let Some(e) = self.cut_off.as_ref().filter(|_| self.measured_s == 0.0) {
            warnings.push(format!("energy: no reading in this window: {e}"));
        }
        if self.missed > 0 {
            warnings.push(format!(
                "energy covers {:.1} s of the {:.1} s window ({} interval(s) without a reading)",
                self.measured_s, window_s, self.missed
            ));
        }
        let summary = EnergySummary {
            source: self.meter.source,
            domains: self.meter.domains(),
            joules: self.joules,
            measured_s: self.measured_s,
            wraps: self.wraps,
            client_shares_meter: false,
        };
        (summary, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static NO_STOP: AtomicBool = AtomicBool::new(false);

    #[test]
    fn counter_deltas_across_a_wrap() {
        assert_eq!(counter_delta(10, 25, None), Some((15, false)));
        // Wraps to 0 after 1000: 990 → 1000 is 10, 0 → 5 is 5.
        assert_eq!(counter_delta(990, 5, Some(1000)), Some((15, true)));
        assert_eq!(counter_delta(990, 5, None), None, "a reset is not a wrap");
        assert_eq!(counter_delta(2000, 5, Some(1000)), None, "beyond the range");
    }

    #[test]
    fn a_counter_meter_adds_up_each_interval_and_counts_wraps() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("energy_uj");
        let set = |v: u64| std::fs::write(&file, format!("{v}\n")).unwrap();
        set(900_000);
        let meter = Meter::new(
            EnergySource::Rapl,
            Reader::Counters(vec![Counter {
                label: "package-0".into(),
                path: file.clone(),
                max_range_uj: Some(1_000_000),
            }]),
        );
        let mut track = EnergyTrack::begin(meter, &NO_STOP);
        set(950_000);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(track.sample(&NO_STOP).is_some_and(|w| w > 0.0));
        set(50_000); // wrapped: 50_000 + 50_000 µJ
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(track.sample(&NO_STOP).is_some());
        let (s, warnings) = track.finish(1.0);
        assert!((s.joules - 0.15).abs() < 1e-12, "{}", s.joules);
        assert!(s.measured_s > 0.0);
        assert_eq!(s.wraps, 1);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_hung_command_is_given_up_after_its_first_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let meter = Meter::command(format!("echo run >> {}; sleep 60", runs.display()));
        let mut track = EnergyTrack::begin(meter, &NO_STOP);
        assert_eq!(track.sample(&NO_STOP), None);
        assert_eq!(track.sample(&NO_STOP), None);
        let (s, warnings) = track.finish(12.0);
        let ran = std::fs::read_to_string(&runs).unwrap();
        assert_eq!(ran.lines().count(), 1, "run once, then given up");
        assert_eq!(s.watts(), None);
        assert!(warnings[0].contains("not run again"), "{warnings:?}");
    }

    #[test]
    fn a_failed_reading_is_reported_once_and_its_intervals_left_out() {
        let meter = Meter::command("exit 3".into());
        let mut track = EnergyTrack::begin(meter, &NO_STOP);
        assert_eq!(track.sample(&NO_STOP), None);
        assert_eq!(track.sample(&NO_STOP), None);
        let (s, warnings) = track.finish(2.0);
        assert_eq!(s.watts(), None);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("exit"), "{warnings:?}");
        assert!(warnings[1].contains("2 interval"), "{warnings:?}");
    }
}
