//! Per-series fits (USL, curve shape) and the relative ranking of systems.

use super::format;
use super::rows::{Aggregate, Cell, Rank, SeriesFit};
use crate::analysis::compare::Verdict;
use crate::analysis::shape::{shape, CurveShape, PastPeak};
use crate::analysis::usl::{fit, n_star_text, UslFit, FEW_POINTS};
use serde::Serialize;

/// What the headline (the ranking) may claim, from every verdict against
/// the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Standing {
    /// Some comparisons are significant: `points` of the `tested` ones.
    Significant { points: usize, tested: usize },
    /// Every tested comparison is within noise.
    NotSignificant { tested: usize },
    /// No comparison had enough trials to be tested.
    TooFewTrials { at_least: usize },
    /// Between runs, no side had the runs a verdict needs.
    TooFewRuns { at_least: usize },
}

impl Standing {
    /// The status line printed with the headline; `noise` is the run's
    /// noise floor.
    pub fn sentence(&self, noise: f64) -> String {
        match self {
            Standing::Significant { points, tested } => format!(
                "significant: a difference at {points} of {tested} point{} (p < 0.05 by the test each verdict names, beyond the {} noise floor)",
                if *tested == 1 { "" } else { "s" },
                format::percent_fine(noise)
            ),
            Standing::NotSignificant { tested } => format!(
                "not significant: no difference beyond noise at any of the {tested} point{} tested",
                if *tested == 1 { "" } else { "s" }
            ),
            Standing::TooFewTrials { at_least } => format!(
                "{} not enough trials to judge: a difference needs ≥{at_least} trials per system at a point; the percentages claim nothing",
                super::verdict::TOO_FEW
            ),
            Standing::TooFewRuns { at_least } => format!(
                "{} not enough runs to judge between runs: a difference needs ≥{at_least} runs a side (`run --repeat {at_least}`); the percentages claim nothing",
                super::verdict::TOO_FEW
            ),
        }
    }
}

/// The headline's status; `None` when nothing is compared.
pub fn standing(agg: &Aggregate) -> Option<Standing> {
    let verdicts: Vec<&Verdict> = agg
        .cells
        .iter()
        .filter_map(|c| c.comparison.as_ref().map(|cmp| &cmp.verdict))
        .filter(|v| !matches!(v, Verdict::NotComparable { .. }))
        .collect();
    let tested = verdicts
        .iter()
        .filter(|v| {
            !matches!(
                v,
                Verdict::NeedsMoreTrials { .. } | Verdict::NeedsMoreRuns { .. }
            )
        })
        .count();
    let points = verdicts
        .iter()
        .filter(|v| matches!(v, Verdict::Faster | Verdict::Slower))
        .count();
    let at_least = verdicts
        .iter()
        .filter_map(|v| match v {
            Verdict::NeedsMoreTrials { at_least } => Some(*at_least),
            _ => None,
        })
        .max();
    let runs_needed = verdicts
        .iter()
        .filter_map(|v| match v {
            Verdict::NeedsMoreRuns { at_least, .. } => Some(at_least.0.max(at_least.1)),
            _ => None,
        })
        .max();
    match (tested, points, at_least) {
        (0, _, _) if runs_needed.is_some() => {
            runs_needed.map(|at_least| Standing::TooFewRuns { at_least })
        }
        (0, _, Some(at_least)) => Some(Standing::TooFewTrials { at_least }),
        (0, _, None) => None,
        (tested, 0, _) => Some(Standing::NotSignificant { tested }),
        (tested, points, _) => Some(Standing::Significant { points, tested }),
    }
}

