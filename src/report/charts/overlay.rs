//! One throughput chart for a sweep over server CPUs (or any other numeric
//! axis beside x): each CPU count's curve, with its USL fit, overlaid on
//! one chart instead of one chart each, so the curves can be compared at
//! a glance (seed 000's SMP figures).

use super::{plain_series, Chart, ChartKind, GroupCtx};
use crate::report::format;
use crate::report::rows::Aggregate;
use crate::report::svg::{scale, LineChart};

/// The overlaid chart, when there are two or more groups, every axis that
/// splits them is numeric, and some group has a curve (two x values).
pub fn throughput(agg: &Aggregate) -> Option<Chart> {
    let layout = &agg.layout;
    if layout.groups.len() < 2 || layout.x_axis.is_none() {
        return None;
    }
    let numeric = layout
        .group_axes
        .iter()
        .all(|a| agg.points.iter().all(|p| p.number(a).is_some()));
    let ctxs: Vec<GroupCtx> = (0..layout.groups.len())
        .map(|g| GroupCtx::new(agg, g))
        .collect();
    if !numeric || !ctxs.iter().any(|c| c.lines) || ctxs.iter().any(|c| c.dataset.is_some()) {
        return None;
    }
    let axis = layout.x_axis.clone().unwrap_or_default();
    let mut c = LineChart::new(
        "throughput-overlay",
        &format!(
            "Throughput, one curve per {}",
            layout.group_axes.join(" and ")
        ),
        &axis,
        agg.unit,
    );
    let xs: Vec<f64> = agg.cells.iter().filter_map(|c| c.x).collect();
    c.x_kind = scale::choose_kind(&xs);
    c.x_format = format::axis_value;
    c.hollow_meaning = "hollow marker: a trial at this point was client-bound".into();
    for ctx in &ctxs {
        let label = &layout.groups[ctx.group].label;
        for s in &agg.systems {
            let points: Vec<_> = ctx
                .cells(s)
                .iter()
                .filter_map(|cell| ctx.throughput_point(cell))
                .collect();
            if points.is_empty() {
                continue;
            }
            let name = if agg.systems.len() > 1 {
                format!("{s}, {label}")
            } else {
                label.clone()
            };
            let k = c.series.len();
            let mut series = plain_series(&name, k, points);
            series.fit = ctx.usl_curve(s);
            c.series.push(series);
        }
    }
    let fits = c.series.iter().filter(|s| s.fit.is_some()).count();
    let caption = format!(
        "One curve per {}: markers are the {} of the successful trials, bars min–max{}.",
        layout.group_axes.join(" and "),
        agg.headline_word(),
        if fits > 0 {
            "; dashed: each curve's Universal Scalability Law fit"
        } else {
            "; none of these curves has a USL fit"
        }
    );
    ctxs[0].finish(ChartKind::Throughput, c, caption)
}
