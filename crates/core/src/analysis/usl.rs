//! Universal Scalability Law fit (Gunther, "Guerrilla Capacity Planning",
//! 2007, ch. 4-6):
//!
//! `X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))`
//!
//! with all three coefficients free, as the R package `usl` fits it since
//! version 2.0 (Möding; its `gamma` is our `lambda`, `alpha` our `sigma`,
//! `beta` our `kappa`). The fit is bounded nonlinear least squares,
//! `sigma, kappa in [0, 1]`, `lambda >= 0`, by Levenberg-Marquardt with
//! Marquardt's diagonal scaling (Marquardt 1963; Nocedal & Wright,
//! "Numerical Optimization", 2nd ed., §10.3) and a projected step: a
//! parameter on a bound whose gradient points outwards is held there.
//! Standard errors come from the Jacobian at the optimum, `s^2 (J^T J)^-1`
//! with `s^2 = SSE / (n - 3)` (Bates & Watts, "Nonlinear Regression
//! Analysis", 1988, §2.3, as R's `nls` and `usl` compute them), and 95% CIs
//! are `estimate ± t(0.975, n - 3) SE`, clipped to the bounds.
use super::lm::{self, Problem};
use serde::{Deserialize, Serialize};

/// A USL fit of throughput X against concurrency N: the coefficients with their standard errors
/// and 95% CIs, and what they imply (see the module doc for the method).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UslFit {
    /// Contention (serial fraction), in [0, 1]: the Amdahl term.
    pub sigma: f64,
    /// Coherency (crosstalk) cost, in [0, 1]: the term that makes throughput fall past the
    /// peak.
    pub kappa: f64,
    /// Throughput of one unit of concurrency, X(1), in the throughput's own unit (requests/s,
    /// ...).
    pub lambda: f64,
    /// Standard errors; 0 when there are none (exactly 3 points, see
    /// `warnings` and [`UslFit::has_error_estimates`]).
    pub sigma_se: f64,
    /// Standard error of `kappa`; 0 when there is none.
    pub kappa_se: f64,
    /// Standard error of `lambda`; 0 when there is none.
    pub lambda_se: f64,
    /// 95% CI of `sigma`, clipped to [0, 1].
    pub sigma_ci: (f64, f64),
    /// 95% CI of `kappa`, clipped to [0, 1].
    pub kappa_ci: (f64, f64),
    /// 95% CI of `lambda`, clipped at 0.
    pub lambda_ci: (f64, f64),
    /// N* = sqrt((1 - sigma) / kappa), at least 1; `None` when kappa = 0
    /// (Amdahl).
    pub peak_concurrency: Option<f64>,
    /// X(N*), or the Amdahl ceiling when kappa = 0; with sigma = kappa = 0
    /// (linear, no ceiling) the fitted X at the largest measured N.
    pub peak_throughput: f64,
    /// lambda / sigma; `None` when sigma = 0.
    pub amdahl_ceiling: Option<f64>,
    /// 1 - SSE / SST. A rough guide only: R² is not a valid measure of fit
    /// for nonlinear models (which is why R's `usl` dropped it in 3.0).
    pub r_squared: f64,
    /// Points the fit used.
    pub points: usize,
    /// The largest throughput measured: no ceiling may be quoted below it
    /// ([`UslFit::quoted_ceiling`]).
    pub measured_peak: f64,
    /// What makes the fit less trustworthy (few points, a poor R², no standard errors); empty
    /// when none.
    pub warnings: Vec<String>,
}

impl UslFit {
    /// Whether the standard errors and CIs mean anything: they need more
    /// points than the 3 parameters and a non-singular Jacobian.
    pub fn has_error_estimates(&self) -> bool {
        self.points > 3 && !self.warnings.iter().any(|w| w.contains(NO_SE))
    }

    /// Whether the fit explains the data well enough to quote its N* or
    /// its ceiling: R² at least [`POOR_R_SQUARED`].
    pub fn is_good(&self) -> bool {
        self.r_squared >= POOR_R_SQUARED
    }

    /// N* as a headline may quote it: `None` when the fit is poor
    /// ([`UslFit::is_good`]) or has no peak (κ = 0).
    pub fn quoted_peak(&self) -> Option<f64> {
        self.peak_concurrency.filter(|_| self.is_good())
    }

    /// The Amdahl ceiling λ/σ as it may be quoted: `None` when the fit is
    /// poor or the ceiling lies below the measured peak (the data already
    /// passed it, so the fit does not describe them).
    pub fn quoted_ceiling(&self) -> Option<f64> {
        self.amdahl_ceiling
            .filter(|c| self.is_good() && *c >= self.measured_peak)
    }

