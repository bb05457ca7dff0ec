//! Figures of aligned panels over one x axis (see [`Panels`]):
//!
//! - seed 000 (2018): throughput per client beside throughput's own chart,
//!   and the CPU's load × frequency (its "light blue curve": how much CPU
//!   the machine actually delivered) against clients;
//! - seeds 001/003: requests/s over Gbit/s, so a bandwidth ceiling and the
//!   request rate it caps are read off one figure.

use super::{Chart, ChartKind, GroupCtx};
use crate::report::format;
use crate::report::svg::{Panels, YScale};

/// The plot height of each panel: shorter than a chart of its own, so a
/// figure of two or three fits a screen.
const PANEL_H: f64 = 230.0;

impl GroupCtx<'_> {
    /// Throughput per unit of the x axis (per client, thread or CPU) over
    /// the CPU's load × frequency, for a concurrency or processor axis.
    pub(super) fn per_client(&self) -> Option<Chart> {
        if !self.lines || self.dataset.is_some() || !self.agg.usl_axis {
            return None;
        }
        let per = per_word(&self.axis);
        let unit = format!("{} {per}", self.agg.unit);
        let mut share = self.line_chart("per-client", &format!("Throughput {per}"), &unit);
        share.y_format = format::tick;
        share.plot_height = PANEL_H;
        share.series = self.series_of(|c| {
            let x = c.x.filter(|x| *x > 0.0)?;
            Some(self.point(c, c.headline()? / x, format::rate))
        });
        let mut panels = vec![share];
        let load = self.load_x_freq_panel();
        if !load.series.is_empty() {
            panels.push(load);
        }
        if panels[0].series.is_empty() {
            return None;
        }
        let caption = format!(
            "Top: the {} throughput divided by {axis}: flat while each added unit \
             brings its full share, falling once they contend.{}",
            self.agg.headline_word(),
            if panels.len() > 1 {
                " Bottom: machine-wide CPU delivered, busy share × clock summed over \
                 CPUs (load generator included): throughput that stops following it \
                 is lost to contention, not to a lack of CPU."
            } else {
                " The probe recorded no CPU frequency, so load × frequency is not drawn."
            },
            axis = self.axis
        );
        let title = format!("Throughput {per} and CPU load × frequency{}", self.suffix);
        self.figure(ChartKind::PerClient, Panels::new(&title, panels), caption)
    }

    /// The CPU's load × frequency as a panel (busy GHz against x).
    pub(super) fn load_x_freq_panel(&self) -> crate::report::svg::LineChart {
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
        let mut rate = self.line_chart("bw-rate", "Throughput", self.agg.unit);
        rate.plot_height = PANEL_H;
        rate.series = self.series_of(|c| self.throughput_point(c));
        let mut bw = self.line_chart("bandwidth", "Bandwidth", "Gbit/s");
        bw.plot_height = PANEL_H;
        bw.series =
            self.series_of(|c| Some(self.point(c, c.gbit_s?, |v| format!("{v:.3} Gbit/s"))));
        if bw.series.is_empty() {
            return None;
        }
        let caption = "Top: throughput (markers: the headline statistic, bars: min–max). \
                       Bottom: response bytes read by the load generator, median across trials.";
        let title = format!("{} and Gbit/s{}", self.agg.unit, self.suffix);
        self.figure(
            ChartKind::Bandwidth,
            Panels::new(&title, vec![rate, bw]),
            caption.into(),
        )
    }

    fn figure(&self, kind: ChartKind, p: Panels, caption: String) -> Option<Chart> {
        Some(self.chart(kind, p.render(), caption))
    }
}

/// `per client` for connections or clients, `per thread`, `per CPU`, else
/// `per unit of AXIS`.
fn per_word(axis: &str) -> String {
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