/// Fits every (system, group) series of the aggregate.
pub fn fit_series(agg: &Aggregate) -> Vec<SeriesFit> {
    if agg.layout.x_axis.is_none() {
        return Vec::new();
    }
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
            // Three coefficients on fewer than 6 levels say more about the
            // noise than the system: no fit, and one sentence instead.
            let usl_too_short = agg.usl_axis && points.len() < FEW_POINTS;
            let usl =
                (agg.usl_axis && !usl_too_short).then(|| fit(&points).map_err(|e| e.to_string()));
            let base_n = points[0].0;
            // A peak, a collapse and an efficiency are about contention:
            // over frame sizes, object sizes or dataset sizes they say
            // nothing, so only a concurrency-like axis gets a shape.
            let shape = (agg.usl_axis && points.len() >= 2)
                .then(|| shape(&points, base_n))
                .flatten();
            let limiters: Vec<(f64, &super::limiter::PointLimiter)> = agg
                .cells_in_group(g)
                .filter(|c| &c.system == s)
                .filter_map(|c| Some((c.x?, c.limiter.as_ref()?)))
                .collect();
            let caveat = super::caveat::of_curve(&limiters, shape.as_ref());
            out.push(SeriesFit {
                system: s.clone(),
                group: g,
                points,
                usl,
                usl_too_short,
                shape,
                caveat,
            });
        }
    }
    out
}

/// The one sentence that replaces the USL fits of series too short for one:
/// `The sweep is too short for a USL fit: 3 connections levels, a fit needs
/// at least 6; the peak and the decline are measured, not fitted`. Names
/// the curves when only some are short. `None` when none is.
pub fn too_short_sentence(agg: &Aggregate) -> Option<String> {
    let axis = agg.layout.x_axis.as_deref()?;
    let short: Vec<&SeriesFit> = agg.fits.iter().filter(|f| f.usl_too_short).collect();
    let most = short.iter().map(|f| f.points.len()).max()?;
    let which = if short.len() == agg.fits.len() {
        String::new()
    } else {
        let names: Vec<String> = short.iter().map(|f| f.name(agg)).collect();
        format!(" for {}", names.join("; "))
    };
    Some(format!(
        "The sweep is too short for a USL fit{which}: {most} {axis} level{}, a fit needs at least {FEW_POINTS}; the peak and the decline are measured, not fitted",
        if most == 1 { "" } else { "s" }
    ))
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
            let mine = || agg.cells.iter().filter(|c| &c.system == s);
            // A point where either side has too many errors is left out.
            let excluded_at = |c: &Cell| {
                c.not_comparable.is_some()
                    || agg
                        .cell(base, c.point.index)
                        .is_some_and(|b| b.not_comparable.is_some())
            };
            let excluded = mine().filter(|c| excluded_at(c)).count();
            let logs: Vec<f64> = mine()
                .filter(|c| !excluded_at(c))
                .filter_map(|c| {
                    let b = agg.cell(base, c.point.index)?.headline()?;
                    let v = c.headline()?;
                    (b > 0.0 && v > 0.0).then(|| (v / b).ln())
                })
                .collect();
            let compared: Vec<&Verdict> = mine()
                .filter_map(|c| c.comparison.as_ref().map(|cmp| &cmp.verdict))
                .filter(|v| !matches!(v, Verdict::NotComparable { .. }))
                .collect();
            let verdicts: Vec<&&Verdict> = compared
                .iter()
                .filter(|v| !matches!(v, Verdict::NeedsMoreTrials { .. }))
                .collect();
            // Only points the test could decide count; too few trials is "untested".
            let significant = (s != base && !verdicts.is_empty()).then(|| {
                verdicts
                    .iter()
                    .filter(|v| matches!(v, Verdict::Faster | Verdict::Slower))
                    .count()
            });
            let pairs: Vec<(&Cell, &Cell)> = mine()
                .filter(|c| s != base && !excluded_at(c))
                .filter(|c| {
                    !matches!(
                        c.comparison.as_ref().map(|x| &x.verdict),
                        None | Some(Verdict::NotComparable { .. })
                    )
                })
                .filter_map(|c| Some((agg.cell(base, c.point.index)?, c)))
                .collect();
            let whole = super::judge::whole(
                &pairs,
                &super::judge::Rules::symmetric(agg.headline, agg.noise),
            );
            // Between runs the run as a whole is the one verdict: its
            // significance, or its `?` with too few runs.
            let (significant, too_few_trials) = match whole.as_ref().map(|w| &w.verdict) {
                Some(Verdict::NeedsMoreRuns { .. }) => (None, true),
                Some(Verdict::Faster | Verdict::Slower) => (Some(1), false),
                Some(_) => (Some(0), false),
                None => (
                    significant,
                    s != base && verdicts.is_empty() && !compared.is_empty(),
                ),
            };
            // A system left out everywhere still appears, last, so the
            // ranking says why it is missing.
            (!logs.is_empty() || excluded > 0).then(|| Rank {
                whole,
                system: s.clone(),
                relative: if logs.is_empty() {
                    0.0
                } else {
                    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
                },
                points: logs.len(),
                significant,
                too_few_trials,
                excluded,
            })
        })
        .collect();
    out.sort_by(|a, b| b.relative.total_cmp(&a.relative));
    out
}

