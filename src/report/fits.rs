//! Per-series fits (USL, curve shape) and the relative ranking of systems.

use super::format;
use super::rows::{Aggregate, Rank, SeriesFit};
use crate::analysis::compare::Verdict;
use crate::analysis::shape::{shape, CurveShape, PastPeak};
use crate::analysis::usl::{fit, UslFit};

/// Axis names on which the USL's N (concurrency or processors) makes sense.
const CONCURRENCY_LIKE: &[&str] = &[
    "connections",
    "clients",
    "threads",
    "cpus",
    "workers",
    "worker_processes",
    "concurrency",
    "jobs",
];

/// The USL is fitted when the x axis counts concurrency or processors (its
/// name contains one of [`CONCURRENCY_LIKE`]) and a series has at least
/// three distinct x values. A rate or memory axis gets no fit.
pub fn usl_applies(axis: &str) -> bool {
    let a = axis.to_ascii_lowercase();
    CONCURRENCY_LIKE.iter().any(|k| a.contains(k))
}

/// Fits every (system, group) series of the aggregate.
pub fn fit_series(agg: &Aggregate) -> Vec<SeriesFit> {
    let Some(axis) = agg.layout.x_axis.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in 0..agg.layout.groups.len() {
        for s in &agg.systems {
            let mut points: Vec<(f64, f64)> = agg
                .cells_in_group(g)
                .filter(|c| &c.system == s)
                .filter_map(|c| Some((c.x?, c.headline()?)))
                .collect();
            if points.is_empty() {
                continue;
            }
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let usl = (usl_applies(axis) && points.len() >= 3)
                .then(|| fit(&points).map_err(|e| e.to_string()));
            let base_n = points[0].0;
            let shape = (points.len() >= 2)
                .then(|| shape(&points, base_n))
                .flatten();
            out.push(SeriesFit {
                system: s.clone(),
                group: g,
                points,
                usl,
                shape,
            });
        }
    }
    out
}

/// Ranks systems by the geometric mean, over the points both have, of their
/// headline throughput divided by the baseline's. The geometric mean is the
/// right average of ratios (Fleming & Wallace, CACM 1986) and, unlike the
/// peak, it sees a collapse past the peak.
pub fn rank(agg: &Aggregate) -> Vec<Rank> {
    let Some(base) = agg.baseline.as_deref() else {
        return Vec::new();
    };
    let mut out: Vec<Rank> = agg
        .systems
        .iter()
        .filter_map(|s| {
            let logs: Vec<f64> = agg
                .cells
                .iter()
                .filter(|c| &c.system == s)
                .filter_map(|c| {
                    let b = agg.cell(base, c.point.index)?.headline()?;
                    let v = c.headline()?;
                    (b > 0.0 && v > 0.0).then(|| (v / b).ln())
                })
                .collect();
            let verdicts: Vec<&Verdict> = agg
                .cells
                .iter()
                .filter(|c| &c.system == s)
                .filter_map(|c| c.comparison.as_ref().map(|cmp| &cmp.verdict))
                .filter(|v| !matches!(v, Verdict::NeedsMoreTrials { .. }))
                .collect();
            // Only points the test could decide count; too few trials is "untested".
            let significant = (s != base && !verdicts.is_empty()).then(|| {
                verdicts
                    .iter()
                    .filter(|v| matches!(v, Verdict::Faster | Verdict::Slower))
                    .count()
            });
            (!logs.is_empty()).then(|| Rank {
                system: s.clone(),
                relative: (logs.iter().sum::<f64>() / logs.len() as f64).exp(),
                points: logs.len(),
                significant,
            })
        })
        .collect();
    out.sort_by(|a, b| b.relative.total_cmp(&a.relative));
    out
}

/// `FreeBSD (128%) > DragonflyBSD (110%) > Debian (100%)`; neighbours
/// within the run's noise floor (a fraction) are joined by `≈` instead of
/// `>`, and a system
/// that differs significantly from the baseline at no point is marked
/// `n.s.`, so an A/A run never reads as a ranking.
pub fn ranking_line(ranks: &[Rank], noise: f64) -> String {
    let mut out = String::new();
    for (i, r) in ranks.iter().enumerate() {
        if i > 0 {
            let prev = ranks[i - 1].relative;
            let close = (prev - r.relative).abs() < noise * prev.abs();
            out.push_str(if close { " ≈ " } else { " > " });
        }
        let ns = if r.significant == Some(0) {
            ", n.s."
        } else {
            ""
        };
        out.push_str(&format!(
            "{} ({}{ns})",
            r.system,
            format::percent(r.relative)
        ));
    }
    if ranks.iter().any(|r| r.significant == Some(0)) {
        out.push_str("  [n.s.: not significantly different from the baseline at any point]");
    }
    out
}

/// `peak 82.12k at 100; past the peak: mild decline (-8.0%)`
pub fn shape_sentence(s: &CurveShape, axis: &str) -> String {
    let past = match &s.past_peak {
        PastPeak::StillRising => "still rising at the last point".to_string(),
        PastPeak::Plateau { drop } => format!("plateau ({})", format::change(1.0 - drop)),
        PastPeak::MildDecline { drop } => {
            format!("mild decline ({})", format::change(1.0 - drop))
        }
        PastPeak::Collapse { drop } => format!("collapse ({})", format::change(1.0 - drop)),
    };
    format!(
        "peak {} at {axis}={}; past the peak: {past}",
        format::rate(s.peak_x),
        format::axis_value(s.peak_n)
    )
}

/// `σ=0.0123 κ=0.00031 N*=56`
pub fn usl_params(f: &UslFit) -> String {
    let n_star = f
        .peak_concurrency
        .map(|n| format!("{n:.0}"))
        .unwrap_or_else(|| "∞".into());
    format!(
        "σ={} κ={} N*={n_star}",
        format::sig(f.sigma, 3),
        format::sig(f.kappa, 2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(system: &str, relative: f64) -> Rank {
        Rank {
            system: system.into(),
            relative,
            points: 1,
            significant: None,
        }
    }

    #[test]
    fn ranking_reads_like_seed_003() {
        let line = ranking_line(
            &[
                r("FreeBSD", 1.284),
                r("DragonflyBSD", 1.103),
                r("Debian", 1.0),
            ],
            0.02,
        );
        assert_eq!(line, "FreeBSD (128%) > DragonflyBSD (110%) > Debian (100%)");
    }

    #[test]
    fn a_difference_significant_nowhere_is_marked() {
        let mut a = r("A again", 1.05);
        a.significant = Some(0);
        let line = ranking_line(&[a, r("A", 1.0)], 0.02);
        assert!(
            line.starts_with("A again (105%, n.s.) > A (100%)"),
            "{line}"
        );
        assert!(line.contains("not significantly different"), "{line}");
    }

    #[test]
    fn ties_within_noise_use_approx() {
        let line = ranking_line(&[r("Linux", 1.016), r("FreeBSD", 1.0)], 0.02);
        assert_eq!(line, "Linux (102%) ≈ FreeBSD (100%)");
    }

    #[test]
    fn usl_only_on_concurrency_axes() {
        assert!(usl_applies("connections"));
        assert!(usl_applies("server_cpus"));
        assert!(usl_applies("server.worker_processes"));
        assert!(!usl_applies("rate"));
        assert!(!usl_applies("server_memory"));
    }
}
