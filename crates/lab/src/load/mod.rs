//! Load generation: one [`Driver`] trait, one driver per protocol.
//!
//! The *shape* of the load is data, not code: a [`LoadSpec`] says how many
//! connections over how many threads, for how long, closed or open loop
//! ([`Pacing`]), and how many requests each connection carries before it is
//! replaced. Every driver honours the same spec, so the runner, the CLI and
//! the tests treat HTTP, PostgreSQL and the rest alike.
//!
//! Workers pre-aggregate into a mergeable [`LoadResult`] (as oha does): each
//! thread owns its histogram, counters and timeline, and the driver merges
//! them once at the end. Nothing is shared on the hot path.

pub mod dns;
pub use scalelab_record::errors;
pub(crate) mod event_loop;
pub mod facts;
#[cfg(any(test, feature = "test-support"))]
pub mod fake;
#[cfg(any(test, feature = "test-support"))]
mod fake_rule;
pub mod forward;
pub(crate) mod gate;
pub(crate) mod gather;
pub mod held;
pub mod histogram;
pub mod http;
mod kind;
pub mod limits;
pub mod live;
pub mod mysql;
pub mod pg;
pub(crate) mod reqresp;
pub mod result;
pub use scalelab_record::timeline;
pub(crate) mod timerfd;
pub mod xdp;

pub use facts::TrialExtras;
pub use kind::{LoadKind, LoadPlan};
pub use result::{ErrorCounts, ErrorKind, LoadResult};

/// Every load kind scalelab can generate: adding a kind is its module plus
/// one line here.
pub const KINDS: &[&LoadKind] = &[
    &http::LOAD_KIND,
    &pg::LOAD_KIND,
    &mysql::LOAD_KIND,
    &dns::LOAD_KIND,
    &forward::LOAD_KIND,
    #[cfg(any(test, feature = "test-support"))]
    &fake::LOAD_KIND,
    #[cfg(any(test, feature = "test-support"))]
    &fake_rule::LOAD_KIND,
];

use crate::shutdown::Shutdown;
use std::time::Duration;

/// How requests are paced.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Pacing {
    /// Each connection sends its next request as soon as the previous
    /// response arrives (wrk, pgbench without `--rate`).
    Closed,
    /// Requests are scheduled at a constant total rate (per second), spread
    /// evenly over the connections. Latency is measured from each request's
    /// *scheduled* send time, so a stalled server shows in the percentiles
    /// (no coordinated omission; wrk2 `-R`, pgbench `--rate`).
    Open {
        /// Requests per second, over all connections.
        rate: f64,
    },
}

/// The most connections one load run opens ([`limits::CONNECTIONS`]).
pub const MAX_CONNECTIONS: u32 = limits::CONNECTIONS.max;
/// The most load-generator threads ([`limits::THREADS`]).
pub const MAX_THREADS: u32 = limits::THREADS.max;
/// The lowest open-loop rate, per second: it keeps a connection's interval
/// (connections / rate) a duration that exists.
pub const MIN_RATE: f64 = 1e-3;
/// The highest open-loop rate, per second.
pub const MAX_RATE: f64 = 1e9;

/// The shape of one load run, shared by every driver.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoadSpec {
    /// Concurrent connections (clients).
    pub connections: u32,
    /// Worker threads; connections are spread over them as evenly as possible.
    pub threads: u32,
    /// How long to generate load. Every run is bounded by this.
    pub duration: Duration,
    /// Closed or open loop.
    pub pacing: Pacing,
    /// Requests (transactions) per connection before it is closed and a new
    /// one opened; `None` keeps connections alive for the whole run
    /// (wrk `--connreqs`, pgbench `-C` is `Some(1)`).
    pub requests_per_connection: Option<u32>,
    /// A request that has not completed after this long counts as a timeout
    /// error and its connection is replaced.
    pub timeout: Duration,
    /// Stop after this many completed requests in total (tests use it for
    /// exact counts). `None` runs for `duration`.
    pub max_requests: Option<u64>,
    /// CPUs the load generator's threads are pinned to (`None`: no pinning).
    pub client_cpus: Option<Vec<usize>>,
    /// Opt-in reply coalescing for the http, pg and mysql drivers' polled
    /// closed loop (`load::gather`): a worker with many requests in flight
    /// sleeps until half of them are answered, so the server need not wake
    /// it per reply. Off by default: it delays replies by up to a round
    /// trip, which lowers throughput wherever the server is not saturated.
    #[serde(default)]
    pub coalesce: bool,
}

