//! The sampler thread: a reading of every source at the start of the window
//! and then once per interval, until stopped.

use super::data::ProbeData;
use super::energy::{self, EnergyConfig};
use super::window::State;
use super::ProbeError;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Shortest interval: the kernel's CPU counters tick at 100 Hz, so shorter
/// intervals are mostly rounding noise.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// How the sampler samples.
#[derive(Clone, Debug)]
pub struct SamplerConfig {
    /// Time between samples.
    pub interval: Duration,
    /// The energy source (`[probe] energy`).
    pub energy: EnergyConfig,
    /// How the server's system calls are counted (`[probe] syscalls`).
    pub syscalls: super::work::SyscallMode,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            interval: Duration::from_secs(1),
            energy: EnergyConfig::default(),
            syscalls: super::work::SyscallMode::default(),
        }
    }
}

/// A running sampler. The window starts when [`Sampler::start`] returns and
/// ends at [`Sampler::stop`].
#[derive(Debug)]
pub struct Sampler {
    stop: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<ProbeData>>,
}

impl Sampler {
    /// Takes the baseline reading, then samples every `config.interval` on
    /// its own thread. `server_root_pid` is the server's root process; its
    /// descendants are found on every sample. An energy source that
    /// `config.energy` names but the host lacks is an error.
    pub fn start(
        config: SamplerConfig,
        server_root_pid: Option<u32>,
    ) -> Result<Sampler, ProbeError> {
        if config.interval < MIN_INTERVAL {
            return Err(ProbeError::Interval(config.interval));
        }
        let meter = energy::open(&config.energy)?;
        let (stop_tx, stop_rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("scalelab-probe".into())
            .spawn(move || {
                let mut state =
                    State::begin(config.interval, server_root_pid, meter, config.syscalls);
                let _ = ready_tx.send(());
                run(&mut state, config.interval, &stop_rx);
                state.finish()
            })
            .map_err(ProbeError::Spawn)?;
        // Wait for the baseline so the window starts now.
        let _ = ready_rx.recv();
        Ok(Sampler {
            stop: Some(stop_tx),
            handle: Some(handle),
        })
    }

    /// Takes a last sample and returns the timeline and summary.
    pub fn stop(mut self) -> ProbeData {
        self.join()
    }

    fn join(&mut self) -> ProbeData {
        drop(self.stop.take());
        match self.handle.take().map(JoinHandle::join) {
            Some(Ok(data)) => data,
            Some(Err(_)) => {
                let mut data = ProbeData::default();
                data.summary.warnings.push(
                    "the probe's sampler thread failed; no server metrics for this trial".into(),
                );
                data
            }
            None => ProbeData::default(),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.join();
        }
    }
}

fn run(state: &mut State, interval: Duration, stop: &mpsc::Receiver<()>) {
    use crate::probe::limiter::threads::{MIN_TICK, TICKS_PER_SAMPLE};
    let tick = (interval / TICKS_PER_SAMPLE).max(MIN_TICK);
    let mut next = state.started() + interval;
    let mut next_tick = state.started() + tick;
    // Ends when stop is requested or the Sampler is dropped.
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(
        next.min(next_tick)
            .saturating_duration_since(Instant::now()),
    ) {
        let now = Instant::now();
        if now < next {
            state.tick();
            next_tick = now + tick;
            continue;
        }
        state.sample();
        next += interval;
        next_tick = Instant::now() + tick;
        // Fell behind (a stalled machine): skip, don't burst.
        if next < Instant::now() {
            next = Instant::now() + interval;
        }
    }
    // The last, possibly shorter, interval up to the stop.
    if state.since_last_reading() >= Duration::from_millis(1) {
        state.sample();
    }
}
