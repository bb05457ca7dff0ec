//! Universal Scalability Law fit. (API fixed; bodies filled in by the stats work.)
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    pub sigma: f64,
    pub kappa: f64,
    pub lambda: f64,
    pub sigma_se: f64,
    pub kappa_se: f64,
    pub lambda_se: f64,
    pub sigma_ci: (f64, f64),
    pub kappa_ci: (f64, f64),
    pub lambda_ci: (f64, f64),
    /// N* = sqrt((1 - sigma) / kappa); `None` when kappa = 0 (Amdahl).
    pub peak_concurrency: Option<f64>,
    /// X(N*), or the Amdahl ceiling when kappa = 0.
    pub peak_throughput: f64,
    /// lambda / sigma; `None` when sigma = 0.
    pub amdahl_ceiling: Option<f64>,
    pub r_squared: f64,
    pub points: usize,
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("{0}")]
    BadData(String),
}

/// X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)).
pub fn predict(fit: &UslFit, n: f64) -> f64 {
    fit.lambda * n / (1.0 + fit.sigma * (n - 1.0) + fit.kappa * n * (n - 1.0))
}

/// Fits (N, X) pairs by bounded nonlinear least squares.
pub fn fit(_points: &[(f64, f64)]) -> Result<UslFit, FitError> {
    unimplemented!("stats work")
}
