//! A trivial load kind that exists only in tests: it proves that a new kind
//! is this module plus one line in [`KINDS`](super::KINDS). It sends
//! nothing; it "completes" `frames × connections × speed` frames, where the
//! speed comes from the fake server's endpoint `fake://<speed>`.

use super::{Driver, ErrorKind, LoadError, LoadKind, LoadResult, LoadSpec};
use crate::model::Dataset;
use crate::shutdown::Shutdown;
use crate::units::{Micros, RateUnit};

/// The `fake` load kind.
pub const LOAD_KIND: LoadKind = LoadKind {
    name: "fake",
    protocol: crate::wire::fake::PROTOCOL,
    unit: RateUnit::Frames,
    error_kinds: &[ErrorKind::Timeout],
    requires: &[],
    compile: |t| {
        let settings = FakeSettings::parse(t)?;
        COUNTS.with(|c| c.compiled.set(c.compiled.get() + 1));
        Ok(super::kind::plan(
            settings,
            |s, endpoint| {
                COUNTS.with(|c| c.drivers.set(c.drivers.get() + 1));
                let speed = endpoint
                    .strip_prefix("fake://")
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| LoadError::Target {
                        target: endpoint.into(),
                        reason: "not a fake:// endpoint".into(),
                    })?;
                Ok(Box::new(FakeDriver {
                    frames: s.frames,
                    speed,
                }))
            },
            |s| s.scale.map(|scale| Dataset::Pgbench { scale }),
        ))
    },
    facts: None,
};

/// How often this thread compiled fake settings and built fake drivers
/// (tests count them: the experiment is compiled once, a trial builds one
/// driver).
#[derive(Default)]
pub struct Counts {
    /// Settings tables compiled.
    pub compiled: std::cell::Cell<u32>,
    /// Drivers built.
    pub drivers: std::cell::Cell<u32>,
}

thread_local! {
    /// This thread's [`Counts`].
    pub static COUNTS: Counts = Counts::default();
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FakeSettings {
    /// Frames each connection "completes" per second of the run.
    #[serde(default = "hundred")]
    frames: u64,
    /// Declares a dataset (pgbench's, for want of a fake one) for the fake
    /// server to "hold".
    scale: Option<u32>,
}

fn hundred() -> u64 {
    100
}

impl FakeSettings {
    fn parse(t: &toml::Table) -> Result<Self, LoadError> {
        crate::kinds::parse_settings(t).map_err(LoadError::Spec)
    }
}

struct FakeDriver {
    frames: u64,
    speed: u64,
}

impl Driver for FakeDriver {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn run(&self, spec: &LoadSpec, _: &Shutdown) -> Result<LoadResult, LoadError> {
        let mut r = LoadResult::new();
        let secs = spec.duration.as_secs_f64();
        let n = (self.frames as f64 * secs) as u64 * u64::from(spec.connections) * self.speed;
        for _ in 0..n {
            r.record(Micros(100), std::time::Duration::ZERO);
        }
        r.elapsed = spec.duration;
        Ok(r)
    }
}