/// `FreeBSD (128%) > DragonflyBSD (110%) > Debian (100%)`. `>` is claimed
/// only where it is earned ([`separator`]): neighbours within the run's
/// noise floor (a fraction) or not significantly different are joined by
/// `≈`, and a system with too few trials to judge by `,` (an order, no
/// claim). A system that differs significantly from the baseline at no
/// point is marked `n.s.`, so an A/A run never reads as a ranking.
pub fn ranking_line(ranks: &[Rank], noise: f64) -> String {
    let mut out = String::new();
    let (ranked, unranked): (Vec<&Rank>, Vec<&Rank>) = ranks.iter().partition(|r| r.points > 0);
    for (i, r) in ranked.iter().enumerate() {
        if i > 0 {
            out.push_str(separator(ranked[i - 1], r, noise));
        }
        let ns = if r.significant == Some(0) {
            ", n.s.".to_string()
        } else if r.too_few_trials {
            format!(", {}", super::verdict::TOO_FEW)
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{} ({}{ns})",
            r.system,
            format::percent(r.relative)
        ));
    }
    for r in unranked {
        out.push_str(&format!(
            "{}{} ({} not comparable)",
            if out.is_empty() { "" } else { ", " },
            r.system,
            super::verdict::EXCLUDED
        ));
    }
    if ranks.iter().any(|r| r.significant == Some(0)) {
        out.push_str("  [n.s.: not significantly different from the baseline at any point]");
    }
    if ranks.iter().any(|r| r.too_few_trials) {
        let between = ranks.iter().any(|r| r.whole.is_some());
        out.push_str(&format!(
            "  [{}: too few {} to judge]",
            super::verdict::TOO_FEW,
            if between {
                "runs (≥3 a side between runs) or trials"
            } else {
                "trials"
            }
        ));
    }
    let excluded = ranks.iter().map(|r| r.excluded).max().unwrap_or(0);
    if excluded > 0 {
        out.push_str(&format!(
            "  [{excluded} point{} left out as not comparable: errors above {}% of requests, or a load generator that fell behind]",
            if excluded == 1 { "" } else { "s" },
            crate::analysis::compare::MAX_ERROR_RATE * 100.0
        ));
    }
    out
}

/// What joins two neighbours of the ranking, `higher` first: `>` only when
/// they are apart by more than the noise floor and each one that is not
/// the baseline differs significantly from it at some point; `≈` when
/// they are close or one is not significantly different (`n.s.`); `, `
/// when one had too few trials to be judged at all.
fn separator(higher: &Rank, lower: &Rank, noise: f64) -> &'static str {
    // Between runs the run as a whole decides ([`super::judge::whole`]).
    let untested = |r: &Rank| match &r.whole {
        Some(w) => matches!(w.verdict, Verdict::NeedsMoreRuns { .. }),
        None => r.too_few_trials,
    };
    // The baseline has no `significant`: it is the yardstick.
    let differs = |r: &Rank| {
        !untested(r)
            && match &r.whole {
                Some(w) => matches!(w.verdict, Verdict::Faster | Verdict::Slower),
                None => r.significant.map_or(true, |n| n > 0),
            }
    };
    let close = (higher.relative - lower.relative).abs() < noise * higher.relative.abs();
    if untested(higher) || untested(lower) {
        ", "
    } else if close || !differs(higher) || !differs(lower) {
        " ≈ "
    } else {
        " > "
    }
}

