//! The history page's curve sections: for each system whose curve was
//! measured in more than one run, a chart per property of the curve (N*,
//! the peak's x, the peak) across the runs, each change point of that
//! property marked between its two runs, then the changes in words.

use crate::judging::history::shape::{CurveHistory, Property};
use crate::judging::history::History;
use crate::svg::{LineChart, Mark, Pt};
use maud::{html, Markup};

/// The properties drawn, each with its y axis.
const DRAWN: [Property; 3] = [Property::NStar, Property::PeakX, Property::Peak];

/// Every curve's section.
pub fn sections(h: &History) -> Markup {
    html! {
        @for (i, c) in h.curves.iter().enumerate().filter(|(_, c)| c.runs.len() > 1) {
            section {
                h2 { "The curve of " (c.system) " over " (c.axis) }
                @for p in DRAWN {
                    @if let Some(chart) = chart(h, c, p, i) {
                        figure { (chart.render()) }
                    }
                }
                @if c.sentences.is_empty() {
                    p class="desc" { "No change of the curve's shape." }
                } @else {
                    ul {
                        @for s in &c.sentences { li { (s) } }
                    }
                }
            }
        }
    }
}

fn chart(h: &History, c: &CurveHistory, property: Property, i: usize) -> Option<LineChart> {
    let points: Vec<Pt> = (c.runs.iter())
        .filter_map(|r| {
            let y = r.get(property)?;
            let label = h.runs.get(r.position).map_or("?", |x| x.label.as_str());
            Some(Pt {
                x: r.position as f64 + 1.0,
                y,
                lo: None,
                hi: None,
                hollow: false,
                tip: format!("{label}: {} {y:.4}", property.words()),
            })
        })
        .collect();
    if points.len() < 2 {
        return None;
    }
    let y_label = match property {
        Property::Peak => h.unit.clone(),
        _ => c.axis.clone(),
    };
    let title = format!("{} · {}", c.system, property.words());
    let id = format!("curve-{i}-{}", property.name());
    let mut chart = super::across::across_runs((&id, &title, &y_label), &c.system, points);
    for k in c.changes.iter().filter(|k| k.property == property) {
        chart.marks.push(Mark {
            x: (k.before_position + k.after_position) as f64 / 2.0 + 1.0,
            label: format!(
                "×{:.2} ({}→{})",
                k.ratio,
                k.before_position + 1,
                k.after_position + 1
            ),
            color: Some(1),
            x_in_label: false,
        });
    }
    Some(chart)
}