impl LoadSpec {
    /// A closed-loop keep-alive spec with wrk's defaults (`-c10 -t2 -d10s`).
    pub fn closed(connections: u32, threads: u32, duration: Duration) -> Self {
        LoadSpec {
            connections,
            threads,
            duration,
            pacing: Pacing::Closed,
            requests_per_connection: None,
            timeout: Duration::from_secs(2),
            max_requests: None,
            client_cpus: None,
            coalesce: false,
        }
    }

    /// Threads actually used: never more than connections, at least one.
    pub fn effective_threads(&self) -> u32 {
        Self::default_threads(Some(self.threads), 0, self.connections)
    }

    /// The one thread default, for a recipe's `[load] threads` and `scalelab
    /// load --threads`: the `threads` given, else one per CPU the generator
    /// may use (`cpus`); never more than the `connections`, at least one.
    pub fn default_threads(threads: Option<u32>, cpus: u32, connections: u32) -> u32 {
        threads.unwrap_or(cpus).min(connections).max(1)
    }

    /// Connections owned by worker `index` (0-based) when spread evenly.
    pub fn connections_for_thread(&self, index: u32) -> u32 {
        let t = self.effective_threads();
        self.connections / t + u32::from(index < self.connections % t)
    }

    /// Checks the spec for values no driver can honour.
    pub fn validate(&self) -> Result<(), LoadError> {
        limits::CONNECTIONS
            .check(self.connections.into())
            .map_err(LoadError::Spec)?;
        limits::THREADS
            .check(self.threads.into())
            .map_err(LoadError::Spec)?;
        limits::check_timeout(self.timeout).map_err(LoadError::Spec)?;
        if self.duration > crate::units::MAX_DURATION {
            return Err(LoadError::Spec(
                "durations must be at most 720h (30 days)".into(),
            ));
        }
        if self.duration.is_zero() && self.max_requests.is_none() {
            return Err(LoadError::Spec("duration must be greater than zero".into()));
        }
        if let Pacing::Open { rate } = self.pacing {
            if !(MIN_RATE..=MAX_RATE).contains(&rate) {
                return Err(LoadError::Spec(format!(
                    "rate must be a number per second from {MIN_RATE} to {MAX_RATE:e}"
                )));
            }
        }
        if self.requests_per_connection == Some(0) {
            return Err(LoadError::Spec("connreqs must be at least 1".into()));
        }
        if self.coalesce && self.pacing != Pacing::Closed {
            return Err(LoadError::Spec(
                "coalesce works in the closed loop only: drop --coalesce or --rate".into(),
            ));
        }
        Ok(())
    }
}

/// Why a load run could not produce a result at all. Per-request failures
/// (refused connections, timeouts, bad statuses) are *not* errors here: they
/// are counted in [`LoadResult::errors`].
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The load's settings or shape are invalid.
    #[error("invalid load: {0}")]
    Spec(String),
    /// The endpoint cannot be used (unparsable, not loopback, ...).
    #[error("invalid target `{target}`: {reason}")]
    Target {
        /// The endpoint as given (passwords redacted).
        target: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Preparing the run failed (connecting, detecting the scale, ...).
    #[error("load setup failed: {0}")]
    Setup(String),
    /// The load generator's own i/o failed.
    #[error("i/o error in the load generator: {0}")]
    Io(#[from] std::io::Error),
}

/// A load generator for one protocol.
///
/// `run` blocks for at most `spec.duration` plus the time to drain in-flight
/// requests (bounded by `spec.timeout`), and returns early when `shutdown`
/// is triggered, with what was measured so far.
pub trait Driver: Send + Sync {
    /// Short protocol name: `http`, `pg`, ...
    fn name(&self) -> &'static str;
    /// Generates the load `spec` describes and returns what it measured.
    fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadResult, LoadError>;
}

/// The registered load kind called `name`, or an error listing the kinds.
pub fn kind(name: &str) -> Result<&'static LoadKind, LoadError> {
    crate::kinds::lookup("load", KINDS, name).map_err(LoadError::Spec)
}

