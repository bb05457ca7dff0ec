//! Per-series fits (USL, curve shape) and the relative ranking of systems.

use super::format;
use super::rows::{Aggregate, Cell, Rank, SeriesFit};
use crate::analysis::compare::Verdict;
use crate::analysis::shape::{shape, CurveShape, PastPeak};
use crate::analysis::summary::{geometric_mean, positive_finite};
use crate::analysis::usl::{fit, n_star_text, UslFit, FEW_POINTS};
use serde::Serialize;

/// What the headline (the ranking) may claim, from every verdict against
/// the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Standing {
    /// Some comparisons are significant: `points` of the `tested` ones.
    Significant {
        /// Points whose verdict is significant.
        points: usize,
        /// Points tested.
        tested: usize,
    },
    /// Every tested comparison is within noise.
    NotSignificant {
        /// Points tested.
        tested: usize,
    },
    /// No comparison had enough trials to be tested.
    TooFewTrials {
        /// Trials a side a test needs.
        at_least: usize,
    },
    /// Between runs, no side had the runs a verdict needs.
    TooFewRuns {
        /// Runs a side a verdict between runs needs.
        at_least: usize,
    },
}

impl Standing {
    /// The status line printed with the headline; `noise` is the run's
    /// noise floor.
    pub fn sentence(&self, noise: f64) -> String {
        match self {
            Standing::Significant { points, tested } => format!(
                "significant: a difference at {points} of {tested} point{} (p < 0.05 by the test each verdict names, its whole 95% interval beyond the {} noise floor)",
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
    standing_of((agg.cells.iter()).filter_map(|c| c.comparison.as_ref().map(|cmp| &cmp.verdict)))
}

/// The headline's status from these verdicts (`report::multi` passes
/// its sides' points); `None` when nothing is compared.
pub fn standing_of<'a>(verdicts: impl IntoIterator<Item = &'a Verdict>) -> Option<Standing> {
    let verdicts: Vec<&Verdict> = verdicts
        .into_iter()
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

/// Ranks systems by the geometric mean, over the comparable points both
/// have, of their headline throughput divided by the baseline's. The
/// geometric mean is the right average of ratios (Fleming & Wallace, CACM
/// 1986) and, unlike the peak, it sees a collapse past the peak. A point
/// whose verdict is "not comparable" (either side's errors, or every trial
/// of either side client-bound: [`super::judge::excluded`]) is left out
/// and counted in [`Rank::excluded`]; the headlines are the ones the
/// verdicts used (client-bound trials left out). The baseline's `points`
/// are those at which some other system was ranked.
pub fn rank(agg: &Aggregate) -> Vec<Rank> {
    let Some(base) = agg.baseline.as_deref() else {
        return Vec::new();
    };
    let mut out: Vec<Rank> = agg
        .systems
        .iter()
        .filter(|s| s.as_str() != base)
        .filter_map(|s| rank_of(agg, base, s))
        .collect();
    if let Some(b) = baseline_rank(agg, base, &out) {
        out.push(b);
    }
    out.sort_by(|a, b| b.relative.total_cmp(&a.relative));
    out
}

/// Whether `c` (a cell of a system that is not the baseline) is left out
/// of the ranking: its verdict, or either side, is not comparable.
fn left_out_of_ranking(agg: &Aggregate, base: &str, c: &Cell) -> bool {
    let verdict = c.comparison.as_ref().map(|x| &x.verdict);
    matches!(verdict, Some(Verdict::NotComparable { .. }))
        || super::judge::excluded(c).is_some()
        || agg
            .cell(base, c.point.index)
            .is_some_and(|b| super::judge::excluded(b).is_some())
}

/// One system's rank against `base` (never the baseline itself); `None`
/// when it shares no measured point with it.
fn rank_of(agg: &Aggregate, base: &str, s: &str) -> Option<Rank> {
    let shared: Vec<(&Cell, &Cell)> = (agg.cells.iter())
        .filter(|c| c.system == s && c.headline().is_some())
        .filter_map(|c| Some((agg.cell(base, c.point.index)?, c)))
        .filter(|(b, _)| b.headline().is_some())
        .collect();
    if shared.is_empty() {
        return None;
    }
    let (excluded, pairs): (Vec<_>, Vec<_>) = shared
        .into_iter()
        .partition(|(_, c)| left_out_of_ranking(agg, base, c));
    // The ratio at each point where both headlines can be averaged.
    let ratios: Vec<f64> = pairs
        .iter()
        .filter_map(|(b, c)| {
            let both = positive_finite([b.headline()?, c.headline()?]);
            let [b, v] = both.as_slice() else {
                return None;
            };
            Some(v / b)
        })
        .collect();
    let verdicts: Vec<&Verdict> = pairs
        .iter()
        .filter_map(|(_, c)| c.comparison.as_ref().map(|cmp| &cmp.verdict))
        .collect();
    let tested: Vec<&&Verdict> = verdicts
        .iter()
        .filter(|v| !matches!(v, Verdict::NeedsMoreTrials { .. }))
        .collect();
    // Only points the test could decide count; too few trials is "untested".
    let significant = (!tested.is_empty()).then(|| {
        tested
            .iter()
            .filter(|v| matches!(v, Verdict::Faster | Verdict::Slower))
            .count()
    });
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
        None => (significant, tested.is_empty() && !verdicts.is_empty()),
    };
    Some(Rank {
        whole,
        system: s.to_string(),
        relative: geometric_mean(ratios.iter().copied()).unwrap_or(0.0),
        points: ratios.len(),
        significant,
        too_few_trials,
        excluded: excluded.len(),
    })
}

/// The baseline's entry: 100% over the points at which some other system
/// was ranked; its `excluded`, its own points in no verdict.
fn baseline_rank(agg: &Aggregate, base: &str, others: &[Rank]) -> Option<Rank> {
    let mine: Vec<&Cell> = (agg.cells.iter())
        .filter(|c| c.system == base && c.headline().is_some())
        .collect();
    if mine.is_empty() {
        return None;
    }
    let ranked_at = |c: &&&Cell| {
        (agg.cells.iter()).any(|o| {
            o.system != base
                && o.point.index == c.point.index
                && o.headline().is_some()
                && !left_out_of_ranking(agg, base, o)
        })
    };
    let excluded = (mine.iter())
        .filter(|c| super::judge::excluded(c).is_some())
        .count();
    // Alone (no other system shares a point), it is its own yardstick.
    let points = if others.is_empty() {
        mine.len() - excluded
    } else {
        mine.iter().filter(ranked_at).count()
    };
    let ranked = points > 0;
    Some(Rank {
        whole: None,
        system: base.to_string(),
        relative: if ranked { 1.0 } else { 0.0 },
        points,
        significant: None,
        too_few_trials: false,
        excluded,
    })
}

/// `FreeBSD (128%) > DragonflyBSD (110%) > Debian (100%)`. `>` is claimed
/// only where it is earned (`separator`): neighbours within the run's
/// noise floor (a fraction) or not significantly different are joined by
/// `≈`, and a system with too few trials to judge by `,` (an order, no
/// claim). A system that differs significantly from the baseline at no
/// point is marked `n.s.`, so an A/A run never reads as a ranking.
pub fn ranking_line(ranks: &[Rank], noise: f64) -> String {
    let mut out = String::new();
    let (ranked, unranked): (Vec<&Rank>, Vec<&Rank>) = ranks.iter().partition(|r| r.points > 0);
    // With nobody ranked beside the baseline there is no order to print.
    if ranks.len() > 1 && ranked.len() < 2 {
        return format!("{NO_RANKING}{}", left_out_note(ranks));
    }
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
    out.push_str(&left_out_note(ranks));
    out
}

/// What the ranking line says when no system beside the baseline has a
/// comparable point.
pub const NO_RANKING: &str = "no ranking: no comparable point";

/// `  [2 points left out as not comparable: …]`, the most any system had
/// left out; empty when none was.
fn left_out_note(ranks: &[Rank]) -> String {
    let excluded = ranks.iter().map(|r| r.excluded).max().unwrap_or(0);
    if excluded == 0 {
        return String::new();
    }
    format!(
        "  [{excluded} point{} left out as not comparable: errors above {}% of requests, a load generator that fell behind, or every trial of a side client-bound]",
        if excluded == 1 { "" } else { "s" },
        crate::analysis::compare::MAX_ERROR_RATE * 100.0
    )
}

/// Whether the ranking orders anything: some system beside the baseline
/// was ranked at a comparable point.
pub fn ranks_anything(ranks: &[Rank]) -> bool {
    ranks.iter().filter(|r| r.points > 0).count() >= 2
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
        let (_, mut agg) = crate::judging::test_support::aggregate(&["pg"]);
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
        let (_, mut agg) = crate::judging::test_support::aggregate(&["a", "b"]);
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

    /// The fixture with `system`'s trials at `points` all client-bound,
    /// analysed for real.
    fn bound_at(systems: &[&str], system: &str, points: &[u32]) -> Aggregate {
        let mut data = crate::judging::test_support::run_data(systems);
        for t in &mut data.trials {
            if t.system == system && points.contains(&t.point.index) {
                t.context.client_bound = Some(true);
                t.context.client_bound_reason = Some("client CPU 99% of its cores".into());
            }
        }
        crate::judging::analyse::aggregate(&data)
    }

    /// Issue 46 (2.1): the geometric mean counted points whose verdict was
    /// "not comparable" (every trial of a side client-bound) and said
    /// `excluded: 0`.
    #[test]
    fn points_that_are_not_comparable_are_left_out_of_the_ranking_and_counted() {
        let agg = bound_at(&["a", "b"], "b", &[3, 4]);
        let b = agg.ranking.iter().find(|r| r.system == "b").unwrap();
        assert_eq!((b.points, b.excluded), (3, 2), "{b:?}");
        let logs: Vec<f64> = (0..3)
            .map(|i| {
                let v = agg.cell("b", i).unwrap().headline().unwrap();
                (v / agg.cell("a", i).unwrap().headline().unwrap()).ln()
            })
            .collect();
        let want = (logs.iter().sum::<f64>() / 3.0).exp();
        assert!((b.relative - want).abs() < 1e-12, "{} {want}", b.relative);
        let line = ranking_line(&agg.ranking, agg.noise);
        assert!(
            line.contains("[2 points left out as not comparable"),
            "{line}"
        );
        assert_eq!(mean_over(&agg), "3 points");
    }

    /// Issue 46 (2.1): nginx-return200 --quick, every point client-bound,
    /// printed `seed 003 config (100%) > nginx defaults (91%)`.
    #[test]
    fn a_run_with_no_comparable_point_has_no_ranking() {
        let all = [0, 1, 2, 3, 4];
        for bound in ["a", "b"] {
            let agg = bound_at(&["a", "b"], bound, &all);
            let line = ranking_line(&agg.ranking, agg.noise);
            assert!(line.starts_with(NO_RANKING), "{line}");
            assert!(!line.contains('>') && !line.contains("(100%)"), "{line}");
            assert!(line.contains("[5 points left out"), "{line}");
            assert!(!ranks_anything(&agg.ranking));
            let b = agg.ranking.iter().find(|r| r.system == "b").unwrap();
            assert_eq!((b.points, b.excluded), (0, 5), "{b:?}");
        }
    }

    /// Issue 46 (2.2): a series of another run, one run a side, 2 trials,
    /// is `?` and never joined by `>`, even when the baseline was
    /// client-bound at some points.
    #[test]
    fn one_run_a_side_is_marked_and_never_ordered() {
        let mut data = crate::judging::test_support::run_data(&["quiet"]);
        data.trials.retain(|t| t.trial <= 2);
        let again: Vec<crate::store::Trial> = (data.trials.iter())
            .map(|t| {
                let mut t = t.clone();
                t.system = "again".into();
                t.run_id = 8;
                t.measurement.as_mut().unwrap().rps.0 *= 1.66;
                t
            })
            .collect();
        for t in &mut data.trials {
            if t.point.index >= 3 {
                t.context.client_bound = Some(true);
            }
        }
        data.trials.extend(again);
        let agg = crate::judging::analyse::aggregate(&data);
        let line = ranking_line(&agg.ranking, agg.noise);
        assert!(line.starts_with("again (166%, ?), quiet (100%)"), "{line}");
        assert!(!line.contains('>'), "{line}");
        assert!(line.contains("[2 points left out"), "{line}");
        let again = agg.ranking.iter().find(|r| r.system == "again").unwrap();
        assert!(
            matches!(
                again.whole.as_ref().map(|w| &w.verdict),
                Some(Verdict::NeedsMoreRuns { .. })
            ),
            "{again:?}"
        );
        // Every point of the baseline client-bound: no ranking at all.
        for t in &mut data.trials {
            if t.system == "quiet" {
                t.context.client_bound = Some(true);
            }
        }
        let agg = crate::judging::analyse::aggregate(&data);
        let line = ranking_line(&agg.ranking, agg.noise);
        assert!(line.starts_with(NO_RANKING), "{line}");
    }

    #[test]
    fn ties_within_noise_use_approx() {
        let line = ranking_line(&[r("Linux", 1.016), r("FreeBSD", 1.0)], 0.02);
        assert_eq!(line, "Linux (102%) ≈ FreeBSD (100%)");
    }
}
