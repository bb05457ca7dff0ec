//! A chart of one series across the runs of a history, for the points'
//! charts ([`super::page`]) and the curve's properties ([`super::curves`]).

use crate::svg::{LineChart, Pt, Series, YScale};

/// A chart of one series across the runs (x: the run's place in the
/// history), from zero: `(id, title, y axis)`.
pub(super) fn across_runs(
    (id, title, y): (&str, &str, &str),
    system: &str,
    points: Vec<Pt>,
) -> LineChart {
    let mut c = LineChart::new(id, title, "run (in history order)", y);
    c.y_scale = YScale::FromZero;
    c.series.push(Series {
        label: system.to_string(),
        color: 0,
        marker: 0,
        style: crate::svg::LineStyle::Solid,
        points,
        band: Vec::new(),
        fit: None,
    });
    c
}