    /// X(N*) as it may be quoted: as [`UslFit::quoted_ceiling`], for the
    /// fitted curve's own highest point.
    pub fn quoted_peak_throughput(&self) -> Option<f64> {
        Some(self.peak_throughput).filter(|x| self.is_good() && *x >= self.measured_peak)
    }

    /// Why N* or the ceiling is not quoted, for the place it would be:
    /// `R² = 0.50 < 0.9: the fit explains the data poorly`; `None` when
    /// it may be.
    pub fn not_quoted_why(&self) -> Option<String> {
        (!self.is_good()).then(|| {
            format!(
                "R² = {:.2} < {POOR_R_SQUARED}: the fit explains the data poorly",
                self.r_squared
            )
        })
    }

    /// True when the fitted curve keeps rising for ever (kappa = 0): then
    /// there is no peak, only the Amdahl ceiling (or none, if sigma = 0).
    pub fn is_amdahl(&self) -> bool {
        self.kappa <= 0.0
    }
}

/// Why no fit could be made.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// The points cannot be fitted: fewer than 3 distinct N, or an N or X
    /// that is not finite and positive; the message names the point.
    #[error("{0}")]
    BadData(String),
}

/// Fewer points than this gets a warning, as in R's `usl`.
pub const FEW_POINTS: usize = 6;
/// Below this R² the fit gets a warning, and no report quotes its N* or
/// ceiling (a headline or a table says why instead): the curve then says
/// more about the noise than about the system. docs/report.md names it.
pub const POOR_R_SQUARED: f64 = 0.9;
const NO_SE: &str = "no standard errors";

/// X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)).
pub fn predict(fit: &UslFit, n: f64) -> f64 {
    fit.lambda * n / (1.0 + fit.sigma * (n - 1.0) + fit.kappa * n * (n - 1.0))
}

/// sqrt(SSE / (n - 3)), R's `sigma(u)`; `None` for 3 points.
pub fn residual_standard_error(fit: &UslFit, points: &[(f64, f64)]) -> Option<f64> {
    let df = points.len().checked_sub(3).filter(|&d| d > 0)?;
    let sse: f64 = points
        .iter()
        .map(|&(n, x)| (x - predict(fit, n)).powi(2))
        .sum();
    Some((sse / df as f64).sqrt())
}

/// Fits (N, X) pairs by bounded nonlinear least squares. Repeated N (several
/// trials per level) are fine. Errors: fewer than 3 points or 3 distinct N,
/// a non-finite value, N <= 0 or X <= 0 (a failed trial has no throughput:
/// leave it out).
pub fn fit(points: &[(f64, f64)]) -> Result<UslFit, FitError> {
    validate(points)?;
    let problem = UslProblem { points };
    let best = starting_points(points)
        .into_iter()
        .map(|start| lm::minimize(&problem, start))
        .min_by(|a, b| a.sse.total_cmp(&b.sse))
        .ok_or_else(|| FitError::BadData("no starting point".into()))?;
    let [sigma, kappa, lambda] = best.params;
    let mut warnings = Vec::new();
    if !best.converged {
        warnings.push(format!(
            "the fit did not converge in {} iterations; treat the coefficients with care",
            lm::MAX_ITERATIONS
        ));
    }
    let errors = standard_errors(&problem, best.params, best.sse, &mut warnings);
    Ok(summarise(
        points, sigma, kappa, lambda, best.sse, errors, warnings,
    ))
}

struct UslProblem<'a> {
    points: &'a [(f64, f64)],
}

impl Problem for UslProblem<'_> {
    const LOWER: [f64; 3] = [0.0, 0.0, 0.0];
    const UPPER: [f64; 3] = [1.0, 1.0, f64::INFINITY];

    fn len(&self) -> usize {
        self.points.len()
    }

    /// Residual and gradient of the model at point `i`, for [sigma, kappa,
    /// lambda].
    fn residual(&self, i: usize, p: [f64; 3]) -> (f64, [f64; 3]) {
        let (n, x) = self.points[i];
        let [sigma, kappa, lambda] = p;
        let d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
        let model = lambda * n / d;
        let d_sigma = -lambda * n * (n - 1.0) / (d * d);
        let d_kappa = -lambda * n * n * (n - 1.0) / (d * d);
        (x - model, [d_sigma, d_kappa, n / d])
    }
}

