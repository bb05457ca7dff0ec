//! `scalelab model`: fit the Universal Scalability Law to (N, X) pairs from
//! a CSV file and print the coefficients, the peak and the ceiling.
use anyhow::Context;
use scalelab::analysis::points_csv::parse_curves;
use scalelab::analysis::usl::{self, UslFit};
use serde::Serialize;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// CSV with concurrency N and throughput X columns (header optional:
    /// columns named like n/clients/threads and x/throughput/tps/rps are
    /// picked, else the first two).
    pub file: PathBuf,
    /// Print JSON (sigma, kappa, lambda, their SEs and CIs, peak, R²).
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &ModelArgs) -> anyhow::Result<i32> {
    let path = a.file.display().to_string();
    let text = std::fs::read_to_string(&a.file).with_context(|| format!("cannot read {path}"))?;
    let curves = parse_curves(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    let mut docs = Vec::new();
    let mut texts = Vec::new();
    for c in &curves {
        // A scalelab export is fitted one curve at a time: never two
        // systems or two workloads in one fit.
        let name = if c.label.is_empty() {
            path.clone()
        } else {
            format!("{path} ({})", c.label)
        };
        let fit = usl::fit(&c.points).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let rse = usl::residual_standard_error(&fit, &c.points);
        docs.push(ModelJson::new(&path, &c.label, &fit, rse));
        texts.push(render(&name, &fit, rse));
    }
    if a.json {
        let out = match docs.as_slice() {
            [one] if curves[0].label.is_empty() => serde_json::to_string_pretty(one)?,
            _ => serde_json::to_string_pretty(&docs)?,
        };
        outln!("{out}");
    } else {
        out!("{}", texts.join("\n"));
    }
    Ok(0)
}

/// The JSON document: every number finite or `null`.
#[derive(Serialize)]
struct ModelJson {
    file: String,
    /// The curve of a scalelab export (`system=pg, load.script=tpcb-like`);
    /// absent for a plain file.
    #[serde(skip_serializing_if = "String::is_empty")]
    curve: String,
    points: usize,
    sigma: f64,
    kappa: f64,
    lambda: f64,
    sigma_se: Option<f64>,
    kappa_se: Option<f64>,
    lambda_se: Option<f64>,
    sigma_ci: Option<[f64; 2]>,
    kappa_ci: Option<[f64; 2]>,
    lambda_ci: Option<[f64; 2]>,
    peak_concurrency: Option<f64>,
    peak_throughput: Option<f64>,
    amdahl_ceiling: Option<f64>,
    r_squared: Option<f64>,
    residual_standard_error: Option<f64>,
    warnings: Vec<String>,
}

impl ModelJson {
    fn new(file: &str, curve: &str, f: &UslFit, rse: Option<f64>) -> Self {
        let errors = f.has_error_estimates();
        let se = |v: f64| finite(v).filter(|_| errors);
        let ci =
            |c: (f64, f64)| (errors && c.0.is_finite() && c.1.is_finite()).then_some([c.0, c.1]);
        let linear = f.kappa <= 0.0 && f.sigma <= 0.0;
        ModelJson {
            file: file.to_string(),
            curve: curve.to_string(),
            points: f.points,
            sigma: f.sigma,
            kappa: f.kappa,
            lambda: f.lambda,
            sigma_se: se(f.sigma_se),
            kappa_se: se(f.kappa_se),
            lambda_se: se(f.lambda_se),
            sigma_ci: ci(f.sigma_ci),
            kappa_ci: ci(f.kappa_ci),
            lambda_ci: ci(f.lambda_ci),
            // Quoted only from a fit that describes the data (R² and no
            // ceiling under the measured peak); the warnings say why not.
            peak_concurrency: f.quoted_peak().and_then(finite),
            peak_throughput: f
                .quoted_peak_throughput()
                .and_then(finite)
                .filter(|_| !linear),
            amdahl_ceiling: f.quoted_ceiling().and_then(finite),
            r_squared: finite(f.r_squared),
            residual_standard_error: rse.and_then(finite),
            warnings: f.warnings.clone(),
        }
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn render(file: &str, f: &UslFit, rse: Option<f64>) -> String {
    let mut out = format!(
        "USL fit of {} points from {file}\n  X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))\n\n",
        f.points
    );
    out += &format!(
        "  {:<22} {:>11} {:>11}   {}\n",
        "coefficient", "estimate", "std. error", "95% CI"
    );
    let errors = f.has_error_estimates();
    for (name, v, se, ci) in [
        ("sigma (contention)", f.sigma, f.sigma_se, f.sigma_ci),
        ("kappa (coherency)", f.kappa, f.kappa_se, f.kappa_ci),
        ("lambda (X at N = 1)", f.lambda, f.lambda_se, f.lambda_ci),
    ] {
        let (se, ci) = if errors {
            (sig(se), format!("{} .. {}", sig(ci.0), sig(ci.1)))
        } else {
            ("-".into(), "-".into())
        };
        out += &format!("  {name:<22} {:>11} {se:>11}   {ci}\n", sig(v));
    }
    out += "\n";
    out += &peak_lines(f);
    out += &format!("  R^2                    {}\n", sig(f.r_squared));
    if let Some(r) = rse {
        out += &format!(
            "  residual std. error    {} on {} df\n",
            sig(r),
            f.points - 3
        );
    }
    if !f.warnings.is_empty() {
        out += "\nwarnings:\n";
        for w in &f.warnings {
            out += &format!("  - {w}\n");
        }
    }
    out
}

/// The peak and the ceiling, each only when the fit may quote it
/// (`UslFit::quoted_peak`, `quoted_ceiling`): a poor fit or a ceiling
/// under the measured peak says so instead.
fn peak_lines(f: &UslFit) -> String {
    let mut out = String::new();
    let measured = sig(f.measured_peak);
    match (f.not_quoted_why(), f.peak_concurrency) {
        (Some(why), _) => out += &format!("  peak                   not quoted: {why}\n"),
        (None, Some(n)) => match f.quoted_peak_throughput() {
            Some(x) => {
                out += &format!("  peak                   N* = {}, X(N*) = {}\n", sig(n), sig(x))
            }
            None => {
                out += &format!(
                    "  peak                   N* = {}; X(N*) = {} is below the measured peak {measured}: no ceiling\n",
                    sig(n),
                    sig(f.peak_throughput)
                )
            }
        },
        (None, None) => out += "  peak                   none (kappa = 0: throughput never falls)\n",
    }
    match (f.amdahl_ceiling, f.quoted_ceiling()) {
        (None, _) => out += "  Amdahl ceiling         none (sigma = 0)\n",
        (Some(_), Some(c)) => out += &format!("  Amdahl ceiling         {} (lambda / sigma)\n", sig(c)),
        (Some(c), None) => match f.not_quoted_why() {
            Some(why) => out += &format!("  Amdahl ceiling         not quoted: {why}\n"),
            None => {
                out += &format!(
                    "  Amdahl ceiling         none: lambda / sigma = {} is below the measured peak {measured}; the fit does not describe the data\n",
                    sig(c)
                )
            }
        },
    }
    out
}

/// Four significant digits: `0.02773`, `90.00`, `1884`, `1.044e-4`.
fn sig(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-3..6).contains(&magnitude) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}
