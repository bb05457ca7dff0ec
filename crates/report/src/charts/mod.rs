//! Which charts a run gets, built from the aggregate.
//!
//! Per group (one per combination of the non-x axes, see [`crate::judging::layout`]):
//! throughput (with each curve's peak and collapse marked, and a link's
//! line rate for forwarding), throughput per client beside CPU load ×
//! frequency, latency p50/p99 and the percentiles at the highest x,
//! requests/s over Gbit/s (when any trial moved bytes), the efficiency
//! curve, server CPU, memory per worker, and the CPU breakdown at the
//! group's highest x. A group with fewer than two x values gets bar charts
//! instead of lines. Each system keeps one colour and marker across all
//! charts. The seed-specific figures are in the submodules: [`dataset`]
//! (the dataset/memory axis), [`overlay`] (one curve per server CPU count),
//! [`seed_panels`] (aligned panels), [`server_figs`] (latency at the top,
//! memory per worker) and [`energy`] (operations per joule, watts); the
//! load kind's own charts (DNS's rate ramps) are drawn by [`kind`] from
//! the data the kind computes.

mod dataset;
mod energy;
mod kind;
mod marks;
mod overlay;
mod seed_bars;
mod seed_figs;
mod seed_panels;
mod server_figs;

use super::svg::{
    scale, Bar, BarChart, BarSeries, Component, Fit, LineChart, LineStyle, Pt, ScaleKind, Series,
    StackedBarChart, YScale,
};
use crate::analysis::usl::predict;
use crate::judging::fits::usl_params;
use crate::judging::format;
use crate::judging::rows::{Aggregate, Cell};
use crate::record::facts::KindSection;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    Throughput,
    /// Throughput per client beside CPU load × frequency.
    PerClient,
    Latency,
    /// A chart the load kind supplies (DNS's rate ramps), in the report
    /// section it names.
    Kind(KindSection),
    Bandwidth,
    Efficiency,
    ServerCpu,
    /// Server CPU and context switches per request.
    ServerCost,
    CpuBreakdown,
    /// Memory per server worker.
    Memory,
    /// Operations per joule over watts and CPU load × frequency.
    Energy,
}

#[derive(Clone, Debug)]
pub struct Chart {
    pub kind: ChartKind,
    pub svg: maud::Markup,
    /// One sentence on how to read the chart.
    pub caption: String,
}

/// Every chart for the run, grouped by kind then group.
pub fn charts(agg: &Aggregate) -> Vec<Chart> {
    let mut out: Vec<Chart> = seed_bars::by_group_at_top(agg).into_iter().collect();
    out.extend(match overlay::groups_as_series(agg) {
        Some(flat) => per_group(&flat),
        None => per_group(agg),
    });
    out
}

/// The sections the load kind's charts among `charts` name, each once,
/// in order of their first chart.
pub fn kind_sections(charts: &[Chart]) -> Vec<KindSection> {
    let mut out: Vec<KindSection> = Vec::new();
    for c in charts {
        if let ChartKind::Kind(section) = c.kind {
            if !out.contains(&section) {
                out.push(section);
            }
        }
    }
    out
}

fn per_group(agg: &Aggregate) -> Vec<Chart> {
    let mut out = Vec::new();
    for g in 0..agg.layout.groups.len() {
        let ctx = GroupCtx::new(agg, g);
        out.extend(ctx.throughput());
        out.extend(ctx.relative_at_top());
        out.extend(ctx.combined_scaling());
        out.extend(ctx.latency());
        out.extend(ctx.latency_at_top());
        out.extend(ctx.bandwidth());
        out.extend(ctx.kind_charts());
        out.extend(ctx.efficiency());
        out.extend(ctx.server_cpu());
        out.extend(ctx.server_cost());
        out.extend(ctx.memory());
        out.extend(ctx.cpu_breakdown());
        out.extend(ctx.energy());
    }
    out
}

struct GroupCtx<'a> {
    agg: &'a Aggregate,
    group: usize,
    /// ` (load.script=tpcb)` when there are several groups.
    suffix: String,
    axis: String,
    x_kind: ScaleKind,
    /// Two or more x values: line charts; else bar charts.
    lines: bool,
    /// x is the dataset's size over the memory available, not the sweep
    /// value (see [`dataset`]).
    dataset: Option<dataset::DatasetAxis>,
}

