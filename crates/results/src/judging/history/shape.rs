//! The curve as a series: for every run, each system's scaling curve
//! reduced to the properties a kernel developer reads it by (the USL's N*,
//! σ and κ where the fit holds, the peak's height and its x, where it
//! collapses, and the limiter at the peak), and the change points of each
//! property across the runs.
//!
//! A property is one value per run, so the run is the unit by
//! construction. Its change points come from the same search and rules as
//! the points' ([`change_points_of_repeats`]: E-divisive means, a
//! permutation test, at least 3 runs a side, the step's 95% interval wholly
//! beyond the noise floor), so a knee that moved is named only when the
//! runs on each side agree among themselves. The limiter at the peak is a
//! name, not a number: it is said where it changes between the runs on
//! either side of a change point of the curve.

use crate::analysis::changepoint::{change_points_of_repeats, Settings};
use crate::judging::rows::{Aggregate, SeriesFit};
use serde::Serialize;

/// A property of a scaling curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// The USL's N*, the concurrency of its peak (where the fit holds).
    NStar,
    /// The highest measured throughput.
    Peak,
    /// The x (connections, clients, ...) of that highest throughput.
    PeakX,
    /// The x of the last point of a curve that collapsed past its peak
    /// (throughput falling towards single-client levels).
    Collapse,
    /// The USL's σ (contention).
    Sigma,
    /// The USL's κ (crosstalk).
    Kappa,
}

impl Property {
    /// Every property, in the order they are shown.
    pub const ALL: [Property; 6] = [
        Property::NStar,
        Property::Peak,
        Property::PeakX,
        Property::Collapse,
        Property::Sigma,
        Property::Kappa,
    ];

    /// `check --on`'s name for it.
    pub fn name(self) -> &'static str {
        match self {
            Property::NStar => "n_star",
            Property::Peak => "peak",
            Property::PeakX => "peak_x",
            Property::Collapse => "collapse",
            Property::Sigma => "sigma",
            Property::Kappa => "kappa",
        }
    }

    /// Its name in a sentence.
    pub fn words(self) -> &'static str {
        match self {
            Property::NStar => "N*",
            Property::Peak => "the peak",
            Property::PeakX => "the peak's x",
            Property::Collapse => "the collapse",
            Property::Sigma => "σ",
            Property::Kappa => "κ",
        }
    }

    /// Whether a rise is better (a later knee, a higher peak, a later
    /// collapse) or worse (more contention or crosstalk): the direction
    /// `check --on` calls a regression (`docs/history.md`).
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Property::Sigma | Property::Kappa)
    }

    /// The property `name` names, or the error that lists the names.
    pub fn parse(name: &str) -> Result<Property, String> {
        Property::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Property::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "--on {name}: not a curve property; choose one of {}",
                    names.join(", ")
                )
            })
    }

    /// Its value on one curve; `None` where the curve does not give it (no
    /// good USL fit, no collapse).
    pub fn of(self, fit: &SeriesFit) -> Option<f64> {
        let usl = fit.usl.as_ref().and_then(|u| u.as_ref().ok());
        let good = usl.filter(|u| u.is_good());
        let shape = fit.shape.as_ref();
        match self {
            Property::NStar => good?.quoted_peak(),
            Property::Sigma => Some(good?.sigma),
            Property::Kappa => Some(good?.kappa),
            Property::Peak => Some(shape?.peak_x),
            Property::PeakX => Some(shape?.peak_n),
            Property::Collapse => match shape?.past_peak {
                crate::analysis::shape::PastPeak::Collapse { .. } => {
                    fit.points.last().map(|(x, _)| *x)
                }
                _ => None,
            },
        }
    }
}

/// One run's curve of one system: its properties and the limiter at its
/// peak.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunCurve {
    /// Position of the run in the history's runs.
    pub position: usize,
    /// `(property, value)` for each property the curve gives.
    pub values: Vec<(Property, f64)>,
    /// The limiter named at the peak's point, where one was.
    pub limiter_at_peak: Option<String>,
    /// The limiter named at the curve's last point.
    pub limiter_at_top: Option<String>,
    /// Each property over the run's replicate curves (its k-th kept trial
    /// at every point), the values the change-point search permutes, as
    /// the points' series permute trials; the run's own value above is
    /// its headline curve's.
    #[serde(skip)]
    pub replicates: Vec<(Property, Vec<f64>)>,
}

impl RunCurve {
    /// The value of `property`, where the curve gives it.
    pub fn get(&self, property: Property) -> Option<f64> {
        (self.values.iter())
            .find(|(p, _)| *p == property)
            .map(|(_, v)| *v)
    }

