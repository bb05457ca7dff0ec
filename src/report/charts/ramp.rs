//! Seed 002's resperf charts: for each ramp, the answer rate against the
//! offered rate, second by second, beside the diagonal where every query
//! is answered. Where a curve leaves the diagonal the server fell behind;
//! its highest point is resperf's "maximum throughput". One chart per
//! system, one curve per sweep point (its first successful trial's ramp).

use super::{plain_series, Chart, ChartKind, GroupCtx};
use crate::report::format;
use crate::report::svg::{Guide, LineChart, Pt};

impl GroupCtx<'_> {
    pub(super) fn ramps(&self) -> Vec<Chart> {
        let mut out = Vec::new();
        for s in &self.agg.systems {
            let mut c = LineChart::new(
                &self.id(&format!("ramp-{}", slug(s))),
                &format!("{s}: answered against offered rate{}", self.suffix),
                "offered rate (queries/s)",
                "answered rate (queries/s)",
            );
            c.x_format = format::tick;
            let mut top: f64 = 0.0;
            let mut notes = Vec::new();
            for cell in self.cells(s) {
                if cell.facts.ramp.is_empty() {
                    continue;
                }
                // In order of the offered rate, not of time: a generator
                // that fell behind offers less for a second, and a line in
                // time order would fold back on itself.
                let mut seconds = cell.facts.ramp.clone();
                seconds.sort_by_key(|r| (r.offered, r.second));
                let points: Vec<Pt> = seconds
                    .iter()
                    .map(|r| Pt {
                        x: r.offered as f64,
                        y: r.answered as f64,
                        tip: format!(
                            "{s}, {}, second {}: {} offered, {} answered, {} lost",
                            cell.point.label(),
                            r.second,
                            r.offered,
                            r.answered,
                            r.lost
                        ),
                        ..Pt::default()
                    })
                    .collect();
                top = points.iter().map(|p| p.x).fold(top, f64::max);
                let k = c.series.len();
                let label = match &self.agg.layout.x_axis {
                    Some(_) => {
                        format!("{}={}", self.axis, self.agg.layout.short_label(&cell.point))
                    }
                    None => cell.point.label(),
                };
                notes.extend(
                    cell.facts
                        .ramp_notes
                        .iter()
                        .map(|n| format!("{label}: {n}.")),
                );
                c.series.push(plain_series(&label, k, points));
            }
            if c.series.is_empty() {
                continue;
            }
            c.guides.push(Guide {
                curve: vec![(0.0, 0.0), (top, top)],
                label: "every query answered".into(),
            });
            let caption = "One curve per sweep point, one marker per second of its ramp \
                           (the first successful trial's), in order of the offered rate. On \
                           the dotted diagonal every query was answered; below it the server \
                           fell behind.";
            let caption = std::iter::once(caption.to_string())
                .chain(notes)
                .collect::<Vec<_>>();
            out.extend(self.finish(ChartKind::Ramp, c, caption.join(" ")));
        }
        out
    }
}

/// A label reduced to `[a-z0-9-]` for an element id.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}