fn validate(points: &[(f64, f64)]) -> Result<(), FitError> {
    if points.len() < 3 {
        return Err(FitError::BadData(format!(
            "{} point(s): the USL has 3 coefficients, so it needs at least 3 (N, X) points, better 6 or more",
            points.len()
        )));
    }
    for (i, &(n, x)) in points.iter().enumerate() {
        let which = format!("point {} (N={n}, X={x})", i + 1);
        if !n.is_finite() || !x.is_finite() {
            return Err(FitError::BadData(format!("{which} is not a finite number")));
        }
        if n <= 0.0 {
            return Err(FitError::BadData(format!(
                "{which}: concurrency N must be positive"
            )));
        }
        if x <= 0.0 {
            return Err(FitError::BadData(format!(
                "{which}: throughput X must be positive; leave failed measurements out"
            )));
        }
    }
    let mut ns: Vec<f64> = points.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < 3 {
        return Err(FitError::BadData(format!(
            "only {} distinct concurrency level(s): the fit needs at least 3",
            ns.len()
        )));
    }
    Ok(())
}

/// R's `usl` start (lambda = max X/N, sigma = 0.01, kappa = 1e-4), and a
/// linearised one: with lambda0 = X/N at the smallest N, Gunther's
/// "deviation from linearity" `N lambda0 / X - 1 = sigma (N - 1) + kappa N
/// (N - 1)` is linear in (sigma, kappa) (GCaP §5.5).
fn starting_points(points: &[(f64, f64)]) -> Vec<[f64; 3]> {
    let max_per_unit = points.iter().map(|&(n, x)| x / n).fold(0.0, f64::max);
    let smallest = points
        .iter()
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(max_per_unit, |&(n, x)| x / n);
    let mut starts = vec![
        [0.01, 1e-4, max_per_unit],
        [0.0, 0.0, max_per_unit],
        [0.1, 0.01, smallest],
    ];
    if let Some((sigma, kappa)) = linearised(points, smallest) {
        starts.push([sigma, kappa, smallest]);
    }
    starts
}

/// Least squares without intercept of `N lambda0 / X - 1` on `N - 1` and
/// `N (N - 1)`, clamped to [0, 1].
fn linearised(points: &[(f64, f64)], lambda0: f64) -> Option<(f64, f64)> {
    let (mut saa, mut sab, mut sbb, mut say, mut sby) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(n, x) in points {
        let (a, b, y) = (n - 1.0, n * (n - 1.0), n * lambda0 / x - 1.0);
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        say += a * y;
        sby += b * y;
    }
    let det = saa * sbb - sab * sab;
    if det.abs() <= f64::EPSILON * saa * sbb || !det.is_finite() {
        return None;
    }
    let sigma = (say * sbb - sby * sab) / det;
    let kappa = (sby * saa - say * sab) / det;
    Some((sigma.clamp(0.0, 1.0), kappa.clamp(0.0, 1.0)))
}

/// Standard errors and the two-sided 95% t quantile, or `None` (with a
/// warning) when there are none.
fn standard_errors(
    problem: &UslProblem,
    params: [f64; 3],
    sse: f64,
    warnings: &mut Vec<String>,
) -> Option<([f64; 3], f64)> {
    let n = problem.points.len();
    if n == 3 {
        warnings.push(format!(
            "3 points for 3 coefficients: no degrees of freedom are left, so there are {NO_SE} or confidence intervals (shown as 0)"
        ));
        return None;
    }
    let df = (n - 3) as f64;
    let cov = lm::inverse(&lm::normal_matrix(problem, params));
    let se = cov.map(|c| [0, 1, 2].map(|i| (c[i][i] * sse / df).max(0.0).sqrt()));
    let t = super::student_t::quantile(0.975, df);
    match (se, t) {
        (Some(se), Some(t)) if se.iter().all(|v| v.is_finite()) && t.is_finite() => Some((se, t)),
        _ => {
            warnings.push(format!(
                "the Jacobian is singular at the optimum: {NO_SE} or confidence intervals (shown as 0)"
            ));
            None
        }
    }
}

