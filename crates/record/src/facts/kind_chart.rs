//! A chart a load kind draws of its own facts (DNS's rate ramps), as
//! typed data: the kind computes the curves, the guides and the caption
//! ([`super::TrialFacts::charts`]); the report only lays them out and
//! draws them, knowing no kind. The report's element id is the chart's
//! [`KindChart::name`], the system and the group; its title is the
//! system's name and [`KindChart::title`].

use super::TrialExtras;

/// One cell (a system at one sweep point) of a group, as the kind's
/// charts of that system see it.
pub struct KindChartCell<'a> {
    /// What the report names the cell's curve (`max_rate=4000`, or the
    /// point's label when nothing is swept).
    pub label: String,
    /// The sweep point's full label, for hover text.
    pub point: String,
    /// The facts of the cell's first successful trial that recorded any;
    /// empty when none did.
    pub extras: &'a TrialExtras,
}

/// A chart the load kind supplies: line curves over shared axes, grey
/// dotted guides and the caption that says how to read it.
#[derive(Clone, Debug, PartialEq)]
pub struct KindChart {
    /// Names the chart among the kind's own (`ramp`), stable across runs:
    /// the report's element id is made of it, the system and the group.
    pub name: &'static str,
    /// The section of the HTML report it belongs in.
    pub section: KindSection,
    /// The title, after the system's name and a colon (`answered against
    /// offered rate`).
    pub title: String,
    /// The x axis's label, with its unit.
    pub x_label: String,
    /// The y axis's label, with its unit.
    pub y_label: String,
    /// The curves, one colour and marker each, in order.
    pub curves: Vec<KindCurve>,
    /// Grey dotted guide curves (a diagonal where every query was
    /// answered).
    pub guides: Vec<KindGuide>,
    /// How to read the chart, whole sentences.
    pub caption: String,
}

/// Where in the HTML report a kind's charts go: a section of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindSection {
    /// The section's element id (`ramps`).
    pub id: &'static str,
    /// Its heading (`Rate ramps`).
    pub title: &'static str,
}

/// One curve of a kind's chart.
#[derive(Clone, Debug, PartialEq)]
pub struct KindCurve {
    /// Its label in the legend.
    pub label: String,
    /// Its points, in drawing order.
    pub points: Vec<KindPoint>,
}

/// One point of a curve.
#[derive(Clone, Debug, PartialEq)]
pub struct KindPoint {
    /// Where on the x axis.
    pub x: f64,
    /// Where on the y axis.
    pub y: f64,
    /// What hovering over it shows.
    pub tip: String,
}

/// A grey dotted guide curve.
#[derive(Clone, Debug, PartialEq)]
pub struct KindGuide {
    /// Its `(x, y)` points, in order.
    pub points: Vec<(f64, f64)>,
    /// Its label.
    pub label: String,
}
