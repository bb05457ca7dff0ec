//! Statistics and the scalability fit: small pure functions, each citing
//! its method, tested against published values.
//!
//! - [`summary`]: median, mean, sd, min/max, the distribution-free CI of the
//!   median, MAD outliers, the headline statistic.
//! - [`compare`]: ratio of medians with a bootstrap CI, Mann-Whitney U, and
//!   the verdict (faster / slower / no significant difference).
//! - [`mann_whitney`], [`bootstrap`], [`welch`]: the tests behind `compare`
//!   (Welch's t judges `headline = "best"` runs too short for the rank test).
//! - [`floor`]: a claim needs its 95% interval wholly beyond the noise
//!   floor (a minimum-effect test), the rule of every verdict.
//! - [`between`]: verdicts between runs: the run as the unit (t on log run
//!   headlines), the drift between runs, runs needed, Holm.
//! - [`changepoint`]: change points in a history of runs (E-divisive means).
//! - [`steady`]: whether a trial's window is steady (its timeline's
//!   class: steady, warming, drifting, stepped, too short).
//! - [`stopping`]: when a point has enough trials.
//! - [`trend`]: the least-squares slope against time with its interval,
//!   judged against the noise floor (the order-effect check).
//! - [`usl`]: the Universal Scalability Law fit.
//! - [`shape`]: peak, efficiency curve, behaviour past the peak.
//! - [`points_csv`]: (N, X) pairs from CSV text, for `scalelab model`.
//!
//! Comparing two stored runs (`scalelab compare`) reads the store, so it
//! lives above it, in `scalelab::report::runs`.

#![forbid(unsafe_code)]

pub mod between;
pub mod bootstrap;
pub mod changepoint;
pub mod compare;
pub mod floor;
mod lm;
pub mod mann_whitney;
pub mod plan;
pub mod points_csv;
pub mod shape;
pub mod steady;
pub mod stopping;
pub mod student_t;
pub mod summary;
pub mod trend;
pub mod usl;
pub mod welch;