fn summarise(
    points: &[(f64, f64)],
    sigma: f64,
    kappa: f64,
    lambda: f64,
    sse: f64,
    errors: Option<([f64; 3], f64)>,
    mut warnings: Vec<String>,
) -> UslFit {
    let ([sigma_se, kappa_se, lambda_se], t) = errors.unwrap_or(([0.0; 3], 0.0));
    let ci = |v: f64, se: f64, hi: f64| ((v - t * se).max(0.0), (v + t * se).min(hi));
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let sst: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let mut fit = UslFit {
        sigma,
        kappa,
        lambda,
        sigma_se,
        kappa_se,
        lambda_se,
        sigma_ci: ci(sigma, sigma_se, 1.0),
        kappa_ci: ci(kappa, kappa_se, 1.0),
        lambda_ci: ci(lambda, lambda_se, f64::MAX),
        peak_concurrency: None,
        peak_throughput: 0.0,
        amdahl_ceiling: (sigma > 0.0).then(|| lambda / sigma),
        r_squared: if sst > 0.0 { 1.0 - sse / sst } else { 1.0 },
        points: points.len(),
        measured_peak: points.iter().map(|p| p.1).fold(0.0, f64::max),
        warnings: Vec::new(),
    };
    if points.len() < FEW_POINTS {
        warnings.push(format!(
            "only {} points: the fit may not be accurate; measure at least {FEW_POINTS} concurrency levels",
            points.len()
        ));
    }
    if fit.r_squared < POOR_R_SQUARED {
        warnings.push(format!(
            "R² = {:.2}: the USL curve explains the data poorly; look for noisy points or a shape the USL cannot follow",
            fit.r_squared
        ));
    }
    peak(&mut fit, points, &mut warnings);
    fit.warnings = warnings;
    fit
}

/// Fills the peak (or the ceiling) and explains the Amdahl cases. Every
/// warning names the one N* the fit reports, and no ceiling below the
/// measured peak is called a ceiling.
fn peak(fit: &mut UslFit, points: &[(f64, f64)], warnings: &mut Vec<String>) {
    let max_n = points.iter().map(|p| p.0).fold(0.0, f64::max);
    if fit.kappa > 0.0 {
        let raw = ((1.0 - fit.sigma) / fit.kappa).sqrt();
        let n_star = raw.max(1.0);
        if raw < 1.0 {
            warnings.push(falls_throughout(points));
        } else if n_star > max_n {
            warnings.push(format!(
                "the peak N*={} lies beyond the largest measured N ({max_n}): it is an extrapolation",
                n_star_text(n_star)
            ));
        }
        fit.peak_concurrency = Some(n_star);
        fit.peak_throughput = predict(fit, n_star);
        if fit.peak_throughput < fit.measured_peak {
            warnings.push(format!(
                "the fitted curve's highest point X(N*) = {:.1} is below the measured peak {:.1}: it is no ceiling; read the measured peak",
                fit.peak_throughput, fit.measured_peak
            ));
        }
    } else if let Some(ceiling) = fit.amdahl_ceiling {
        warnings.push(if ceiling < fit.measured_peak {
            format!(
                "κ = 0 (Amdahl's law), but its ceiling λ/σ = {ceiling:.1} is below the measured peak {:.1}: the fit does not describe the data; read the measured peak",
                fit.measured_peak
            )
        } else {
            format!("κ = 0 (Amdahl's law): no peak; throughput approaches the ceiling λ/σ = {ceiling:.1}")
        });
        fit.peak_throughput = ceiling;
    } else {
        warnings.push(
            "sigma = kappa = 0: linear scaling with no ceiling in sight; peak throughput is the fitted X at the largest measured N"
                .into(),
        );
        fit.peak_throughput = predict(fit, max_n);
    }
}

/// N* as every report prints it: `56`, or `1` for a curve that only
/// falls (the formula's value under 1 is never printed, so the fit has one
/// N*).
pub fn n_star_text(n_star: f64) -> String {
    format!("{n_star:.0}")
}

