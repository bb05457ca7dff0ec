//! The load kind's own charts (`load::facts::TrialFacts::charts`: DNS's
//! rate ramps), drawn without knowing the kind: the kind computes each
//! chart's curves, guides and caption from its facts, and this module
//! lays them out as line charts, one set per system.

use super::{plain_series, Chart, ChartKind, GroupCtx};
use crate::judging::format;
use crate::record::facts::TrialExtras;
use crate::record::facts::{KindChart, KindChartCell};
use crate::svg::{Guide, LineChart, Pt};

impl GroupCtx<'_> {
    /// Every chart the load kind draws of this group, system by system.
    pub(super) fn kind_charts(&self) -> Vec<Chart> {
        let mut out = Vec::new();
        for s in &self.agg.systems {
            let cells: Vec<KindChartCell> = self
                .cells(s)
                .into_iter()
                .map(|cell| KindChartCell {
                    label: match &self.agg.layout.x_axis {
                        Some(_) => {
                            format!("{}={}", self.axis, self.agg.layout.short_label(&cell.point))
                        }
                        None => cell.point.label(),
                    },
                    point: cell.point.label(),
                    extras: &cell.facts.extras,
                })
                .collect();
            for chart in TrialExtras::charts(s, &cells) {
                out.extend(self.draw_kind_chart(s, chart));
            }
        }
        out
    }

    /// One kind-supplied chart of `system` as a line chart.
    fn draw_kind_chart(&self, system: &str, k: KindChart) -> Option<Chart> {
        let mut c = LineChart::new(
            &self.id(&format!("{}-{}", k.name, slug(system))),
            &format!("{system}: {}{}", k.title, self.suffix),
            &k.x_label,
            &k.y_label,
        );
        c.x_format = format::tick;
        for (i, curve) in k.curves.into_iter().enumerate() {
            let points = curve
                .points
                .into_iter()
                .map(|p| Pt {
                    x: p.x,
                    y: p.y,
                    tip: p.tip,
                    ..Pt::default()
                })
                .collect();
            c.series.push(plain_series(&curve.label, i, points));
        }
        c.guides.extend(k.guides.into_iter().map(|g| Guide {
            curve: g.points,
            label: g.label,
        }));
        self.finish(ChartKind::Kind(k.section), c, k.caption)
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
