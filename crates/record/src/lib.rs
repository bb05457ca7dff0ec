//! scalelab-record: the seam between the lab that runs a trial and the
//! store and report that keep and judge it. What a kind hands up, typed:
//!
//! # Layout
//!
//! - [`catalog`]: what the store and the report are told of the kinds,
//!   handed in by the crate that holds the registries;
//! - [`measurement`]: the [`measurement::Measurement`] a load run is
//!   summarised into, and its [`measurement::LatencySummary`];
//! - [`errors`]: the per-request failures by kind
//!   ([`errors::ErrorCounts`], [`errors::ErrorKind`]) every driver counts
//!   and every report column iterates;
//! - [`facts`]: what a load kind records beyond the measurement, held as
//!   one [`facts::TrialExtras`] the shared layers ask, and read back
//!   through the registry's readers handed in
//!   ([`facts::TrialExtras::resolved`]), never a registry of its own;
//! - [`environment`]: the run's environment fingerprint (this machine's
//!   and each remote host's), its interfaces and machine readings, and the
//!   one flattener and diff of such JSON;
//! - [`profile`]: the profiling overhead's rule;
//! - [`recipe_diff`]: what differs between two recipes as they were run,
//!   by the one rule `--resume` and `history` share;
//! - [`server`]: what a server kind records about itself (its dataset,
//!   and its own facts as a trait object read back by readers handed in);
//! - [`timeline`]: completed requests per bucket, as every driver records
//!   and the store keeps them;
//! - [`probe`]: the probe's samples and summary, the background share, the
//!   limiter's figures and verdict, the energy.
//!
//! It stands on `scalelab-core` alone (`crate::units` is core's; the
//! limiter's counters are read through core's `procfs`), and
//! `scalelab-lab` builds these values: the lab's `load` and `probe`
//! re-export them under their old paths, so a driver's code reads as before, and the store and the report
//! reach them as `scalelab::record` without naming the lab.

#![forbid(unsafe_code)]

use scalelab_core::{analysis, finite, model, procfs, units};

pub mod catalog;
pub mod environment;
pub mod errors;
pub mod facts;
pub mod measurement;
pub mod probe;
pub mod profile;
pub mod recipe_diff;
pub mod server;
pub mod timeline;