impl<'a> GroupCtx<'a> {
    fn new(agg: &'a Aggregate, group: usize) -> Self {
        let dataset = dataset::DatasetAxis::of(agg, group);
        let xs: Vec<f64> = agg
            .cells_in_group(group)
            .filter_map(|c| match &dataset {
                Some(d) => d.x(c),
                None => c.x,
            })
            .collect();
        let label = &agg.layout.groups[group].label;
        GroupCtx {
            agg,
            group,
            suffix: if agg.layout.groups.len() > 1 && !label.is_empty() {
                format!(" ({label})")
            } else {
                String::new()
            },
            axis: match &dataset {
                Some(d) => d.label(),
                None => agg.layout.x_axis.clone().unwrap_or_else(|| "point".into()),
            },
            x_kind: scale::choose_kind(&xs),
            lines: scale::distinct(&xs).len() >= 2,
            dataset,
        }
    }

    /// Where a cell sits on this group's x axis.
    fn x(&self, c: &Cell) -> Option<f64> {
        match &self.dataset {
            Some(d) => d.x(c),
            None => c.x,
        }
    }

    /// The x axis's name with its unit where the name does not say it.
    fn x_label(&self) -> String {
        let a = self.axis.to_ascii_lowercase();
        if a.ends_with("frame_size") || a.ends_with("memory") {
            format!("{} (bytes)", self.axis)
        } else {
            self.axis.clone()
        }
    }

    /// `at connections=64`, or `at a dataset 1.9× the server memory limit`.
    fn at(&self, x: f64) -> String {
        match &self.dataset {
            Some(d) => format!("at a dataset {} the {}", dataset::ratio(x), d.yardstick()),
            None => format!("at {}={}", self.axis, format::axis_value(x)),
        }
    }

    /// How x values are written on this group's axis and in marks.
    fn x_format(&self) -> fn(f64) -> String {
        match self.dataset {
            Some(_) => dataset::ratio,
            None => format::axis_value,
        }
    }

    fn id(&self, kind: &str) -> String {
        format!("{kind}-{}", self.group)
    }

