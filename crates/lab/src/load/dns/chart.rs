//! Seed 002's resperf chart, as DNS's own chart
//! ([`crate::load::facts::TrialFacts::charts`]): for each ramp, the answer
//! rate against the offered rate, second by second, beside the diagonal
//! where every query is answered. Where a curve leaves the diagonal the
//! server fell behind; its highest point is resperf's "maximum
//! throughput". One chart per system, one curve per sweep point (its first
//! successful trial's ramp). This module computes the chart's data; the
//! report draws it.

use super::ramp::Ramp;
use crate::load::facts::{KindChart, KindCurve, KindGuide, KindPoint, KindSection};

/// The HTML report's section for the ramp charts.
const SECTION: KindSection = KindSection {
    id: "ramps",
    title: "Rate ramps",
};

/// The first sentences of a ramp chart's caption; each ramp's notes follow.
const CAPTION: &str = "One curve per sweep point, one marker per second of its ramp (the \
                       first successful trial's), in order of the offered rate. On the dotted \
                       diagonal every query was answered; below it the server fell behind.";

/// One cell's ramp, as the chart sees it.
pub(super) struct RampCell<'a> {
    /// The curve's label (`KindChartCell::label`).
    pub label: &'a str,
    /// The sweep point's label, for hover text.
    pub point: &'a str,
    /// The ramp of the cell's first successful trial.
    pub ramp: &'a Ramp,
}

/// The ramp chart of `system` over its cells' ramps, in x order; `None`
/// when no ramp has a second in it.
pub(super) fn ramp_chart(system: &str, cells: &[RampCell]) -> Option<KindChart> {
    let mut curves = Vec::new();
    let mut notes = Vec::new();
    let mut top: f64 = 0.0;
    for cell in cells.iter().filter(|c| !c.ramp.seconds.is_empty()) {
        let points = curve(system, cell.point, cell.ramp);
        top = points.iter().map(|p| p.x).fold(top, f64::max);
        notes.extend(
            cell.ramp
                .notes
                .iter()
                .map(|n| format!("{}: {n}.", cell.label)),
        );
        curves.push(KindCurve {
            label: cell.label.to_string(),
            points,
        });
    }
    if curves.is_empty() {
        return None;
    }
    let caption = std::iter::once(CAPTION.to_string())
        .chain(notes)
        .collect::<Vec<_>>()
        .join(" ");
    Some(KindChart {
        name: "ramp",
        section: SECTION,
        title: "answered against offered rate".into(),
        x_label: "offered rate (queries/s)".into(),
        y_label: "answered rate (queries/s)".into(),
        curves,
        guides: vec![KindGuide {
            points: vec![(0.0, 0.0), (top, top)],
            label: "every query answered".into(),
        }],
        caption,
    })
}

/// One ramp's seconds as points, in order of the offered rate, not of
/// time: a generator that fell behind offers less for a second, and a
/// line in time order would fold back on itself.
fn curve(system: &str, point: &str, ramp: &Ramp) -> Vec<KindPoint> {
    let mut seconds = ramp.seconds.clone();
    seconds.sort_by_key(|r| (r.offered, r.second));
    seconds
        .iter()
        .map(|r| KindPoint {
            x: r.offered as f64,
            y: r.answered as f64,
            tip: format!(
                "{system}, {point}, second {}: {} offered, {} answered, {} lost",
                r.second, r.offered, r.answered, r.lost
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::dns::ramp::RampSecond;

    fn ramp(seconds: &[(u64, u64)], notes: &[&str]) -> Ramp {
        Ramp {
            seconds: (0..)
                .zip(seconds)
                .map(|(second, &(offered, answered))| RampSecond {
                    second,
                    offered,
                    answered,
                    lost: offered - answered,
                    ..RampSecond::default()
                })
                .collect(),
            notes: notes.iter().map(|n| n.to_string()).collect(),
            ..Ramp::default()
        }
    }

    fn cell<'a>(label: &'a str, ramp: &'a Ramp) -> RampCell<'a> {
        RampCell {
            label,
            point: label,
            ramp,
        }
    }

    #[test]
    fn one_curve_per_ramp_in_order_of_the_offered_rate() {
        let empty = Ramp::default();
        assert_eq!(
            ramp_chart("nsd", &[cell("a", &empty)]),
            None,
            "no second, no chart"
        );
        // Second 2 fell behind: it offered less than second 1.
        let late = ramp(&[(100, 100), (300, 200), (250, 150)], &[]);
        let noted = ramp(&[(50, 50)], &["it stopped early"]);
        let cells = [cell("a", &late), cell("b", &empty), cell("c", &noted)];
        let chart = ramp_chart("nsd", &cells).unwrap();
        assert_eq!(chart.curves.len(), 2, "one curve per ramp with seconds");
        let xs: Vec<f64> = chart.curves[0].points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [100.0, 250.0, 300.0]);
        assert_eq!(
            chart.curves[0].points[1].tip,
            "nsd, a, second 2: 250 offered, 150 answered, 100 lost"
        );
        assert_eq!(chart.guides[0].points, [(0.0, 0.0), (300.0, 300.0)]);
        assert!(chart.caption.starts_with(CAPTION));
        assert!(
            chart.caption.ends_with(" c: it stopped early."),
            "{}",
            chart.caption
        );
        assert_eq!((chart.name, chart.section.id), ("ramp", "ramps"));
    }
}