/// How many points the ranking's geometric means are over: `3 points`,
/// or `2–3 points (2 for B, 3 for C)` when the systems differ (a point
/// left out for one system leaves the others' count alone). The
/// baseline's own count is not a mean of anything and is left out.
pub fn mean_over(agg: &Aggregate) -> String {
    let counts: Vec<(&str, usize)> = agg
        .ranking
        .iter()
        .filter(|r| Some(r.system.as_str()) != agg.baseline.as_deref())
        .map(|r| (r.system.as_str(), r.points))
        .collect();
    let lo = counts.iter().map(|c| c.1).min().unwrap_or(0);
    let hi = counts.iter().map(|c| c.1).max().unwrap_or(0);
    if lo == hi {
        return format!("{lo} point{}", if lo == 1 { "" } else { "s" });
    }
    let each: Vec<String> = counts.iter().map(|(s, n)| format!("{n} for {s}")).collect();
    format!("{lo}–{hi} points ({})", each.join(", "))
}

/// `peak 82.12k at 100; past the peak: mild decline (-8.0%)`
pub fn shape_sentence(s: &CurveShape, axis: &str) -> String {
    let past = match &s.past_peak {
        PastPeak::StillRising => "still rising at the last point".to_string(),
        PastPeak::Plateau { drop } => format!("plateau ({})", format::change(1.0 - drop)),
        PastPeak::MildDecline { drop } => {
            format!("mild decline ({})", format::change(1.0 - drop))
        }
        PastPeak::Decline { drop } => format!("decline ({})", format::change(1.0 - drop)),
        PastPeak::Collapse { drop } => format!("collapse ({})", format::change(1.0 - drop)),
    };
    let superlinear = s
        .superlinear()
        .map(|(n, e)| {
            format!(
                "; superlinear: efficiency {e:.1} at {axis}={} (the lowest level was latency-bound, not resource-bound)",
                format::axis_value(n)
            )
        })
        .unwrap_or_default();
    format!(
        "peak {} at {axis}={}; past the peak: {past}{superlinear}",
        format::rate(s.peak_x),
        format::axis_value(s.peak_n)
    )
}

impl SeriesFit {
    /// The curve's name: `postgres`, or `postgres, load.script=select-only`
    /// when the run has groups.
    pub fn name(&self, agg: &Aggregate) -> String {
        match agg.layout.groups.get(self.group).map(|g| g.label.as_str()) {
            Some(g) if !g.is_empty() => format!("{}, {g}", self.system),
            _ => self.system.clone(),
        }
    }
}

/// A single system's verdict on its own curves, one line per curve: the
/// peak, the USL's N* when fitted, and the shape past the peak.
pub fn curve_verdicts(agg: &Aggregate) -> Vec<String> {
    let Some(axis) = agg.layout.x_axis.as_deref() else {
        return Vec::new();
    };
    agg.fits
        .iter()
        .filter_map(|f| {
            let shape = shape_sentence(f.shape.as_ref()?, axis) + &f.caveat.after_shape();
            let n_star = match &f.usl {
                Some(Ok(u)) => match (u.not_quoted_why(), u.peak_concurrency) {
                    (Some(why), _) => format!("; no USL N* quoted ({why})"),
                    (None, Some(n)) => format!("; USL N*={}", n_star_text(n)),
                    (None, None) => "; USL N*=∞ (no peak within reach)".into(),
                },
                _ => String::new(),
            };
            let fit_caveat = if n_star.is_empty() {
                String::new()
            } else {
                f.caveat.after_fit()
            };
            Some(format!("{}: {shape}{n_star}{fit_caveat}", f.name(agg)))
        })
        .collect()
}