    /// The run's values of `property` for the search: its replicate
    /// curves' where there are any, else its headline curve's.
    fn series_values(&self, property: Property) -> Option<Vec<f64>> {
        let own = self.get(property)?;
        let replicates = (self.replicates.iter())
            .find(|(p, v)| *p == property && !v.is_empty())
            .map(|(_, v)| v.clone());
        Some(replicates.unwrap_or_else(|| vec![own]))
    }
}

/// One run's kept trial values at a cell, as the verdicts keep them.
pub type Kept<'a> = &'a dyn Fn(&crate::judging::rows::Cell) -> Vec<f64>;

/// A change of one property between two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeChange {
    /// The property.
    pub property: Property,
    /// Position of the last run before the change.
    pub before_position: usize,
    /// Position of the first run after it.
    pub after_position: usize,
    /// median(after) / median(before), over the runs between neighbouring
    /// change points.
    pub ratio: f64,
    /// 95% interval of that ratio, the runs as units.
    pub ratio_ci: Option<(f64, f64)>,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// The median value over the runs of the segment before and of the
    /// segment after.
    pub from_to: (f64, f64),
}

/// One system's curve across the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CurveHistory {
    /// The system.
    pub system: String,
    /// The layout group (one curve per group).
    pub group: usize,
    /// The sweep's axis (`connections`).
    pub axis: String,
    /// Each run's curve, in history order (runs without one are absent).
    pub runs: Vec<RunCurve>,
    /// The change points of every property, in property then run order.
    pub changes: Vec<ShapeChange>,
    /// Each change point of the curve in words: `at v2: N* fell from 180
    /// to 40 connections (σ 0.020 → 0.090); the limiter at the peak
    /// changed from CPU to locks`.
    pub sentences: Vec<String>,
}

