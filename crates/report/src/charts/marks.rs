//! What the throughput chart marks besides the data: each curve's peak
//! and, past it, a decline or collapse (seed 004's "TPS against threads
//! with the collapse marked"), and the load kind's own marks (a link's
//! line rate against a forwarding rate: seed 001's frames/s against frame
//! size), which its trial facts draw (`load::facts::TrialFacts::chart_marks`).

use super::GroupCtx;
use crate::analysis::shape::PastPeak;
use crate::judging::format;
use crate::record::facts::{ChartInputs, ChartMark};
use crate::svg::{Guide, Mark};

impl GroupCtx<'_> {
    /// A peak mark when the curve has points past its peak, and a mark at
    /// the last point when it declines or collapses from there.
    /// Only on a concurrency or processor axis: a "peak" over frame sizes
    /// or dataset sizes says nothing about contention.
    pub(super) fn peak_marks(&self, system: &str, color: usize) -> Vec<Mark> {
        if !self.agg.usl_axis {
            return Vec::new();
        }
        let Some(shape) = self
            .agg
            .fit(system, self.group)
            .and_then(|f| f.shape.as_ref())
        else {
            return Vec::new();
        };
        let who = if self.agg.systems.len() > 1 {
            format!("{system}: ")
        } else {
            String::new()
        };
        let (drop, word) = match shape.past_peak {
            PastPeak::StillRising => return Vec::new(),
            PastPeak::Plateau { .. } | PastPeak::MildDecline { .. } => (None, ""),
            PastPeak::Decline { drop } => (Some(drop), "decline"),
            PastPeak::Collapse { drop } => (Some(drop), "collapse"),
        };
        let caveat = self
            .agg
            .fit(system, self.group)
            .map(|f| &f.caveat)
            .cloned()
            .unwrap_or_default();
        // A mark resting on points the load generator or other processes
        // limited says so (`report::caveat`).
        let peak_note = if caveat.peak.is_some() {
            " (not the server)"
        } else {
            ""
        };
        let past_note = if caveat.past_peak.is_some() {
            " (client/background-limited)"
        } else {
            ""
        };
        let mut out: Vec<Mark> = self
            .on_axis(system, shape.peak_n)
            .map(|x| Mark {
                x,
                label: format!("{who}peak{peak_note}"),
                color: Some(color),
                x_in_label: true,
            })
            .into_iter()
            .collect();
        let last = self
            .cells(system)
            .iter()
            .filter(|c| c.summary.is_some())
            .rev()
            .find_map(|c| self.x(c));
        if let (Some(drop), Some(x)) = (drop, last) {
            out.push(Mark {
                x,
                label: format!("{who}{word} {}{past_note}", format::change(1.0 - drop)),
                color: Some(color),
                x_in_label: true,
            });
        }
        out
    }

    /// Where the sweep value `sweep_x` of `system` falls on this chart's x.
    fn on_axis(&self, system: &str, sweep_x: f64) -> Option<f64> {
        self.cells(system)
            .iter()
            .find(|c| c.x == Some(sweep_x))
            .and_then(|c| self.x(c))
    }

    /// The load kind's own marks on this group's chart, from the first
    /// cell whose trials recorded facts. None on a dataset axis (x is no
    /// sweep value there).
    pub(super) fn kind_marks(&self) -> KindMarks {
        let mut out = KindMarks::default();
        if self.dataset.is_some() {
            return out;
        }
        let cells: Vec<_> = self.agg.cells_in_group(self.group).collect();
        let Some(extras) = cells.iter().map(|c| &c.facts.extras).find(|e| !e.is_none()) else {
            return out;
        };
        let mut xs: Vec<f64> = cells.iter().filter_map(|c| c.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let chart = ChartInputs {
            axis: &self.axis,
            xs: &xs,
            server_figures: cells
                .iter()
                .map(|c| c.facts.server_figures.as_slice())
                .find(|f| !f.is_empty())
                .unwrap_or_default(),
            number: format::axis_value,
        };
        for mark in extras.chart_marks(&chart) {
            match mark {
                ChartMark::Curve {
                    points,
                    label,
                    caption,
                } => {
                    out.guides.push(Guide {
                        curve: points,
                        label,
                    });
                    out.guide_captions.push(caption);
                }
                ChartMark::At { x, label, caption } => {
                    out.marks.push(Mark {
                        x,
                        label,
                        color: None,
                        x_in_label: true,
                    });
                    out.sentences.push(format!(" {caption}"));
                }
            }
        }
        out
    }
}

/// A load kind's marks on one chart, and what its caption says of them.
#[derive(Default)]
pub(super) struct KindMarks {
    /// Guide curves (a line rate).
    pub guides: Vec<Guide>,
    /// What each guide is, for the caption's "grey dotted: ...".
    pub guide_captions: Vec<String>,
    /// Vertical marks.
    pub marks: Vec<Mark>,
    /// The caption's sentence for each vertical mark.
    pub sentences: Vec<String>,
}