/// `σ=0.0123 κ=0.00031 N*=56`; `N*=– (poor fit)` when the fit's R² is
/// under [`crate::analysis::usl::POOR_R_SQUARED`].
pub fn usl_params(f: &UslFit) -> String {
    let n_star = n_star_cell(f);
    format!(
        "σ={} κ={} N*={n_star}",
        format::sig(f.sigma, 3),
        format::sig(f.kappa, 2)
    )
}

/// N* as a table or a legend shows it: `56`, `∞` (κ = 0), or `– (poor
/// fit)` when it may not be quoted ([`UslFit::quoted_peak`]).
pub fn n_star_cell(f: &UslFit) -> String {
    match (f.is_good(), f.peak_concurrency) {
        (false, _) => "– (poor fit)".into(),
        (true, Some(n)) => n_star_text(n),
        (true, None) => "∞".into(),
    }
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
            too_few_trials: false,
            excluded: 0,
            whole: None,
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
        // Never `>` between systems the tests could not tell apart.
        assert!(
            line.starts_with("A again (105%, n.s.) ≈ A (100%)"),
            "{line}"
        );
        assert!(line.contains("not significantly different"), "{line}");
    }

    #[test]
    fn greater_than_is_only_claimed_where_it_is_earned() {
        let judged = |system: &str, relative: f64, significant: usize| Rank {
            significant: Some(significant),
            ..r(system, relative)
        };
        let base = r("1 worker", 1.0);
        let line = ranking_line(&[judged("2 workers", 1.3, 2), base.clone()], 0.02);
        assert!(
            line.starts_with("2 workers (130%) > 1 worker (100%)"),
            "{line}"
        );
        // Between two candidates, `>` needs both to differ from the baseline.
        let line = ranking_line(
            &[judged("4", 1.3, 2), judged("2", 1.1, 0), base.clone()],
            0.02,
        );
        assert!(
            line.starts_with("4 (130%) ≈ 2 (110%, n.s.) ≈ 1 worker (100%)"),
            "{line}"
        );
        // Too few trials to test: an order, no relation claimed.
        let untested = Rank {
            too_few_trials: true,
            ..r("2 workers", 1.3)
        };
        let line = ranking_line(&[untested, base], 0.02);
        assert!(
            line.starts_with("2 workers (130%, ?), 1 worker (100%)"),
            "{line}"
        );
    }

    #[test]
    fn a_poor_fit_puts_no_n_star_in_the_headline() {
        let (_, mut agg) = crate::report::test_support::aggregate(&["pg"]);
        let line = curve_verdicts(&agg).join("\n");
        assert!(line.contains("; USL N*=221"), "{line}");
        if let Some(Ok(u)) = agg.fits[0].usl.as_mut() {
            u.r_squared = 0.5;
        }
        let line = curve_verdicts(&agg).join("\n");
        assert!(!line.contains("N*=2"), "{line}");
        assert!(
            line.contains("no USL N* quoted (R² = 0.50 < 0.9: the fit explains the data poorly)"),
            "{line}"
        );
        let Some(Ok(u)) = &agg.fits[0].usl else {
            unreachable!()
        };
        assert_eq!(usl_params(u), "σ=0.0200 κ=2.0e-5 N*=– (poor fit)");
    }

    #[test]
    fn the_mean_counts_the_points_it_is_over() {
        // nginx-return200: one point of three left out for the candidate.
        let (_, mut agg) = crate::report::test_support::aggregate(&["a", "b"]);
        agg.ranking = vec![
            Rank {
                points: 2,
                excluded: 1,
                whole: None,
                ..r("b", 1.05)
            },
            Rank {
                points: 3,
                ..r("a", 1.0)
            },
        ];
        assert_eq!(mean_over(&agg), "2 points");
        agg.ranking.push(Rank {
            points: 3,
            ..r("c", 1.01)
        });
        assert_eq!(mean_over(&agg), "2–3 points (2 for b, 3 for c)");
    }

    #[test]
    fn ties_within_noise_use_approx() {
        let line = ranking_line(&[r("Linux", 1.016), r("FreeBSD", 1.0)], 0.02);
        assert_eq!(line, "Linux (102%) ≈ FreeBSD (100%)");
    }
}
