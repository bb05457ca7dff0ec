//! The judging layer: what a stored run, or a set of them, says.
//!
//! Between the [`crate::store`] and the renderers ([`crate::report`]):
//! every rule that keeps or leaves out a trial, a run or a point, and every
//! verdict, is decided here once and handed up as one typed value, which
//! the renderers only draw (hyperfine's `benchmark/` and `export/`).
//!
//! # Layout
//!
//! - `rows`: a run's per-(system, point) cells from its trials, and
//!   [`analyse::aggregate`], the `Aggregate` every format of one run draws.
//! - [`judge`]: the engine and its [`judge::Rules`] (client-bound, errors,
//!   too few trials, too few runs, background, the noise floor), used by
//!   every view below.
//! - `fits`, `caveat`, `layout`, `limiter`, [`energy`],
//!   [`energy_cell`], [`order_effect`], `figures`, [`comparable`],
//!   `context_facts`, `probe_view`: the parts of a cell and a curve.
//! - [`runs`] (two runs), [`multi`] (N runs merged, their drift),
//!   [`check`] (the regression gate) and [`history`] (a recipe across
//!   runs, its change points).
//! - [`verdict`] and [`mod@format`]: the marks and the number words every
//!   verdict is given in.

pub mod analyse;
pub(crate) mod caveat;
pub mod check;
pub mod comparable;
pub(crate) mod context_facts;
pub mod energy;
pub mod energy_cell;
pub(crate) mod figures;
pub(crate) mod fits;
pub mod format;
pub mod history;
pub mod judge;
pub(crate) mod layout;
pub(crate) mod limiter;
pub mod multi;
pub mod order_effect;
pub(crate) mod probe_view;
pub(crate) mod rows;
pub mod runs;
#[cfg(test)]
mod same_mark_tests;
#[cfg(test)]
pub(crate) mod test_support;
pub mod verdict;
