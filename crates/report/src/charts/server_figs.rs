//! Seed 003's other figures: the latency distribution at the highest
//! concurrency (wrk's "Latency Distribution" at c4000, one bar per
//! percentile and system) and memory per server worker against x.

use super::{CellValue, Chart, ChartKind, GroupCtx};
use crate::judging::format;
use crate::judging::rows::Cell;
use crate::svg::{Bar, BarChart, BarSeries, LineStyle, YScale};

impl GroupCtx<'_> {
    /// p50, p90, p99, p99.9 and max of each system at the group's highest
    /// x where every system has latency.
    pub(super) fn latency_at_top(&self) -> Option<Chart> {
        let top = self
            .agg
            .cells_in_group(self.group)
            .filter(|c| c.latency.p50_us.is_some())
            .filter_map(|c| self.x(c))
            .fold(f64::NEG_INFINITY, f64::max);
        if !top.is_finite() {
            return None;
        }
        let at = |s: &str| -> Option<&Cell> {
            self.cells(s)
                .into_iter()
                .find(|c| self.x(c) == Some(top) && c.latency.p50_us.is_some())
        };
        let names = ["p50", "p90", "p99", "p99.9", "max"];
        let title = format!("Latency percentiles {}{}", self.at(top), self.suffix);
        let mut c = BarChart::new(&title, "percentile", "latency");
        c.axes.categories = names.iter().map(|n| n.to_string()).collect();
        c.axes.y_format = |v| format::latency_us(v).replace(".00", "");
        c.value_format = format::latency_us;
        let mut timeouts = false;
        for (i, s) in self.agg.systems.iter().enumerate() {
            let Some(cell) = at(s) else { continue };
            timeouts |= cell.errors.timeout > 0;
            let l = cell.latency;
            let values = [l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us]
                .iter()
                .zip(names)
                .map(|(v, name)| {
                    v.map(|us| Bar {
                        value: us,
                        lo: None,
                        hi: None,
                        tip: format!("{s}, {name}: {}", format::latency_us(us)),
                    })
                })
                .collect();
            c.series.push(BarSeries {
                label: s.clone(),
                color: i,
                values,
            });
        }
        let words = self.words();
        let caption = format!(
            "At the highest load, each percentile is the median across trials of that \
             trial's percentile of {}.{}",
            words.latency,
            if timeouts {
                format!(
                    " Timed-out {}s have no latency and are not in these percentiles.",
                    words.item
                )
            } else {
                String::new()
            }
        );
        self.finish_bars(ChartKind::Latency, c, caption)
    }

    /// Resident and virtual memory per server worker, each on its own
    /// scale: a worker's VSZ (8 TiB of reserved address space is common)
    /// would squash its RSS line flat on a shared axis.
    pub(super) fn memory(&self) -> Vec<Chart> {
        if !self.lines {
            return Vec::new();
        }
        let panels: [(&str, &str, &str, CellValue, &str); 2] = [
            (
                "memory",
                "resident",
                "Resident memory per server worker (RSS)",
                |c| c.server.rss_per_worker,
                "Resident set (RSS) per server process other than the master, median \
                 across trials.",
            ),
            (
                "memory-virtual",
                "virtual",
                "Virtual size per server worker (VSZ)",
                |c| c.server.vsz_per_worker,
                "Virtual size (VSZ, what seed 003 quotes) per server process other than the \
                 master, median across trials: reserved address space, on its own scale so \
                 that it does not flatten the resident line.",
            ),
        ];
        panels
            .into_iter()
            .filter_map(|(id, name, title, value, caption)| {
                let mut c = self.line_chart(id, title, "memory per worker (MB)");
                c.y_scale = YScale::FromZero;
                // Decimal megabytes, so the nice 1-2-5 ticks read as round numbers.
                c.y_format = |v| format!("{} MB", format::tick(v / 1e6));
                c.series = self.styled_series(&[(name, LineStyle::Solid, value)], format::bytes);
                self.finish(ChartKind::Memory, c, caption.into())
            })
            .collect()
    }
}
