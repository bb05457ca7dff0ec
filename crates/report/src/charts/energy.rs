//! Energy figures: operations per joule against the sweep axis, with the
//! watts drawn beside the CPU load × frequency panel (all three panels over
//! one x axis); one bar per point and system when the group has a single
//! x. Drawn only for a run that measured energy.

use super::{Chart, ChartKind, GroupCtx};
use crate::judging::energy::{domains_line, measured, shared_note};
use crate::judging::format;
use crate::judging::rows::Cell;
use crate::svg::{Panels, Pt, YScale};

/// The plot height of each panel.
const PANEL_H: f64 = 210.0;

impl GroupCtx<'_> {
    /// ops/J over watts over CPU load × frequency.
    pub(super) fn energy(&self) -> Option<Chart> {
        if !measured(self.agg) {
            return None;
        }
        if !self.lines {
            return self.energy_bars();
        }
        let mut ops = self.line_chart("ops-per-joule", "Operations per joule", "ops/J");
        ops.y_scale = YScale::FromZero;
        ops.plot_height = PANEL_H;
        ops.series = self.series_of(|c| self.ops_point(c));
        if ops.series.is_empty() {
            return None;
        }
        let mut watts = self.line_chart("watts", "Power", "watts (W)");
        watts.y_scale = YScale::FromZero;
        watts.plot_height = PANEL_H;
        watts.series = self.series_of(|c| {
            let w = c.energy.as_ref()?.watts_median?;
            Some(self.point(c, w, |v| format!("{v:.1} W")))
        });
        let mut panels = vec![ops, watts];
        let load = self.load_x_freq_panel();
        if !load.series.is_empty() {
            panels.push(load);
        }
        let title = format!(
            "Operations per joule, watts and CPU load × frequency{}",
            self.suffix
        );
        let chart = Panels::new(&title, panels).render();
        Some(self.chart(ChartKind::Energy, chart, self.energy_caption()))
    }

    fn ops_point(&self, c: &Cell) -> Option<Pt> {
        let s = c.energy.as_ref()?.summary.as_ref()?;
        let mut p = self.point(c, s.headline, ops_per_joule);
        p.lo = Some(s.min);
        p.hi = Some(s.max);
        Some(p)
    }

    fn energy_caption(&self) -> String {
        format!(
            "Top: {} operations per joule (the trial's throughput over its mean watts; \
             whiskers: min–max), higher is better. Middle: mean watts, median across trials. \
             Bottom: CPU load × frequency. Measured: {}.{}",
            self.agg.headline_word(),
            domains_line(self.agg),
            shared_note(self.agg)
                .map(|n| format!(" {}{}.", n[..1].to_uppercase(), &n[1..]))
                .unwrap_or_default()
        )
    }

    /// One bar per point and system when there is a single x.
    fn energy_bars(&self) -> Option<Chart> {
        let c = self.summary_bars("Operations per joule", "ops/J", ops_per_joule, |c| {
            c.energy.as_ref()?.summary.as_ref()
        });
        self.finish_bars(ChartKind::Energy, c, self.energy_caption())
    }
}

/// `1.23k ops/J`.
fn ops_per_joule(v: f64) -> String {
    format!("{} ops/J", format::sig(v, 3))
}
