//! scalelab-results: what is kept of a run, and how it is judged.
//!
//! # Layout
//!
//! - [`store`]: SQLite. Runs, trials, measurements, timelines and HDR
//!   histograms, written one trial per transaction and read back typed
//!   (`docs/store-schema.md`). It is handed the kinds' catalog when it is
//!   opened (`Store::open(path, scalelab::catalog())`), which reads a
//!   trial's stored facts back.
//! - [`judging`]: what the stored runs say, decided once: each run's
//!   `Aggregate` (`rows`, `analyse`, `fits`), the engine's rules (`judge`),
//!   two runs compared ([`judging::runs`]), N runs merged and their drift
//!   ([`judging::multi`]), the regression gate ([`judging::check`]) and a
//!   recipe's history ([`judging::history`]).
//!
//! The renderers that draw what `judging` decided are the crate above,
//! `scalelab-report`: this crate does not depend on it, so the compiler
//! refuses an import of a renderer from the judging layer. It stands on
//! `scalelab-core` and `scalelab-record` alone, whose modules it names as
//! its own (`crate::analysis` is core's, `crate::record` the record
//! crate): it never names the lab that runs a trial (its servers, load
//! generators, probe or profiler), and the compiler refuses such an
//! import. Its tests build their fixtures with the lab's kinds, a
//! dev-dependency; its `test-support` feature lends the report crate's
//! tests the same fixtures (`judging::test_support`). It holds no `unsafe`
//! (the system calls it needs are core's `sys::terminal`). The `scalelab`
//! crate re-exports both modules under their own names.

#![forbid(unsafe_code)]

use scalelab_core::{analysis, model, placement, procfs, sys, units};
use scalelab_record as record;

#[cfg(test)]
use scalelab_lab::{load, probe, server};

pub mod judging;
pub mod store;