    fn cells(&self, system: &str) -> Vec<&'a Cell> {
        let mut v: Vec<&Cell> = self
            .agg
            .cells_in_group(self.group)
            .filter(|c| c.system == system)
            .collect();
        v.sort_by(|a, b| {
            let (xa, xb) = (self.x(a).unwrap_or(0.0), self.x(b).unwrap_or(0.0));
            xa.total_cmp(&xb)
        });
        v
    }

    fn line_chart(&self, kind: &str, title: &str, y_label: &str) -> LineChart {
        let mut c = LineChart::new(
            &self.id(kind),
            &format!("{title}{}", self.suffix),
            &self.x_label(),
            y_label,
        );
        c.x_kind = self.x_kind;
        c.x_format = self.x_format();
        c.hollow_meaning = "hollow marker: a trial at this point was client-bound".into();
        if let Some(d) = &self.dataset {
            c.marks.push(d.one_line());
        }
        c
    }

    /// Per system, one series per `(name, style, value)`, labelled
    /// `system name` in the system's colour.
    fn styled_series(
        &self,
        kinds: &[(&str, LineStyle, CellValue)],
        fmt: fn(f64) -> String,
    ) -> Vec<Series> {
        let mut out = Vec::new();
        for (i, s) in self.agg.systems.iter().enumerate() {
            for (name, style, get) in kinds {
                let points: Vec<Pt> = self
                    .cells(s)
                    .into_iter()
                    .filter_map(|c| Some(self.point(c, get(c)?, fmt)))
                    .collect();
                if !points.is_empty() {
                    let mut series = plain_series(&format!("{s} {name}"), i, points);
                    series.style = *style;
                    out.push(series);
                }
            }
        }
        out
    }

    /// One series per system of `value(cell)`, as line-chart points.
    fn series_of(&self, value: impl Fn(&Cell) -> Option<Pt>) -> Vec<Series> {
        self.agg
            .systems
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let points: Vec<Pt> = self.cells(s).into_iter().filter_map(&value).collect();
                (!points.is_empty()).then(|| plain_series(s, i, points))
            })
            .collect()
    }

    fn throughput(&self) -> Option<Chart> {
        if !self.lines {
            return self.throughput_bars();
        }
        let mut c = self.line_chart("throughput", "Throughput", &self.rate_label());
        let (mut bands, mut run_bands) = (false, false);
        for (i, s) in self.agg.systems.iter().enumerate() {
            let cells = self.cells(s);
            let points: Vec<Pt> = cells
                .iter()
                .filter_map(|c| self.throughput_point(c))
                .collect();
            if points.is_empty() {
                continue;
            }
            let mut series = plain_series(s, i, points);
            series.band = cells
                .iter()
                .filter_map(|c| {
                    let (lo, hi) = match between_runs_band(c, self.agg.headline) {
                        Some(range) => {
                            run_bands = true;
                            range
                        }
                        None => c.summary.as_ref()?.median_ci?,
                    };
                    Some((self.x(c)?, lo, hi))
                })
                .collect();
            bands |= !series.band.is_empty();
            series.fit = self.usl_curve(s);
            c.marks.extend(self.peak_marks(s, i));
            c.series.push(series);
            let points = cells.iter().map(|c| (self.x(c), c.limiter.as_ref()));
            let row = crate::limiter_view::strip_row(s, super::svg::color(i), points);
            c.strip.rows.extend(row);
        }
        c.strip.heading = "What limited each point (hover a cell for the figures):".into();
        let kind = self.kind_marks();
        c.guides.extend(kind.guides);
        let cpus = self.cpu_count_mark();
        let cpus_marked = cpus.is_some();
        c.marks.extend(cpus);
        c.marks.extend(kind.marks);
        if !c.guides.is_empty() {
            // A line rate can sit decades above what a software router
            // forwards: log10 keeps both readable.
            c.y_scale = YScale::Log10;
        }
        let fits = c.series.iter().any(|s| s.fit.is_some());
        let caption = format!(
            "Markers: {} of the successful trials; bars: min–max{}{}{}{}.",
            self.agg.headline_word(),
            match (bands, run_bands) {
                (_, true) =>
                    "; shading: a series of repeated runs spans its runs' lowest to highest \
                              headline (the drift between runs), others the 95% CI of the median",
                (true, false) => "; shading: 95% CI of the median",
                _ => "",
            },
            if fits {
                "; dashed: Universal Scalability Law fit"
            } else {
                ""
            },
            if c.marks.iter().any(|m| m.color.is_some()) {
                "; dashed verticals: each curve's measured peak and, past it, a decline or collapse"
            } else {
                ""
            },
            if kind.guide_captions.is_empty() {
                String::new()
            } else {
                format!("; grey dotted: {}", kind.guide_captions.join("; "))
            },
        ) + self.direction_sentence()
            + &kind.sentences.concat()
            + if cpus_marked {
                " Grey dashed vertical: the CPUs the server could use."
            } else {
                ""
            }
            + &self.dataset.as_ref().map_or(String::new(), |d| {
                format!(
                    " Grey dashed vertical: the dataset as large as the {} (1×); past it the \
                     data no longer fits.",
                    d.yardstick()
                )
            })
            + if c.strip.rows.is_empty() {
                ""
            } else {
                " The strip under the axis names what limited each point (docs/limiter.md)."
            };
        self.finish(ChartKind::Throughput, c, caption)
    }

    fn usl_curve(&self, system: &str) -> Option<Fit> {
        if self.dataset.is_some() {
            return None;
        }
        let sf = self.agg.fit(system, self.group)?;
        let usl = sf.usl.as_ref()?.as_ref().ok()?;
        let (x0, x1) = (sf.points.first()?.0, sf.points.last()?.0);
        let log = self.x_kind.is_log() && x0 > 0.0;
        let curve = (0..=64)
            .map(|k| {
                let t = k as f64 / 64.0;
                let x = if log {
                    x0 * (x1 / x0).powf(t)
                } else {
                    x0 + (x1 - x0) * t
                };
                (x, predict(usl, x))
            })
            .filter(|(_, y)| y.is_finite())
            .collect();
        Some(Fit {
            curve,
            label: format!(
                "USL fit: {}{}",
                usl_params(usl),
                if sf.caveat.fit.is_some() {
                    " (on client/background-limited trials)"
                } else {
                    ""
                }
            ),
        })
    }

    fn throughput_bars(&self) -> Option<Chart> {
        let c = self.summary_bars("Throughput", &self.rate_label(), format::rate, |c| {
            c.summary.as_ref()
        });
        let caption = format!(
            "Bars: {} of the successful trials; whiskers: min–max.",
            self.agg.headline_word()
        );
        self.finish_bars(ChartKind::Throughput, c, caption)
    }

    /// One bar per point and system of a summary's headline, whiskers
    /// min–max: the charts of a group with a single x.
    fn summary_bars(
        &self,
        title: &str,
        y_label: &str,
        fmt: fn(f64) -> String,
        summary: fn(&Cell) -> Option<&crate::analysis::summary::Summary>,
    ) -> BarChart {
        let points: Vec<_> = self.agg.layout.groups[self.group]
            .points
            .iter()
            .filter_map(|i| self.agg.points.iter().find(|p| p.index == *i))
            .collect();
        let mut c = BarChart::new(&format!("{title}{}", self.suffix), &self.x_label(), y_label);
        c.value_format = fmt;
        c.axes.categories = points
            .iter()
            .map(|p| self.agg.layout.short_label(p))
            .collect();
        for (i, s) in self.agg.systems.iter().enumerate() {
            let values: Vec<Option<Bar>> = points
                .iter()
                .map(|p| {
                    let cell = self.agg.cell(s, p.index)?;
                    let sum = summary(cell)?;
                    Some(Bar {
                        value: sum.headline,
                        lo: Some(sum.min),
                        hi: Some(sum.max),
                        tip: tip(cell, sum.headline, fmt),
                    })
                })
                .collect();
            if values.iter().any(Option::is_some) {
                c.series.push(BarSeries {
                    label: s.clone(),
                    color: i,
                    values,
                });
            }
        }
        c
    }

    fn latency(&self) -> Option<Chart> {
        if !self.lines {
            return None;
        }
        let mut c = self.line_chart("latency", "Latency percentiles", "latency");
        c.y_format = |v| format::latency_us(v).replace(".00", "");
        c.series = self.styled_series(
            &[
                ("p50", LineStyle::Solid, |c| c.latency.p50_us),
                ("p99", LineStyle::Dashed, |c| c.latency.p99_us),
            ],
            format::latency_us,
        );
        let ys: Vec<f64> = c
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.y))
            .collect();
        let (lo, hi) = ys
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(*y), b.max(*y)));
        if hi / lo > 30.0 {
            c.y_scale = YScale::Log10;
        }
        let caption =
            "Solid: p50, dashed: p99; each the median across trials of that trial's percentile.";
        self.finish(ChartKind::Latency, c, caption.into())
    }

    fn efficiency(&self) -> Option<Chart> {
        if !self.lines || self.dataset.is_some() || !self.agg.usl_axis {
            return None;
        }
        let mut base = None;
        let mut c = self.line_chart(
            "efficiency",
            "Scaling efficiency",
            "efficiency (1 = linear scaling)",
        );
        c.y_scale = YScale::FromZero;
        for (i, s) in self.agg.systems.iter().enumerate() {
            let Some(shape) = self.agg.fit(s, self.group).and_then(|f| f.shape.as_ref()) else {
                continue;
            };
            base = base.or(shape.efficiency.first().map(|e| e.0));
            let points = shape
                .efficiency
                .iter()
                .map(|(n, e)| Pt {
                    x: *n,
                    y: *e,
                    tip: format!("{s}, {}={}: {:.2}", self.axis, format::axis_value(*n), e),
                    ..Pt::default()
                })
                .collect();
            c.series.push(plain_series(s, i, points));
        }
        let base = base?;
        c.reference = Some((1.0, "linear scaling".into()));
        let caption = format!(
            "Throughput per unit of {axis}, normalised to {axis}={}: 1.0 is perfect linear \
             scaling, lower means each added unit buys less.",
            format::axis_value(base),
            axis = self.axis
        );
        self.finish(ChartKind::Efficiency, c, caption)
    }

    fn server_cpu(&self) -> Option<Chart> {
        if !self.lines {
            return None;
        }
        let has_util = self.agg.cells.iter().any(|c| c.server.cpu_util.is_some());
        let (y_label, caption) = if has_util {
            (
                "server CPU (CPUs busy)",
                "CPU time of the server's processes per second of wall time: \
                 1.0 is one CPU fully busy.",
            )
        } else {
            (
                "machine CPU busy (% of all CPUs)",
                "Share of all CPUs not idle while the trial ran (machine-wide).",
            )
        };
        let mut c = self.line_chart("cpu", "Server CPU", y_label);
        c.series = self.series_of(|c| {
            let v = if has_util {
                c.server.cpu_util?
            } else {
                c.server.cpu_busy? * 100.0
            };
            Some(self.point(c, v, |v| format!("{v:.2}")))
        });
        self.finish(ChartKind::ServerCpu, c, caption.into())
    }

    /// What each request costs the server: CPU microseconds and context
    /// switches per request, one chart each.
    fn server_cost(&self) -> Vec<Chart> {
        if !self.lines {
            return Vec::new();
        }
        let metrics: [(&str, &str, &str, CellValue); 3] = [
            (
                "cpu-per-req",
                "Server CPU per request",
                "server CPU (us per request)",
                |c| c.server.cpu_us_per_request,
            ),
            (
                "cs-per-req",
                "Server context switches per request",
                "context switches per request",
                |c| c.server.ctx_per_request,
            ),
            (
                "syscalls-per-req",
                "Server system calls per request",
                "system calls per request",
                |c| c.server.work.as_ref()?.syscalls,
            ),
        ];
        let mut out = Vec::new();
        for (id, title, y_label, value) in metrics {
            let mut c = self.line_chart(id, title, y_label);
            c.y_scale = YScale::FromZero;
            c.series =
                self.series_of(|cell| Some(self.point(cell, value(cell)?, |v| format!("{v:.1}"))));
            let caption = format!(
                "{title}{}, from the server's process tree over the measured window: a \
                 rise past the peak shows the server spending more per unit of work.",
                self.words().request_is
            );
            out.extend(self.finish(ChartKind::ServerCost, c, caption));
        }
        out
    }

    fn cpu_breakdown(&self) -> Option<Chart> {
        if self.dataset.is_some() {
            return self.cpu_breakdown_per_point();
        }
        let top_x = self
            .agg
            .cells_in_group(self.group)
            .filter(|c| c.server.cpu_shares.is_some())
            .filter_map(|c| self.x(c))
            .fold(f64::NEG_INFINITY, f64::max);
        let cells: Vec<&Cell> = self
            .agg
            .systems
            .iter()
            .filter_map(|s| {
                let mut cs = self.cells(s);
                cs.retain(|c| {
                    let x = self.x(c);
                    c.server.cpu_shares.is_some() && (x.is_none() || x == Some(top_x))
                });
                cs.pop()
            })
            .collect();
        if cells.is_empty() {
            return None;
        }
        let at = if top_x.is_finite() {
            format!(" {}", self.at(top_x))
        } else {
            String::new()
        };
        // Series made from groups (see `overlay`) are named `axis=value`.
        let x_label = match cells.first().map(|c| c.system.split_once('=')) {
            Some(Some((axis, _))) if cells.iter().all(|c| c.system.contains('=')) => axis,
            _ => "system",
        };
        let title = format!("Where the CPUs went{at}{}", self.suffix);
        let categories = cells.iter().map(|c| c.system.clone()).collect();
        Some(self.cpu_split_chart(&title, x_label, categories, &cells))
    }

    /// The CPU split at every point of a dataset-size axis, where the
    /// cliff past the memory limit moves time from user and system to I/O
    /// wait (the pg-readonly guide's promise): one bar per system and
    /// point, named by the point's dataset / memory ratio.
    fn cpu_breakdown_per_point(&self) -> Option<Chart> {
        let mut cells: Vec<&Cell> = Vec::new();
        for s in &self.agg.systems {
            cells.extend(
                self.cells(s)
                    .into_iter()
                    .filter(|c| c.server.cpu_shares.is_some()),
            );
        }
        if cells.is_empty() {
            return None;
        }
        let one_system = self.agg.systems.len() == 1;
        let fmt = self.x_format();
        let categories = cells
            .iter()
            .map(|c| {
                let x = self.x(c).map(fmt).unwrap_or_default();
                if one_system {
                    x
                } else {
                    format!("{} {x}", c.system)
                }
            })
            .collect();
        let title = format!("Where the CPUs went at each dataset size{}", self.suffix);
        let x_label = self.dataset.as_ref().map(|d| d.label()).unwrap_or_default();
        Some(self.cpu_split_chart(&title, &x_label, categories, &cells))
    }

    /// A stacked bar per cell: the machine's CPU time by state.
    fn cpu_split_chart(
        &self,
        title: &str,
        x_label: &str,
        categories: Vec<String>,
        cells: &[&Cell],
    ) -> Chart {
        let mut c = StackedBarChart::new(title, x_label, "% of all CPUs");
        c.axes.y_format = |v| format!("{v:.0}%");
        c.y_max = Some(100.0);
        c.axes.categories = categories;
        // user, nice, system, irq, softirq, iowait, steal (Okabe-Ito).
        let colors = [
            "#0072B2", "#56B4E9", "#D55E00", "#CC79A7", "#E69F00", "#009E73", "#000000",
        ];
        for (k, name) in crate::record::probe::CpuSplit::SHARES.iter().enumerate() {
            let values: Vec<f64> = cells
                .iter()
                .map(|c| {
                    c.server
                        .cpu_shares
                        .map(|s| s.shares()[k] * 100.0)
                        .unwrap_or(0.0)
                })
                .collect();
            if values.iter().any(|v| *v > 0.0) {
                c.components.push(Component {
                    label: name.to_string(),
                    color: colors[k],
                    values,
                });
            }
        }
        Chart {
            kind: ChartKind::CpuBreakdown,
            svg: c.render(),
            caption: "Machine-wide CPU time by state (mean over CPUs, median trial), \
                      including the load generator's share."
                .into(),
        }
    }

    fn finish_bars(&self, kind: ChartKind, c: BarChart, caption: String) -> Option<Chart> {
        (!c.series.is_empty()).then(|| self.chart(kind, c.render(), caption))
    }

    fn finish(&self, kind: ChartKind, c: LineChart, caption: String) -> Option<Chart> {
        (!c.series.is_empty()).then(|| self.chart(kind, c.render(), caption))
    }

    fn chart(&self, kind: ChartKind, svg: maud::Markup, caption: String) -> Chart {
        Chart { kind, svg, caption }
    }
}

