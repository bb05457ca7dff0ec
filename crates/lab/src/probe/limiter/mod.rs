//! What limited a trial: a short, measured verdict at every point.
//!
//! After Brendan Gregg's USE method ("for every resource, check
//! utilization, saturation and errors",
//! <https://www.brendangregg.com/usemethod.html>) and his off-CPU analysis
//! (<https://www.brendangregg.com/offcpuanalysis.html>): the probe adds to
//! its samples the figures that name a limiter, and [`verdict::judge`]
//! checks each against a named threshold (documented in
//! `docs/limiter.md`):
//!
//! - CPU: the server's busy share of the CPUs it may use (utilisation) and
//!   its threads' run-queue wait from `/proc/PID/task/TID/schedstat`
//!   (saturation);
//! - the server's threads off-CPU and not runnable, split by what they
//!   wait on (lock or event, I/O, network), sampled from each thread's
//!   state and current system call ([`waits`]);
//! - the listen queue (`ListenOverflows`, `ListenDrops`, `TCPBacklogDrop`
//!   of `/proc/PID/net/netstat`, in the server's network namespace) and UDP
//!   receive errors (`RcvbufErrors` of `/proc/PID/net/snmp`) ([`counters`]);
//! - memory: the server's major faults and the machine's swap-in/out
//!   (`/proc/vmstat`), and its storage reads (`/proc/PID/io`), each
//!   counted once over the tree ([`tree_counters`]);
//! - errors and client-bound trials, judged by the runner.
//!
//! [`threads`] holds the sampler's side; its cost is in the probe's own
//! (`sampler_cpu_s`), measured by `bench/limiter-cost.sh`.

pub mod balance;
pub use scalelab_record::probe::limiter::counters;
pub mod cpu;
pub use scalelab_record::probe::limiter::numbers;
pub mod server_waits;
pub mod threads;
pub mod tree_counters;
pub mod verdict;
pub mod waits;
pub mod woken;

pub use scalelab_record::probe::limiter::{LimiterFigures, ThreadFigures, WaitCounts};

pub use counters::Counters;
pub use verdict::{judge, Limiter, LimiterInputs, LimiterKind, LimiterNumbers};
