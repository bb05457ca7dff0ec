//! The meter off the probe's clock: an [`EnergyWorker`] reads the meter on
//! its own thread, once per probe interval, so a slow or hung meter (IPMI
//! takes about 1 s a reading) never delays a sample or either end of the
//! window. The probe takes the newest interval's watts for its timeline
//! without waiting; at the window's end a reading still running is cut off
//! (its process group killed) and the energy covers the readings taken.

use super::meter::{EnergyTrack, Meter};
use super::EnergySummary;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the thread hands back: the window's energy and its warnings.
type Finished = (EnergySummary, Vec<String>);

/// A meter being read on its own thread.
#[derive(Debug)]
pub(crate) struct EnergyWorker {
    /// Cuts off a reading in progress.
    stop: Arc<AtomicBool>,
    /// Ends the thread and tells it the window's length.
    window_s: mpsc::Sender<f64>,
    /// The mean watts of the newest interval not yet taken.
    latest: Arc<Mutex<Option<f64>>>,
    handle: JoinHandle<Finished>,
}

impl EnergyWorker {
    /// Starts reading `meter` now and then every `interval`; `None` when
    /// the thread cannot be started (the caller warns).
    pub(crate) fn start(meter: Meter, interval: Duration) -> Option<EnergyWorker> {
        let stop = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(Mutex::new(None));
        let (tx, rx) = mpsc::channel();
        let (thread_stop, thread_latest) = (stop.clone(), latest.clone());
        let handle = std::thread::Builder::new()
            .name("scalelab-energy".into())
            .spawn(move || read_until_stopped(meter, interval, &thread_stop, &thread_latest, &rx))
            .ok()?;
        Some(EnergyWorker {
            stop,
            window_s: tx,
            latest,
            handle,
        })
    }

    /// The mean watts since the last call, when a reading completed.
    pub(crate) fn take_watts(&self) -> Option<f64> {
        self.latest.lock().ok()?.take()
    }

    /// Cuts off any reading in progress and returns the window's energy
    /// (`window_s`: the probe's window, for the coverage warning).
    pub(crate) fn finish(self, window_s: f64) -> Option<Finished> {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.window_s.send(window_s);
        self.handle.join().ok()
    }
}

fn read_until_stopped(
    meter: Meter,
    interval: Duration,
    stop: &AtomicBool,
    latest: &Mutex<Option<f64>>,
    window_s: &mpsc::Receiver<f64>,
) -> Finished {
    let fast = meter.is_fast();
    let mut next = Instant::now() + interval;
    let mut track = EnergyTrack::begin(meter, stop);
    let window = loop {
        match window_s.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(w) => break Some(w),
            Err(RecvTimeoutError::Disconnected) => break None,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(w) = track.sample(stop) {
            if let Ok(mut l) = latest.lock() {
                *l = Some(w);
            }
        }
        next += interval;
        // A meter slower than the interval is read back to back.
        next = next.max(Instant::now());
    };
    // A sysfs counter is read once more at the window's end (microseconds);
    // a command is not waited for.
    if fast {
        track.sample(&AtomicBool::new(false));
    }
    track.finish(window.unwrap_or(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_meter_is_read_while_the_caller_goes_on_and_is_cut_off_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        // 300 ms a reading, like a slow BMC.
        let cmd = format!("echo run >> {}; sleep 0.3; echo 150 W", runs.display());
        let w = EnergyWorker::start(Meter::command(cmd), Duration::from_millis(100)).unwrap();
        std::thread::sleep(Duration::from_millis(1100));
        let (s, warnings) = w.finish(1.1).unwrap();
        let ran = std::fs::read_to_string(&runs).unwrap().lines().count();
        // Back to back: about 3 readings in 1.1 s; the last one cut off,
        // and the window's ends at the readings' watts, which is said.
        assert!(ran >= 2, "ran {ran} times");
        assert_eq!(s.watts().map(|w| w.round()), Some(150.0), "{s:?}");
        assert_eq!(s.measured_s, 1.1, "{s:?}");
        assert!((s.joules - 165.0).abs() < 1e-6, "{s:?}");
        assert!(
            warnings
                .iter()
                .all(|w| w.contains("the meter's readings span")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_one_second_meter_gives_the_whole_window_its_joules_and_says_it_is_coarse() {
        // Issue 46: a 1 s meter at 100 W gave a 2 s window 100 J: its
        // readings (each stamped mid-run) span 1 s of it, and the reading
        // running at the end is cut off.
        let w = EnergyWorker::start(
            Meter::command("sleep 1; echo 100 W".into()),
            Duration::from_secs(1),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        let (s, warnings) = w.finish(2.5).unwrap();
        assert_eq!(s.watts().map(f64::round), Some(100.0), "{s:?}");
        assert!((s.joules - 250.0).abs() < 1e-6, "{s:?} {warnings:?}");
        assert_eq!(s.measured_s, 2.5);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("coarse against the window") && w.contains("of the 2.5 s")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_hung_meter_is_named_when_the_window_ends_without_a_reading() {
        let w = EnergyWorker::start(
            Meter::command("sleep 60".into()),
            Duration::from_millis(100),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let (s, warnings) = w.finish(0.3).unwrap();
        assert_eq!(s.watts(), None);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("no reading in this window")),
            "{warnings:?}"
        );
    }
}
