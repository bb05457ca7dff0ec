//! scalelab-record: the seam between the lab that runs a trial and the
//! store and report that keep and judge it. What a kind hands up, typed:
//!
//! # Layout
//!
//! - [`measurement`]: the [`measurement::Measurement`] a load run is
//!   summarised into, and its [`measurement::LatencySummary`];
//! - [`errors`]: the per-request failures by kind
//!   ([`errors::ErrorCounts`], [`errors::ErrorKind`]) every driver counts
//!   and every report column iterates;
//! - [`facts`]: what a load kind records beyond the measurement, held as
//!   one [`facts::TrialExtras`] the shared layers ask, and read back
//!   through the registry's readers handed in
//!   ([`facts::TrialExtras::resolved`]), never a registry of its own;
//! - [`probe`]: the probe's samples and summary, the background share, the
//!   limiter's figures and verdict, the energy.
//!
//! It stands on `scalelab-core` alone (`crate::units` is core's; the
//! limiter's counters are read through core's `procfs`), and
//! `scalelab-lab` builds these values: the lab's `load` and `probe`
//! re-export them under their old paths, so a driver's code reads as before, and the store and the report
//! reach them as `scalelab::record` without naming the lab.

#![forbid(unsafe_code)]

use scalelab_core::{finite, procfs, units};

pub mod errors;
pub mod facts;
pub mod measurement;
pub mod probe;
