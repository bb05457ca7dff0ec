//! scalelab-core: the layers every other scalelab crate stands on, and
//! which depend on no other scalelab crate (`cargo tree -e normal` shows
//! it).
//!
//! # Layout
//!
//! - The leaves, which import no other module (but `analysis` → `rng` and
//!   `owned` → `procfs`): [`analysis`] (small pure statistics functions,
//!   each citing its method), [`model`] (the sweep point, the dataset seam,
//!   the DNS lab's names, a host's name, the router lab's topology),
//!   [`kinds`] (the settings parser and installation requirements every
//!   kind shares), [`units`], [`finite`], [`rng`], [`shutdown`],
//!   [`owned`] (owner-PID paths and cgroups, the reaper) and [`procfs`]
//!   (the one reader of `/proc`, and writer of a sysctl; joining a network
//!   namespace).
//! - [`placement`]: CPU pinning and cgroup memory limits.
//! - [`sys`]: processes, the one server lifecycle (session, cgroup,
//!   watchdog), private network namespaces, routes, the page cache.
//!
//! The `scalelab` crate re-exports every module here under its own name
//! (`scalelab::analysis` is `scalelab_core::analysis`), so paths read the
//! same on either side of the seam.

pub mod analysis;
pub mod finite;
pub mod kinds;
pub mod model;
pub mod owned;
pub mod placement;
pub mod procfs;
pub mod rng;
pub mod shutdown;
pub mod sys;
pub mod units;
