//! Statistics and the scalability fit: small pure functions, each citing
//! its method, tested against published values.
//!
//! - [`summary`]: median, mean, sd, min/max, the distribution-free CI of the
//!   median, MAD outliers, the headline statistic.
//! - [`compare`]: ratio of medians with a bootstrap CI, Mann-Whitney U, and
//!   the verdict (faster / slower / no significant difference).
//! - [`usl`]: the Universal Scalability Law fit.
//! - [`shape`]: peak, efficiency curve, behaviour past the peak.

pub mod compare;
pub mod shape;
pub mod stopping;
pub mod summary;
pub mod usl;
