//! What the probe hands up with each trial, as the store keeps it and the
//! report reads it: the per-interval samples and the window's summary
//! ([`data`]), the other processes' share of the machine
//! ([`background`]), the limiter's figures and verdict ([`limiter`]) and
//! the energy ([`energy`]) and the kernel's counts of the server's work
//! ([`work`]). The lab's `probe` samples and judges, and
//! re-exports these under its own paths.

pub mod background;
mod checked;
pub mod data;
pub mod energy;
pub mod freq;
pub mod limiter;
pub mod work;

pub use data::{
    CpuSplit, NetDelta, PerCpu, ProbeData, ProbeSample, ProbeSummary, ProcessSummary, ServerSample,
};