fn plain_series(label: &str, index: usize, points: Vec<Pt>) -> Series {
    Series {
        label: label.to_string(),
        color: index,
        marker: index,
        style: LineStyle::Solid,
        points,
        band: Vec::new(),
        fit: None,
    }
}

impl GroupCtx<'_> {
    fn throughput_point(&self, c: &Cell) -> Option<Pt> {
        let s = c.summary.as_ref()?;
        let mut p = self.point(c, s.headline, format::rate);
        p.lo = Some(s.min);
        p.hi = Some(s.max);
        p.tip = format!(
            "{} (min {}, max {}, {} ok of {} trials){}",
            p.tip,
            format::rate(s.min),
            format::rate(s.max),
            s.n,
            c.trials(),
            work_tip(c)
        );
        Some(p)
    }

    fn point(&self, c: &Cell, y: f64, fmt: fn(f64) -> String) -> Pt {
        Pt {
            x: self.x(c).unwrap_or(0.0),
            y,
            lo: None,
            hi: None,
            hollow: !c.client_bound.is_empty(),
            tip: tip(c, y, fmt),
        }
    }
}

/// One number read off a cell.
type CellValue = fn(&Cell) -> Option<f64>;

/// The work per request for a hover: `; per request: 4.02 system calls
/// (write 1.00, read 1.00), 0.51 context switches, 2.00 write-family and
/// 1.00 read-family calls, 48213 instructions (IPC 0.51)`; empty when
/// nothing was counted per request.
fn work_tip(c: &Cell) -> String {
    let Some(w) = &c.server.work else {
        return String::new();
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(calls) = w.syscalls {
        let top: Vec<String> = (w.top_syscalls.iter().take(3))
            .map(|t| format!("{} {:.2}", t.name, t.per_op))
            .collect();
        parts.push(format!("{calls:.2} system calls ({})", top.join(", ")));
        if let Some(v) = w.context_switches {
            parts.push(format!("{v:.2} context switches"));
        }
    }
    if let (Some(reads), Some(writes)) = (w.read_calls, w.write_calls) {
        parts.push(format!(
            "{writes:.2} write-family and {reads:.2} read-family calls"
        ));
    }
    if let Some(i) = w.instructions {
        let ipc = w.ipc.map(|v| format!(" (IPC {v:.2})")).unwrap_or_default();
        parts.push(format!("{i:.0} instructions{ipc}"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("; per request: {}", parts.join(", "))
}

fn tip(c: &Cell, y: f64, fmt: fn(f64) -> String) -> String {
    format!("{}, {}: {}", c.system, c.point.label(), fmt(y))
}

#[cfg(test)]
mod seed_tests;
#[cfg(test)]
mod tests;

/// A series pooled from several runs: the lowest and highest of its runs'
/// headlines at the point (the drift between runs); `None` for one run.
fn between_runs_band(
    c: &Cell,
    statistic: crate::analysis::summary::Headline,
) -> Option<(f64, f64)> {
    let rules = crate::judging::judge::Rules::symmetric(statistic, 0.0);
    let runs = crate::judging::judge::run_values(&crate::judging::judge::kept(&c.samples), &rules);
    if runs.len() < 2 {
        return None;
    }
    let lo = runs.iter().copied().reduce(f64::min)?;
    let hi = runs.iter().copied().reduce(f64::max)?;
    Some((lo, hi))
}
