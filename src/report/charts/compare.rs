//! The OS-against-OS page's charts (`scalelab compare A B --html`): for
//! each system and group the two runs share, run A's curve and run B's
//! overlaid, each with its min–max bars, the 95% CI of its median as a
//! band, and its peak (and decline or collapse) marked. The per-point
//! verdicts are in each marker's tooltip and in the table under the chart.

use super::{plain_series, Chart, ChartKind, GroupCtx};
use crate::report::format;
use crate::report::rows::Aggregate;
use crate::report::runs::PointComparison;
use crate::report::svg::{scale, LineChart, LineStyle, Mark, Pt, XNote};
use crate::report::verdict::{self, Tone};

/// One overlaid chart: system `system_a` of run A against `system_b` of run
/// B, in the group labelled `group` (empty when the runs have one group).
#[derive(Clone, Debug)]
pub struct Pair<'a> {
    pub system_a: &'a str,
    pub system_b: &'a str,
    pub group: String,
}

/// The overlaid curves of `pair`, when both runs have points in it; `names`
/// are the runs' names as the page shows them.
pub fn overlay(
    (a, b): (&Aggregate, &Aggregate),
    names: (&str, &str),
    pair: &Pair,
    verdicts: &[PointComparison],
    id: usize,
) -> Option<Chart> {
    let ga = a.layout.groups.iter().position(|g| g.label == pair.group)?;
    let gb = b.layout.groups.iter().position(|g| g.label == pair.group)?;
    let (ca, cb) = (GroupCtx::new(a, ga), GroupCtx::new(b, gb));
    if ca.dataset.is_some() || cb.dataset.is_some() {
        return None; // the dataset axis is per run; the sweep value is shared
    }
    let axis = a.layout.x_axis.clone()?;
    let who = if pair.system_a == pair.system_b {
        format!("{}: {} against {}", pair.system_a, names.1, names.0)
    } else {
        format!(
            "{} {} against {} {}",
            names.1, pair.system_b, names.0, pair.system_a
        )
    };
    let title = match pair.group.as_str() {
        "" => who,
        g => format!("{who} ({g})"),
    };
    let mut c = LineChart::new(&format!("compare-{id}"), &title, &axis, a.unit);
    let xs: Vec<f64> = a.cells.iter().chain(&b.cells).filter_map(|c| c.x).collect();
    c.x_kind = scale::choose_kind(&xs);
    c.x_format = format::axis_value;
    c.hollow_meaning = "hollow marker: a trial at this point was client-bound".into();
    let mut notes = Vec::new();
    for (k, (ctx, system, name)) in [(&ca, pair.system_a, names.0), (&cb, pair.system_b, names.1)]
        .into_iter()
        .enumerate()
    {
        let cells = ctx.cells(system);
        let points: Vec<Pt> = cells
            .iter()
            .filter_map(|cell| {
                let mut p = ctx.throughput_point(cell)?;
                if k == 1 {
                    if let Some(v) = verdicts
                        .iter()
                        .find(|v| v.system_b == system && v.coords == cell.point.coords)
                    {
                        let (text, tone) = verdict::short(&v.comparison);
                        p.tip = format!("{}; against {}: {text}", p.tip, names.0);
                        notes.push(XNote {
                            x: p.x,
                            text: note(&v.comparison, tone),
                            color: match tone {
                                Tone::Better => "#1a7f37",
                                Tone::Worse => "#cf222e",
                                Tone::Same | Tone::Unknown => "#59636e",
                            },
                        });
                    }
                }
                Some(p)
            })
            .collect();
        if points.is_empty() {
            return None;
        }
        let mut series = plain_series(&format!("{name}: {system}"), k, points);
        series.style = if k == 0 {
            LineStyle::Solid
        } else {
            LineStyle::Dashed
        };
        series.band = cells
            .iter()
            .filter_map(|cell| {
                let (lo, hi) = cell.summary.as_ref()?.median_ci?;
                Some((cell.x?, lo, hi))
            })
            .collect();
        c.marks
            .extend(ctx.peak_marks(system, k).into_iter().map(|m| Mark {
                label: format!("{name}: {}", m.label),
                ..m
            }));
        c.series.push(series);
    }
    c.x_notes = notes;
    let caption = format!(
        "Solid: {}, dashed: {}. Markers: the {} of the successful trials; bars: min–max; \
         shading: 95% CI of the median (6 or more trials); dashed verticals: each curve's \
         peak and any decline or collapse past it. Along the bottom: the verdict of {} at \
         each point (✗ not comparable, ? too few trials, ~ no difference).",
        names.0,
        names.1,
        a.headline_word(),
        names.1
    );
    ca.finish(ChartKind::Throughput, c, caption)
}

/// The verdict in a few characters: `+12%`, `~`, `? +30%`, `✗ errors`.
fn note(c: &crate::analysis::compare::Comparison, tone: Tone) -> String {
    use crate::analysis::compare::Verdict;
    let pct = format!("{:+.0}%", (c.ratio - 1.0) * 100.0);
    match (&c.verdict, tone) {
        (Verdict::NotComparable { .. }, _) => format!("{} errors", verdict::EXCLUDED),
        (Verdict::NoDifference, _) => verdict::SAME.to_string(),
        (Verdict::NeedsMoreTrials { .. }, _) => format!("{} {pct}", verdict::TOO_FEW),
        _ => pct,
    }
}