/// The warning for a fit whose formula puts the peak below N = 1, so the
/// fit reports N* = 1 (its curve only falls); it agrees with the data
/// only when the measured peak is at the smallest N.
fn falls_throughout(points: &[(f64, f64)]) -> String {
    let min_n = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let measured_peak = points
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(min_n, |p| p.0);
    if measured_peak > min_n {
        format!(
            "the fitted curve only falls from N*=1 on, but the measured throughput peaks at N={measured_peak}: the USL does not describe this curve; read the measured peak, not the fit"
        )
    } else {
        format!(
            "throughput falls from the smallest measured N ({min_n}) on, and so does the fitted curve (N*=1): there is no peak to find"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Relative agreement to about 4 significant digits.
    fn sig4(actual: f64, expected: f64) {
        let tol = 5e-4 * expected.abs();
        assert!(
            (actual - expected).abs() <= tol,
            "{actual} differs from {expected} beyond 4 significant digits"
        );
    }

    /// Agreement with a value R printed to `decimals` decimal places.
    fn rounds_to(actual: f64, expected: f64, decimals: i32) {
        let tol = 0.5 * 10f64.powi(-decimals) + 1e-12;
        assert!(
            (actual - expected).abs() <= tol,
            "{actual} does not round to {expected}"
        );
    }

    pub(super) fn assert_all_finite(f: &UslFit) {
        let ci = |c: (f64, f64)| [c.0, c.1];
        let values = [
            [
                f.sigma,
                f.kappa,
                f.lambda,
                f.sigma_se,
                f.kappa_se,
                f.lambda_se,
            ],
            [f.peak_throughput, f.r_squared, 0.0, 0.0, 0.0, 0.0],
        ];
        let cis = [ci(f.sigma_ci), ci(f.kappa_ci), ci(f.lambda_ci)];
        assert!(values.iter().flatten().all(|v| v.is_finite()), "{f:?}");
        assert!(cis.iter().flatten().all(|v| v.is_finite()), "{f:?}");
        assert!(f.peak_concurrency.is_none_or(f64::is_finite));
        assert!(f.amdahl_ceiling.is_none_or(f64::is_finite));
    }

    fn pts(n: &[f64], x: &[f64]) -> Vec<(f64, f64)> {
        n.iter().copied().zip(x.iter().copied()).collect()
    }

    /// R package `usl` 3.0.3 (Möding), dataset `specsdm91` (Gunther, GCaP
    /// 2007: SPEC SDM91 on a 16-CPU Sun SPARCcenter 2000), decoded from
    /// `data/specsdm91.rda`.
    fn specsdm91() -> Vec<(f64, f64)> {
        pts(
            &[1.0, 18.0, 36.0, 72.0, 108.0, 144.0, 216.0],
            &[64.9, 995.9, 1652.4, 1853.2, 1828.9, 1775.0, 1702.2],
        )
    }

    /// R package `usl` 3.0.3, dataset `raytracer` (Gunther, GCaP 2007: BRL-CAD
    /// ray tracer on an SGI Origin 2000), decoded from `data/raytracer.rda`.
    fn raytracer() -> Vec<(f64, f64)> {
        pts(
            &[
                1.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0, 48.0, 64.0,
            ],
            &[
                20.0, 78.0, 130.0, 170.0, 190.0, 200.0, 210.0, 230.0, 260.0, 280.0, 310.0,
            ],
        )
    }

    #[test]
    fn specsdm91_matches_r_usl() {
        // usl 3.x fits all three coefficients (gamma = our lambda); older
        // versions (< 2.0) normalised by X(1) instead, so we compare with
        // 3.0.3's tests/summary.Rout.save:
        //   alpha 2.773e-02 (SE 9.122e-03), beta 1.044e-04 (SE 1.988e-05),
        //   gamma 9.000e+01 (SE 1.421e+01), residual SE 82.85 on 4 df,
        //   limit 3246, peak 1884 at load 96.52;
        // tests/peak-scalability.R: peak load 96.51956 (tolerance 1e-4);
        // tests/limit-scalability.R: 3245.589 (tolerance 1e-4).
        let data = specsdm91();
        let f = fit(&data).unwrap();
        sig4(f.sigma, 2.773e-2);
        sig4(f.kappa, 1.044e-4);
        sig4(f.lambda, 90.00);
        sig4(f.sigma_se, 9.122e-3);
        sig4(f.kappa_se, 1.988e-5);
        sig4(f.lambda_se, 14.21);
        sig4(residual_standard_error(&f, &data).unwrap(), 82.85);
        let n_star = f.peak_concurrency.unwrap();
        assert!((n_star - 96.51956).abs() <= 1e-4 * 96.51956, "{n_star}");
        sig4(f.peak_throughput, 1884.0);
        let ceiling = f.amdahl_ceiling.unwrap();
        assert!((ceiling - 3245.589).abs() <= 1e-4 * 3245.589, "{ceiling}");
        // 95% CIs: estimate ± t(0.975, 4) SE, t = 2.7764451051977934
        // (scipy 1.17.1 scipy.stats.t.ppf(0.975, 4)).
        let t = 2.7764451051977934;
        let expect_ci = |v: f64, se: f64| ((v - t * se).max(0.0), v + t * se);
        let close = |a: (f64, f64), b: (f64, f64)| {
            (a.0 - b.0).abs() <= 1e-9 * b.1 && (a.1 - b.1).abs() <= 1e-9 * b.1
        };
        assert!(
            close(f.sigma_ci, expect_ci(f.sigma, f.sigma_se)),
            "{:?}",
            f.sigma_ci
        );
        assert!(
            close(f.kappa_ci, expect_ci(f.kappa, f.kappa_se)),
            "{:?}",
            f.kappa_ci
        );
        assert!(
            close(f.lambda_ci, expect_ci(f.lambda, f.lambda_se)),
            "{:?}",
            f.lambda_ci
        );
        assert_all_finite(&f);
        assert!(f.has_error_estimates());
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn raytracer_matches_r_usl_and_is_amdahl() {
        // usl 3.0.3 tests/confint.Rout.save: coef alpha 0.0578, beta 0.0000,
        // gamma 21.8488; confint alpha 0.033677..0.081864, beta
        // -0.000214..0.000214, gamma 17.868380..25.829306. Its confint()
        // uses qt(0.95, n - 1) = qt(0.95, 10) = 1.812461 (scipy.stats.t.ppf),
        // so SE = half-width / 1.812461: alpha 0.013293, beta 1.181e-4,
        // gamma 2.19617. Our CIs use t(0.975, n - 3) instead, so we compare
        // the standard errors.
        let f = fit(&raytracer()).unwrap();
        rounds_to(f.sigma, 0.0578, 4);
        rounds_to(f.lambda, 21.8488, 4);
        assert!(f.kappa < 1e-12, "{}", f.kappa);
        let q = 1.812461;
        sig4(f.sigma_se, (0.081864 - 0.033677) / 2.0 / q);
        sig4(f.lambda_se, (25.829306 - 17.868380) / 2.0 / q);
        assert!((f.kappa_se - 0.000214 / q).abs() <= 0.005 * 0.000214 / q);
        // kappa at 0 exactly: no peak, the ceiling is the peak.
        assert_eq!(f.kappa, 0.0);
        assert!(f.is_amdahl());
        assert_eq!(f.peak_concurrency, None);
        // R does not print this dataset's limit; scipy 1.17.1
        // optimize.least_squares with the same bounds gives gamma/alpha =
        // 21.84884301 / 0.05777078134 = 378.1988.
        sig4(f.peak_throughput, 378.1988);
        assert_eq!(Some(f.peak_throughput), f.amdahl_ceiling);
        assert!(f.warnings.iter().any(|w| w.contains("Amdahl")));
        // kappa's CI is clipped at its lower bound 0.
        assert_eq!(f.kappa_ci.0, 0.0);
        assert_all_finite(&f);
    }

    #[test]
    fn exact_synthetic_data_matches_r_usl() {
        // usl 3.0.3 tests/coef.Rout.save: this data gives alpha 0.02,
        // beta 0.02, gamma 1.00 (3 significant digits).
        let data = pts(
            &[1.0, 2.0, 4.0, 6.0, 8.0, 10.0],
            &[1.0, 1.8868, 3.0769, 3.5294, 3.5398, 3.3557],
        );
        let f = fit(&data).unwrap();
        sig4(f.sigma, 0.02);
        sig4(f.kappa, 0.02);
        sig4(f.lambda, 1.0);
        sig4(f.peak_concurrency.unwrap(), 7.0); // sqrt(0.98 / 0.02)
        assert!(f.r_squared > 0.999_999);
    }

    #[test]
    fn three_points_fit_without_error_estimates() {
        let f = fit(&pts(&[1.0, 4.0, 16.0], &[100.0, 350.0, 800.0])).unwrap();
        assert!(!f.has_error_estimates());
        assert_eq!((f.sigma_se, f.kappa_se, f.lambda_se), (0.0, 0.0, 0.0));
        assert!(f.warnings.iter().any(|w| w.contains("3 points")));
        assert!(f.warnings.iter().any(|w| w.contains("only 3 points")));
        assert!(f.r_squared > 0.999_999);
    }

    /// Data the bounded curve cannot pass through: no warning may say it
    /// does (it once did, beside R² = 0.63).
    #[test]
    fn three_points_off_the_curve_say_nothing_contradictory() {
        let f = fit(&pts(&[1.0, 2.0, 4.0], &[100.0, 40.0, 200.0])).unwrap();
        assert!(f.r_squared < POOR_R_SQUARED, "{f:?}");
        let all = f.warnings.join("\n");
        assert!(!all.contains("passes through"), "{all}");
        assert!(all.contains("no degrees of freedom"), "{all}");
    }

    #[test]
    fn a_peak_below_one_is_explained_against_the_data() {
        let rises_then_falls = pts(&[16.0, 128.0, 1024.0], &[900.0, 1000.0, 100.0]);
        let w = falls_throughout(&rises_then_falls);
        assert!(
            w.contains("peaks at N=128") && w.contains("does not describe"),
            "{w}"
        );
        let only_falls = pts(&[16.0, 128.0, 1024.0], &[1000.0, 500.0, 100.0]);
        let w = falls_throughout(&only_falls);
        assert!(w.contains("falls from the smallest measured N (16)"), "{w}");
        assert!(!w.contains("below N=1"), "{w}");
    }

    /// nginx-short-lived printed "N*=1" and then "(N*=0.00 < 1)": a fit
    /// has one N*, and every warning names that one.
    #[test]
    fn a_curve_that_only_falls_has_one_n_star() {
        let falls = pts(
            &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
            &[1000.0, 600.0, 330.0, 170.0, 90.0, 45.0],
        );
        let f = fit(&falls).unwrap();
        assert_eq!(f.peak_concurrency, Some(1.0), "{f:?}");
        let all = f.warnings.join("\n");
        assert!(all.contains("N*=1"), "{all}");
        assert!(!all.contains("N*=0"), "{all}");
        assert_eq!(n_star_text(f.peak_concurrency.unwrap()), "1");
    }

    /// pgbench's Amdahl ceiling 3,499 against a measured 3.81k: no ceiling
    /// below the measured peak is quoted, and the warning says the fit does
    /// not describe the data.
    #[test]
    fn no_ceiling_below_the_measured_peak() {
        let mut f = fit(&raytracer()).unwrap();
        assert!(f.is_amdahl() && f.is_good());
        let ceiling = f.amdahl_ceiling.unwrap();
        assert_eq!(f.quoted_ceiling(), Some(ceiling), "above the data: quoted");
        f.measured_peak = ceiling * 1.09;
        assert_eq!(f.quoted_ceiling(), None);
        let mut warnings = Vec::new();
        peak(&mut f, &raytracer(), &mut warnings);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("is below the measured peak")
                    && w.contains("does not describe the data")),
            "{warnings:?}"
        );
        assert!(!warnings
            .iter()
            .any(|w| w.contains("approaches the ceiling")));
        // The USL's own highest point, likewise.
        let mut u = fit(&specsdm91()).unwrap();
        assert!(u.quoted_peak_throughput().is_some());
        u.measured_peak = u.peak_throughput + 1.0;
        assert_eq!(u.quoted_peak_throughput(), None);
    }

    /// pgbench's headline said "USL N*=5" with R² = 0.50.
    #[test]
    fn a_poor_fit_quotes_no_peak_or_ceiling() {
        let mut f = fit(&specsdm91()).unwrap();
        assert!(f.quoted_peak().is_some());
        f.r_squared = 0.5;
        assert_eq!((f.quoted_peak(), f.quoted_ceiling()), (None, None));
        assert_eq!(
            f.not_quoted_why().unwrap(),
            "R² = 0.50 < 0.9: the fit explains the data poorly"
        );
    }

    #[test]
    fn bad_data_is_a_clear_error() {
        let err = |p: &[(f64, f64)]| fit(p).unwrap_err().to_string();
        assert!(err(&[(1.0, 1.0), (2.0, 2.0)]).contains("at least 3"));
        assert!(err(&[(1.0, 1.0), (2.0, 0.0), (3.0, 2.0)]).contains("point 2"));
        assert!(err(&[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]).contains("N must be positive"));
        assert!(err(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0)]).contains("X must be positive"));
        assert!(err(&[(1.0, 1.0), (2.0, f64::NAN), (3.0, 2.0)]).contains("finite"));
        assert!(err(&[(-1.0, 1.0), (2.0, 2.0), (3.0, 2.0)]).contains("positive"));
        assert!(err(&[(1.0, 1.0), (1.0, 2.0), (2.0, 2.0)]).contains("distinct"));
    }

    #[test]
    fn linear_data_has_no_ceiling_and_no_nan() {
        let data: Vec<(f64, f64)> = (1..=8).map(|n| (n as f64, 100.0 * n as f64)).collect();
        let f = fit(&data).unwrap();
        assert_eq!((f.sigma, f.kappa), (0.0, 0.0));
        sig4(f.lambda, 100.0);
        assert_eq!((f.peak_concurrency, f.amdahl_ceiling), (None, None));
        sig4(f.peak_throughput, 800.0);
        assert!(f.warnings.iter().any(|w| w.contains("linear")));
        assert_all_finite(&f);
    }

    #[test]
    fn flat_data_is_fitted_without_nan() {
        let data: Vec<(f64, f64)> = (1..=6).map(|n| (n as f64, 500.0)).collect();
        let f = fit(&data).unwrap();
        assert!((predict(&f, 3.0) - 500.0).abs() < 1e-6 * 500.0);
        assert!(f.r_squared.is_finite());
        assert!(f.sigma_se.is_finite() && f.lambda_se.is_finite());
    }

    #[test]
    fn poor_fits_are_flagged() {
        let zigzag = pts(
            &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
            &[100.0, 250.0, 180.0, 400.0, 300.0, 390.0],
        );
        let f = fit(&zigzag).unwrap();
        assert!(f.r_squared < POOR_R_SQUARED);
        assert!(f
            .warnings
            .iter()
            .any(|w| w.contains("explains the data poorly")));
        assert_all_finite(&f);
    }

    #[test]
    fn repeated_concurrency_levels_are_fine() {
        let mut data = specsdm91();
        data.extend(specsdm91());
        let f = fit(&data).unwrap();
        // Duplicating every point leaves the estimates unchanged.
        sig4(f.sigma, 2.773e-2);
        sig4(f.kappa, 1.044e-4);
    }
}

