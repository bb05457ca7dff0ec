//! Server-side metrics sampled while a trial runs, and the environment
//! fingerprint.
//!
//! [`Sampler::start`] takes a baseline reading of `/proc` and then samples
//! every interval on its own thread until [`Sampler::stop`], which returns
//! a timeline of per-interval deltas and a summary over the whole window
//! ([`ProbeData`]). The runner starts it after warmup. Each source has its
//! own file with a pure parser (text in, values out) apart from the reading:
//!
//! - `cpu` reads `/proc/stat`: CPU time split per CPU, and the run queue;
//! - `freq` reads cpufreq or the MHz in `/proc/cpuinfo`;
//! - `loadavg` reads `/proc/loadavg`;
//! - `netdev` turns `/proc/net/dev` readings into deltas;
//! - `nic`: the interfaces' driver, channels, rings, offloads and RPS/XPS
//!   masks, for the fingerprint; `nic_script` reads the same over plain
//!   ssh on a host without an agent, Linux or BSD (`nic_bsd`);
//! - `tree` and `tracker` follow the server's process tree;
//!
//! The `/proc` files themselves are read and parsed by [`crate::procfs`].
//! - [`own`] measures this process (the load generator) and the sampler;
//! - [`energy`] reads RAPL, hwmon or a power command (`[probe] energy`).
//! - [`background`] what the rest of the machine used (steal, other processes);
//! - [`limiter`] the figures that name what limited the trial, and the verdict.
//! - [`work`] the kernel's counts of the server's work (system calls,
//!   context switches, migrations, faults, CPU by mode, hardware counters).
//! - [`machine`] the knobs checked before a run (governor, turbo, IRQs,
//!   ASLR, swap, neighbours), stored in the fingerprint, and their warnings.
//!
//! Every field is documented in `docs/probe-metrics.md`.

pub use scalelab_record::probe::background;

pub(crate) mod client;
pub mod cpu;
pub use scalelab_record::probe::data;
pub mod energy;
pub mod fingerprint;
pub mod freq;
pub mod limiter;
pub mod machine;
pub(crate) mod netdev;
pub mod netns;
pub(crate) mod nic;
pub mod nic_bsd;
pub mod nic_script;
pub mod own;
#[cfg(test)]
mod proc_guard;
pub(crate) mod sampler;
pub mod summary;
mod text;
pub(crate) mod tracker;
pub mod tree;
mod window;
pub mod work;

pub use client::{
    client_bound, client_bound_reason, client_verdict, server_cpu_per_request,
    CLIENT_BOUND_FRACTION,
};
pub use data::{
    CpuSplit, NetDelta, PerCpu, ProbeData, ProbeSample, ProbeSummary, ProcessSummary, ServerSample,
};
pub use fingerprint::{capture, Fingerprint, SYSCTLS};
pub use sampler::{Sampler, SamplerConfig};
pub use scalelab_record::environment::{
    diff, flatten, flatten_leaves, Environment, EnvironmentError, HostFingerprint,
    PortableFingerprint, ScalarLists, ENVIRONMENT_VERSION,
};

/// Why the sampler could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The interval asked for is shorter than 10 ms (`MIN_INTERVAL`).
    #[error("the probe's sampling interval must be at least 10ms (the kernel's CPU counters tick at 100 Hz), not {0:?}")]
    Interval(std::time::Duration),
    /// The OS refused to spawn the sampler thread.
    #[error("could not start the probe's sampler thread: {0}")]
    Spawn(std::io::Error),
    /// The energy source asked for is not on this host.
    #[error(transparent)]
    Energy(#[from] energy::EnergyError),
}
