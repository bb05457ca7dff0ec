//! scalelab-lab: what a trial runs on one host. The servers it starts,
//! the load generators that drive them, the probe that samples the
//! machine and the server's process tree, and the profiler.
//!
//! # Layout
//!
//! - [`server`]: the server kinds (nginx, PostgreSQL, MariaDB, BIND,
//!   Unbound, NSD, the router lab) behind one `Server` trait and one
//!   registry, `server::KINDS`.
//! - [`load`]: the load kinds (HTTP, pgbench-style, sysbench-style, DNS,
//!   forwarding) behind one `LoadGenerator` trait and one registry,
//!   `load::KINDS`, with the measurement they return.
//! - [`probe`]: the per-interval sampler, its summary, the limiter, the
//!   machine's fingerprint and readings.
//! - [`profile`]: on-CPU and off-CPU profiles and their folded stacks.
//! - [`catalog()`]: the kinds as the store and the report are told of
//!   them.
//!
//! It stands on `scalelab-core` and `scalelab-wire`, whose modules it
//! names as its own (`crate::model` is `scalelab_core::model`), and knows
//! nothing of the store, the report, the recipe or the runner above it:
//! the compiler refuses such an import. The `scalelab` crate re-exports
//! each module here under its own name.

use scalelab_core::{analysis, kinds, model, owned, placement, procfs, rng, shutdown, sys, units};
use scalelab_wire as wire;

pub mod load;
pub mod probe;
pub mod profile;
pub mod server;
pub mod tls;

/// The kinds as the store and the report are told of them (built once
/// from the registries `load::KINDS` and `server::KINDS`): handed to the
/// store when one is opened.
pub fn catalog() -> &'static scalelab_record::catalog::Catalog {
    static CATALOG: std::sync::OnceLock<scalelab_record::catalog::Catalog> =
        std::sync::OnceLock::new();
    CATALOG.get_or_init(|| scalelab_record::catalog::Catalog {
        facts: load::facts::readers(),
        servers: server::KINDS.iter().filter_map(|k| k.facts).collect(),
        units: load::KINDS.iter().map(|k| (k.name, k.unit)).collect(),
        parallelism: server::KINDS
            .iter()
            .map(|k| (k.name, k.parallelism))
            .collect(),
    })
}

/// The repository's root, where `tests/fixtures` are and the guard tests
/// read the sources from (tests only).
#[cfg(any(test, feature = "test-support"))]
pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