/// Every system's curve history over `cells` (each run's analysed
/// aggregate, [`crate::judging::analyse::aggregate`], in history order), with labels for the sentences; `repeat_of` groups
/// repeats of one build as the points' series do.
pub fn curves(
    cells: &[Aggregate],
    labels: &[String],
    (repeat_of, kept): (impl Fn(&[usize]) -> Vec<usize>, Kept<'_>),
    settings: &Settings,
) -> Vec<CurveHistory> {
    let mut keyed: Vec<((String, usize), String, Vec<RunCurve>)> = Vec::new();
    for (position, agg) in cells.iter().enumerate() {
        let axis = agg.layout.x_axis.clone().unwrap_or_default();
        for fit in &agg.fits {
            let curve = run_curve(position, agg, fit, kept);
            let key = (fit.system.clone(), fit.group);
            match keyed.iter_mut().find(|(k, _, _)| *k == key) {
                Some((_, _, runs)) => runs.push(curve),
                None => keyed.push((key, axis.clone(), vec![curve])),
            }
        }
    }
    keyed
        .into_iter()
        .map(|((system, group), axis, runs)| {
            let changes = changes_of(&runs, &repeat_of, settings);
            let sentences = sentences(&changes, &runs, labels, &axis);
            CurveHistory {
                system,
                group,
                axis,
                runs,
                changes,
                sentences,
            }
        })
        .collect()
}

fn run_curve(position: usize, agg: &Aggregate, fit: &SeriesFit, kept: Kept<'_>) -> RunCurve {
    let values = (Property::ALL.into_iter())
        .filter_map(|p| Some((p, p.of(fit)?)))
        .filter(|(_, v)| v.is_finite())
        .collect();
    let limiter_at = |x: Option<f64>| -> Option<String> {
        let x = x?;
        let cell = agg
            .cells_in_group(fit.group)
            .find(|c| c.system == fit.system && c.x == Some(x))?;
        Some(cell.limiter.as_ref()?.kind.label().to_string())
    };
    RunCurve {
        position,
        values,
        limiter_at_peak: limiter_at(fit.shape.as_ref().map(|s| s.peak_n)),
        limiter_at_top: limiter_at(fit.points.last().map(|(x, _)| *x)),
        replicates: replicates(agg, fit, kept),
    }
}

/// Each property over the run's replicate curves: the k-th kept trial of
/// every point of the curve, for each k that every point has.
fn replicates(agg: &Aggregate, fit: &SeriesFit, kept: Kept<'_>) -> Vec<(Property, Vec<f64>)> {
    let cells: Vec<(f64, Vec<f64>)> = agg
        .cells_in_group(fit.group)
        .filter(|c| c.system == fit.system)
        .filter_map(|c| Some((c.x?, kept(c))))
        .collect();
    let depth = cells.iter().map(|(_, v)| v.len()).min().unwrap_or(0);
    if cells.len() != fit.points.len() || depth < 2 {
        return Vec::new();
    }
    let curves: Vec<SeriesFit> = (0..depth)
        .map(|k| {
            let mut points: Vec<(f64, f64)> = cells.iter().map(|(x, v)| (*x, v[k])).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            SeriesFit {
                usl: fit
                    .usl
                    .as_ref()
                    .map(|_| crate::analysis::usl::fit(&points).map_err(|e| e.to_string())),
                shape: crate::analysis::shape::shape(&points, points[0].0),
                points,
                ..fit.clone()
            }
        })
        .collect();
    Property::ALL
        .into_iter()
        .map(|p| {
            let v: Vec<f64> = curves
                .iter()
                .filter_map(|c| p.of(c))
                .filter(|v| v.is_finite())
                .collect();
            (p, v)
        })
        .collect()
}

/// The change points of each property over the runs that give it.
fn changes_of(
    runs: &[RunCurve],
    repeat_of: &impl Fn(&[usize]) -> Vec<usize>,
    settings: &Settings,
) -> Vec<ShapeChange> {
    let mut out = Vec::new();
    for property in Property::ALL {
        let measured: Vec<(usize, f64)> = runs
            .iter()
            .filter_map(|r| Some((r.position, r.get(property)?)))
            .collect();
        let series: Vec<Vec<f64>> = runs
            .iter()
            .filter_map(|r| r.series_values(property))
            .collect();
        let positions: Vec<usize> = measured.iter().map(|(p, _)| *p).collect();
        let found = change_points_of_repeats(&series, &repeat_of(&positions), settings);
        // Segment k runs from the k-th boundary to the next.
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(found.iter().map(|c| c.after))
            .chain(std::iter::once(measured.len()))
            .collect();
        let median_of = |from: usize, to: usize| {
            let v: Vec<f64> = measured[from..to].iter().map(|(_, v)| *v).collect();
            crate::analysis::summary::median(&v).unwrap_or(f64::NAN)
        };
        for (k, c) in found.iter().enumerate() {
            out.push(ShapeChange {
                property,
                before_position: measured[c.after - 1].0,
                after_position: measured[c.after].0,
                ratio: c.ratio,
                ratio_ci: c.ratio_ci,
                p_value: c.p_value,
                from_to: (
                    median_of(bounds[k], bounds[k + 1]),
                    median_of(bounds[k + 1], bounds[k + 2]),
                ),
            });
        }
    }
    out
}

/// One sentence per run a curve changed at: its properties' moves, then
/// the limiter at the peak where it differs between the two runs.
fn sentences(
    changes: &[ShapeChange],
    runs: &[RunCurve],
    labels: &[String],
    axis: &str,
) -> Vec<String> {
    let mut at: Vec<usize> = changes.iter().map(|c| c.after_position).collect();
    at.sort_unstable();
    at.dedup();
    at.into_iter()
        .map(|after| {
            let here: Vec<&ShapeChange> = changes
                .iter()
                .filter(|c| c.after_position == after)
                .collect();
            let moves: Vec<String> = here.iter().map(|c| describe(c, axis)).collect();
            let mut s = format!(
                "at {}: {}",
                labels.get(after).map_or("?", String::as_str),
                moves.join("; ")
            );
            let before = here[0].before_position;
            let of = |p: usize| runs.iter().find(|r| r.position == p);
            if let (Some(b), Some(a)) = (of(before), of(after)) {
                if let (Some(lb), Some(la)) = (&b.limiter_at_peak, &a.limiter_at_peak) {
                    if lb != la {
                        s += &format!("; the limiter at the peak changed from {lb} to {la}");
                    }
                }
            }
            s
        })
        .collect()
}

/// `N* fell from 180 to 40 connections (×0.22, 95% CI 0.18-0.27)`.
fn describe(c: &ShapeChange, axis: &str) -> String {
    let verb = if c.ratio < 1.0 { "fell" } else { "rose" };
    let (from, to) = c.from_to;
    let unit = match c.property {
        Property::NStar | Property::PeakX | Property::Collapse => format!(" {axis}"),
        _ => String::new(),
    };
    let number = |v: f64| match c.property {
        Property::Sigma | Property::Kappa => format!("{v:.4}"),
        _ if v.abs() >= 100.0 => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    };
    let ci = c
        .ratio_ci
        .map(|(lo, hi)| format!(", 95% CI {lo:.2}-{hi:.2}"))
        .unwrap_or_default();
    format!(
        "{} {verb} from {} to {}{unit} (×{:.2}{ci})",
        c.property.words(),
        number(from),
        number(to),
        c.ratio
    )
}

#[cfg(test)]
mod tests;
