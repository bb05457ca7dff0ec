//! Figures of aligned panels over one x axis (see [`Panels`]): requests/s
//! over Gbit/s (seeds 001/003), so a bandwidth ceiling and the request rate
//! it caps are read off one figure. Also the `per client` words of seed
//! 000's combined figure (see `super::seed_figs`).

use super::{Chart, ChartKind, GroupCtx};
use crate::svg::{Panels, YScale};

/// The plot height of each panel: shorter than a chart of its own, so a
/// figure of two or three fits a screen.
const PANEL_H: f64 = 230.0;

impl GroupCtx<'_> {
    /// The CPU's load × frequency as a panel (busy GHz against x).
    pub(super) fn load_x_freq_panel(&self) -> crate::svg::LineChart {
        let mut load = self.line_chart(
            "load-x-freq",
            "CPU load × frequency",
            "busy GHz (Σ over CPUs of busy share × clock)",
        );
        load.y_scale = YScale::FromZero;
        load.plot_height = PANEL_H;
        load.series = self.series_of(|c| {
            let ghz = c.server.load_x_freq? / 1000.0;
            Some(self.point(c, ghz, |v| format!("{v:.2} busy GHz")))
        });
        load
    }

    /// Requests/s over Gbit/s when any trial moved bytes.
    pub(super) fn bandwidth(&self) -> Option<Chart> {
        if !self.lines || !self.agg.cells.iter().any(|c| c.gbit_s.unwrap_or(0.0) > 0.0) {
            return None;
        }
        let mut rate = self.line_chart("bw-rate", "Throughput", &self.rate_label());
        rate.plot_height = PANEL_H;
        rate.series = self.series_of(|c| self.throughput_point(c));
        let mut bw = self.line_chart("bandwidth", "Bandwidth", "Gbit/s");
        bw.plot_height = PANEL_H;
        bw.series =
            self.series_of(|c| Some(self.point(c, c.gbit_s?, |v| format!("{v:.3} Gbit/s"))));
        if bw.series.is_empty() {
            return None;
        }
        let caption = format!(
            "Top: throughput (markers: the headline statistic, bars: min–max). Bottom: {}, \
             median across trials.{}",
            self.words().bytes,
            self.direction_sentence()
        );
        let title = format!("{} and Gbit/s{}", self.agg.unit, self.suffix);
        self.figure(
            ChartKind::Bandwidth,
            Panels::new(&title, vec![rate, bw]),
            caption,
        )
    }

    fn figure(&self, kind: ChartKind, p: Panels, caption: String) -> Option<Chart> {
        Some(self.chart(kind, p.render(), caption))
    }
}

/// `per client` for connections or clients, `per thread`, `per CPU`, else
/// `per unit of AXIS`.
pub(super) fn per_word(axis: &str) -> String {
    let a = axis.to_ascii_lowercase();
    let word = [
        ("connections", "client"),
        ("clients", "client"),
        ("concurrency", "client"),
        ("threads", "thread"),
        ("cpus", "CPU"),
        ("workers", "worker"),
        ("worker_processes", "worker"),
        ("jobs", "job"),
    ]
    .iter()
    .find(|(k, _)| a.contains(k))
    .map(|(_, w)| *w);
    match word {
        Some(w) => format!("per {w}"),
        None => format!("per unit of {axis}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_words() {
        assert_eq!(per_word("connections"), "per client");
        assert_eq!(per_word("server.threads"), "per thread");
        assert_eq!(per_word("server_cpus"), "per CPU");
        assert_eq!(per_word("load.jobs"), "per job");
    }
}