/// The names of the registered load kinds, in registry order.
pub fn kind_names() -> Vec<&'static str> {
    crate::kinds::names(KINDS)
}

/// Checks `kind`'s kind-specific settings (the experiment's `[load]`
/// table minus the [`LoadSpec`] fields) and compiles them into its typed
/// plan, which builds the driver ([`LoadPlan::driver`]) and names the
/// dataset ([`LoadPlan::dataset`]).
pub fn compile(
    kind: &'static LoadKind,
    settings: &toml::Table,
) -> Result<Box<dyn LoadPlan>, LoadError> {
    (kind.compile)(settings)
}

/// Runs `work` on each job in its own named scoped thread and returns each
/// thread's result in job order; a panicking thread becomes a setup error.
pub fn run_threads<J: Send, R: Send>(
    name: &str,
    jobs: impl IntoIterator<Item = J>,
    work: impl Fn(J) -> std::io::Result<R> + Sync,
) -> Vec<Result<R, LoadError>> {
    let work = &work;
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|job| {
                std::thread::Builder::new()
                    .name(format!("scalelab-{name}"))
                    .spawn_scoped(s, move || work(job))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .map_err(|_| LoadError::Setup(format!("a {name} load thread panicked")))?
                    .map_err(LoadError::Io),
                Err(e) => Err(LoadError::Io(e)),
            })
            .collect()
    })
}

/// Raises RLIMIT_NOFILE's soft limit to the hard limit and returns the new
/// soft limit, so thousands of connections fit.
pub fn raise_fd_limit() -> u64 {
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let want = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                return lim.rlim_max;
            }
        }
        lim.rlim_cur
    }
}

/// CPU seconds (user + system) used so far by this whole process.
pub fn process_cpu() -> crate::units::CpuSeconds {
    // SAFETY: getrusage fills the struct we pass.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    crate::units::CpuSeconds(tv(ru.ru_utime) + tv(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_default_is_one_per_cpu_capped_by_the_connections() {
        assert_eq!(LoadSpec::default_threads(None, 4, 10), 4);
        assert_eq!(LoadSpec::default_threads(None, 4, 2), 2);
        assert_eq!(LoadSpec::default_threads(Some(8), 4, 10), 8);
        assert_eq!(LoadSpec::default_threads(Some(8), 4, 3), 3);
        assert_eq!(LoadSpec::default_threads(Some(0), 4, 0), 1);
        assert_eq!(LoadSpec::default_threads(None, 0, 5), 1);
    }

    #[test]
    fn connections_spread_evenly() {
        let s = LoadSpec::closed(10, 4, Duration::from_secs(1));
        let per: Vec<u32> = (0..4).map(|i| s.connections_for_thread(i)).collect();
        assert_eq!(per, vec![3, 3, 2, 2]);
        assert_eq!(per.iter().sum::<u32>(), 10);
        let few = LoadSpec::closed(2, 8, Duration::from_secs(1));
        assert_eq!(few.effective_threads(), 2);
    }

    #[test]
    fn validation_names_the_problem() {
        let mut s = LoadSpec::closed(0, 1, Duration::from_secs(1));
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("connections"));
        s.connections = 1;
        s.pacing = Pacing::Open { rate: 0.0 };
        assert!(s.validate().unwrap_err().to_string().contains("rate"));
        s.pacing = Pacing::Open { rate: 100.0 };
        s.coalesce = true;
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.contains("closed loop only") && e.contains("--coalesce"),
            "{e}"
        );
        s.pacing = Pacing::Closed;
        assert!(s.validate().is_ok());
    }
}
