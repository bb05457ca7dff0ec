//! What the throughput chart marks besides the data: each curve's peak
//! and, past it, a decline or collapse (seed 004's "TPS against threads
//! with the collapse marked"), and a link's line rate against a
//! forwarding rate (seed 001's frames/s against frame size).

use super::GroupCtx;
use crate::analysis::shape::PastPeak;
use crate::load::forward::frame::FrameSize;
use crate::report::format;
use crate::report::svg::{Guide, Mark};

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

    /// The line rate in frames/s at each frame size, when x is the frame
    /// size and the run recorded the link speed it stands for.
    pub(super) fn line_rate(&self) -> Option<Guide> {
        if !self.axis.ends_with("frame_size") || self.dataset.is_some() {
            return None;
        }
        let cells: Vec<_> = self.agg.cells_in_group(self.group).collect();
        let gbit = cells.iter().find_map(|c| c.facts.link_gbit)?;
        let mut sizes: Vec<f64> = cells.iter().filter_map(|c| c.x).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        let curve = sizes
            .iter()
            .filter(|x| **x >= 1.0 && **x <= f64::from(u32::MAX))
            .map(|x| (*x, FrameSize(*x as u32).line_rate(gbit)))
            .collect();
        Some(Guide {
            curve,
            label: format!("{} Gbit/s line rate", format::axis_value(gbit)),
        })
    }
}
