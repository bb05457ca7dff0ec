//! The judging layer: what a stored run, or a set of them, says.
//!
//! Between the [`crate::store`] and the renderers (the `scalelab-report`
//! crate, above this one, which the compiler keeps from being named here):
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
//! - [`kernel_lock`]: the kernel lock a profile's stacks spin in.
//! - [`check_work`]: `check --on`, the gate on a count per request.
//! - [`check_shape`]: `check --on n_star|peak|...`, the gate on a curve's shape.
//! - [`planner`]: `plan RECIPE`, the runs and trials that resolve a change.
//! - [`work`] the kernel's counts of the server's work per operation at a
//!   point, and [`work_change`] which of them changed between two sides.
//! - [`runs`] (two runs), [`multi`] (N runs merged, their drift),
//!   [`check`] (the regression gate) and [`history`] (a recipe across
//!   runs, its change points).
//! - [`verdict`] and [`mod@format`]: the marks and the number words every
//!   verdict is given in.

pub mod analyse;
pub mod caveat;
pub mod check;
pub mod check_shape;
pub mod check_work;
pub mod comparable;
pub mod context_facts;
pub mod energy;
pub mod energy_cell;
pub mod figures;
pub mod fits;
pub mod format;
pub mod history;
pub mod judge;
pub mod kernel_lock;
pub mod layout;
pub mod limiter;
pub mod multi;
pub mod order_effect;
pub mod planner;
pub mod probe_view;
pub mod profiled;
pub mod rows;
pub mod runs;
#[cfg(test)]
mod same_mark_tests;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod tls_bound;
pub mod verdict;
pub mod work;
pub mod work_change;