#[cfg(test)]
mod properties {
    use super::tests::assert_all_finite;
    use super::*;
    use proptest::prelude::*;

    const LEVELS: [f64; 9] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

    fn model(sigma: f64, kappa: f64, lambda: f64, n: f64) -> f64 {
        lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Exact data from known coefficients gives them back.
        #[test]
        fn recovers_exact_coefficients(
            sigma in 0.001f64..0.3,
            kappa in 1e-5f64..1e-2,
            lambda in 10.0f64..1e5,
        ) {
            let data: Vec<(f64, f64)> =
                LEVELS.iter().map(|&n| (n, model(sigma, kappa, lambda, n))).collect();
            let f = fit(&data).unwrap();
            prop_assert!(rel(f.sigma, sigma) < 1e-5, "sigma {} vs {sigma}", f.sigma);
            prop_assert!(rel(f.kappa, kappa) < 1e-5, "kappa {} vs {kappa}", f.kappa);
            prop_assert!(rel(f.lambda, lambda) < 1e-6, "lambda {} vs {lambda}", f.lambda);
        }

        /// With up to 0.5% noise the fit is at least as good as the truth
        /// (so the optimiser found the minimum), lambda is within 2% and the
        /// curve is reproduced within 2%. (Proptest shrinks the noise
        /// adversarially, so no claim about error bars is made here.)
        #[test]
        fn noisy_data_is_fitted_near_the_truth(
            sigma in 0.01f64..0.3,
            kappa in 1e-5f64..1e-3,
            lambda in 10.0f64..1e5,
            noise in proptest::collection::vec(-0.005f64..0.005, LEVELS.len()),
        ) {
            let data: Vec<(f64, f64)> = LEVELS
                .iter()
                .zip(&noise)
                .map(|(&n, e)| (n, model(sigma, kappa, lambda, n) * (1.0 + e)))
                .collect();
            let f = fit(&data).unwrap();
            let sse = |s: f64, k: f64, l: f64| -> f64 {
                data.iter().map(|&(n, x)| (x - model(s, k, l, n)).powi(2)).sum()
            };
            // Slack for rounding: a relative residual of 1e-6 per point.
            let slack = 1e-12 * data.iter().map(|p| p.1 * p.1).sum::<f64>();
            let truth = sse(sigma, kappa, lambda);
            prop_assert!(sse(f.sigma, f.kappa, f.lambda) <= truth + slack);
            prop_assert!(rel(f.lambda, lambda) < 0.02, "lambda {} vs {lambda}", f.lambda);
            for &n in &LEVELS {
                prop_assert!(rel(predict(&f, n), model(sigma, kappa, lambda, n)) < 0.02);
            }
        }

        /// On any grid and any feasible truth, with up to 5% noise, the fit
        /// is never worse than the truth: the optimiser does not stop in a
        /// poor local minimum or on a bound it should leave.
        #[test]
        fn never_worse_than_the_truth(
            sigma in prop_oneof![Just(0.0), 0.0f64..0.95],
            kappa in prop_oneof![Just(0.0), 0.0f64..0.1],
            lambda in 0.1f64..1e6,
            levels in proptest::collection::btree_set(1u32..512, 3..12),
            noise in proptest::collection::vec(-0.05f64..0.05, 12),
        ) {
            let data: Vec<(f64, f64)> = levels
                .iter()
                .zip(&noise)
                .map(|(&n, e)| (n as f64, model(sigma, kappa, lambda, n as f64) * (1.0 + e)))
                .collect();
            let f = fit(&data).unwrap();
            let sse = |s: f64, k: f64, l: f64| -> f64 {
                data.iter().map(|&(n, x)| (x - model(s, k, l, n)).powi(2)).sum()
            };
            let slack = 1e-12 * data.iter().map(|p| p.1 * p.1).sum::<f64>();
            let (fitted, truth) = (sse(f.sigma, f.kappa, f.lambda), sse(sigma, kappa, lambda));
            prop_assert!(fitted <= truth + slack, "fit {fitted} truth {truth}: {f:?}");
            assert_all_finite(&f);
        }
    }
}
