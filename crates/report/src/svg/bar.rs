//! Bar charts over categories: grouped bars (one per series, with error
//! bars) and stacked bars (components of a whole, such as CPU states).

use super::frame::{self, Frame, LABEL_SIZE, RIGHT, TICK_SIZE, TITLE_H};
use super::{color, draw_legend, legend_height, text_width, Axis, Doc, LegendEntry, Sample, INK};
use crate::judging::format::tick;
use maud::{html, Markup, PreEscaped};

/// Bars grouped by category, one bar per series in each group.
#[derive(Clone, Debug)]
pub struct BarChart {
    pub axes: BarAxes,
    pub series: Vec<BarSeries>,
    /// The label printed above each bar.
    pub value_format: fn(f64) -> String,
    /// Text printed above the bar of (series, category) instead of its
    /// value (a ratio to the baseline).
    pub bar_labels: std::collections::BTreeMap<(usize, usize), String>,
}

/// The titles, categories and y axis both kinds of bar chart share.
#[derive(Clone, Debug)]
pub struct BarAxes {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub y_format: fn(f64) -> String,
    pub width: f64,
    pub plot_height: f64,
}

#[derive(Clone, Debug)]
pub struct BarSeries {
    pub label: String,
    pub color: usize,
    /// One per category; `None` draws nothing.
    pub values: Vec<Option<Bar>>,
}

#[derive(Clone, Debug, Default)]
pub struct Bar {
    pub value: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub tip: String,
}

/// Bars whose segments stack to a total.
#[derive(Clone, Debug)]
pub struct StackedBarChart {
    pub axes: BarAxes,
    pub components: Vec<Component>,
    /// Fix the top of the y axis (100% for shares of the CPUs).
    pub y_max: Option<f64>,
}

#[derive(Clone, Debug)]
pub struct Component {
    pub label: String,
    pub color: &'static str,
    /// One per category.
    pub values: Vec<f64>,
}

/// Category slots along x, with labels rotated when they do not fit.
struct Categories<'a> {
    labels: &'a [String],
    rotate: bool,
}

impl<'a> Categories<'a> {
    fn new(labels: &'a [String], plot_w: f64) -> Self {
        let slot = plot_w / labels.len().max(1) as f64;
        let widest = labels
            .iter()
            .map(|l| text_width(l, TICK_SIZE))
            .fold(0.0, f64::max);
        Categories {
            labels,
            rotate: widest > slot - 6.0,
        }
    }

    fn height(&self) -> f64 {
        let widest = self
            .labels
            .iter()
            .map(|l| text_width(l, TICK_SIZE))
            .fold(0.0, f64::max);
        if self.rotate {
            widest * 0.5 + 44.0
        } else {
            frame::X_AXIS_H
        }
    }

    fn slot(&self, f: &Frame) -> f64 {
        f.w / self.labels.len().max(1) as f64
    }

    fn center(&self, f: &Frame, i: usize) -> f64 {
        f.left + (i as f64 + 0.5) * self.slot(f)
    }

    fn draw(&self, doc: &mut Doc, f: &Frame, axis_label: &str) {
        let y = f.bottom() + 16.0;
        for (i, l) in self.labels.iter().enumerate() {
            let x = self.center(f, i);
            if self.rotate {
                let (xs, ys) = (format!("{x:.1}"), format!("{y:.1}"));
                doc.push(html! {
                    text x=(xs) y=(ys) font-size=(TICK_SIZE) text-anchor="end" fill=(INK)
                        transform={ "rotate(-30 " (xs) " " (ys) ")" } { (l) }
                });
            } else {
                doc.text(x, y, l, TICK_SIZE, "middle", INK);
            }
        }
        doc.text(
            f.left + f.w / 2.0,
            f.bottom() + self.height() - 8.0,
            axis_label,
            LABEL_SIZE,
            "middle",
            INK,
        );
    }
}

fn layout(width: f64, y: &Axis, fmt: fn(f64) -> String, plot_height: f64) -> Frame {
    let left = frame::left_margin(y, fmt);
    Frame {
        left,
        top: TITLE_H,
        w: width - left - RIGHT,
        h: plot_height,
    }
}

impl BarAxes {
    fn new(title: &str, x_label: &str, y_label: &str) -> BarAxes {
        BarAxes {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            categories: Vec::new(),
            y_format: tick,
            width: 860.0,
            plot_height: 300.0,
        }
    }
}

/// A bar chart's document with its title, y axis and category slots laid
/// out; the caller draws the bars, [`Canvas::finish`] the axes and legend.
struct Canvas<'a> {
    axes: &'a BarAxes,
    doc: Doc,
    f: Frame,
    ya: Axis,
    cats: Categories<'a>,
    legend: Vec<LegendEntry>,
    bottom: f64,
}

impl<'a> Canvas<'a> {
    fn new(axes: &'a BarAxes, ya: Axis, legend: Vec<LegendEntry>) -> Self {
        let f = layout(axes.width, &ya, axes.y_format, axes.plot_height);
        let cats = Categories::new(&axes.categories, f.w);
        let bottom = f.bottom() + cats.height();
        let height = bottom + legend_height(&legend, f.w) + 10.0;
        let mut doc = Doc::new(axes.width, height, &axes.title);
        frame::draw_title(&mut doc, axes.width, &axes.title);
        frame::draw_y_axis(&mut doc, &f, &ya, axes.y_format, &axes.y_label);
        Canvas {
            axes,
            doc,
            f,
            ya,
            cats,
            legend,
            bottom,
        }
    }

    fn finish(mut self) -> Markup {
        let f = &self.f;
        frame::draw_axis_lines(&mut self.doc, f);
        self.cats.draw(&mut self.doc, f, &self.axes.x_label);
        draw_legend(&mut self.doc, &self.legend, f.left, self.bottom, f.w);
        self.doc.finish()
    }
}

impl BarChart {
    pub fn new(title: &str, x_label: &str, y_label: &str) -> BarChart {
        BarChart {
            axes: BarAxes::new(title, x_label, y_label),
            series: Vec::new(),
            value_format: tick,
            bar_labels: Default::default(),
        }
    }

    pub fn render(&self) -> Markup {
        let bars = self.series.iter().flat_map(|s| s.values.iter().flatten());
        let max = bars
            .map(|b| b.hi.unwrap_or(b.value).max(b.value))
            .fold(0.0, f64::max);
        let ya = Axis::linear(0.0, max * 1.08, true, 6);
        let legend = self
            .series
            .iter()
            .map(|s| LegendEntry::new(Sample::Swatch(color(s.color)), s.label.clone()))
            .collect();
        let mut canvas = Canvas::new(&self.axes, ya, legend);
        let (f, ya, cats, doc) = (canvas.f, &canvas.ya, &canvas.cats, &mut canvas.doc);
        let n = self.series.len().max(1) as f64;
        let bar_w = (cats.slot(&f) * 0.72 / n).min(56.0);
        for (si, s) in self.series.iter().enumerate() {
            let c = color(s.color);
            for (ci, bar) in s.values.iter().enumerate() {
                let Some(b) = bar else { continue };
                let x = cats.center(&f, ci) + (si as f64 - (n - 1.0) / 2.0) * bar_w;
                let top = f.py(ya, b.value);
                let (bx, bw) = (x - bar_w / 2.0 + 1.0, bar_w - 2.0);
                let bh = (f.bottom() - top).max(0.0);
                doc.push(html! {
                    g {
                        title { (b.tip) }
                        rect class="bar" data-series=(s.label) x=(format!("{bx:.1}"))
                            y=(format!("{top:.1}")) width=(format!("{bw:.1}"))
                            height=(format!("{bh:.1}")) fill=(c) {}
                    }
                });
                let mut label_y = top;
                if let (Some(lo), Some(hi)) = (b.lo, b.hi) {
                    let (y1, y2) = (f.py(ya, lo), f.py(ya, hi));
                    doc.push(PreEscaped(format!(
                        r##"<path class="err" d="M{x:.1},{y1:.1}V{y2:.1}M{:.1},{y1:.1}H{:.1}M{:.1},{y2:.1}H{:.1}" stroke="#222" stroke-width="1.2" fill="none"/>"##,
                        x - 4.0, x + 4.0, x - 4.0, x + 4.0
                    )));
                    label_y = label_y.min(y2);
                }
                let label = (self.bar_labels.get(&(si, ci)))
                    .cloned()
                    .unwrap_or_else(|| (self.value_format)(b.value));
                doc.text(x, label_y - 5.0, &label, 10.5, "middle", INK);
            }
        }
        canvas.finish()
    }
}

impl StackedBarChart {
    pub fn new(title: &str, x_label: &str, y_label: &str) -> StackedBarChart {
        StackedBarChart {
            axes: BarAxes::new(title, x_label, y_label),
            components: Vec::new(),
            y_max: None,
        }
    }

    fn total(&self, ci: usize) -> f64 {
        self.components
            .iter()
            .map(|c| c.values.get(ci).copied().unwrap_or(0.0).max(0.0))
            .sum()
    }

    pub fn render(&self) -> Markup {
        let max = (0..self.axes.categories.len())
            .map(|i| self.total(i))
            .fold(0.0, f64::max);
        // Shares that sum to a hair over 100% (rounding in the probe's
        // counters) keep the 100% top rather than jumping to 150%.
        let top = match self.y_max {
            Some(m) if max <= m * 1.02 => m,
            _ => max,
        };
        let ya = Axis::linear(0.0, top, true, 6);
        let legend = self
            .components
            .iter()
            .map(|c| LegendEntry::new(Sample::Swatch(c.color), c.label.clone()))
            .collect();
        let mut canvas = Canvas::new(&self.axes, ya, legend);
        let (f, ya, cats, doc) = (canvas.f, &canvas.ya, &canvas.cats, &mut canvas.doc);
        let bar_w = (cats.slot(&f) * 0.55).min(90.0);
        for ci in 0..self.axes.categories.len() {
            let x = cats.center(&f, ci) - bar_w / 2.0;
            let mut base = 0.0;
            for comp in &self.components {
                let v = comp.values.get(ci).copied().unwrap_or(0.0).max(0.0);
                if v > 0.0 {
                    let (y_top, y_base) = (f.py(ya, base + v), f.py(ya, base));
                    let rect = format!(
                        r#"<rect class="stack" x="{x:.1}" y="{y_top:.1}" width="{bar_w:.1}" height="{:.1}" fill="{}"/>"#,
                        y_base - y_top,
                        comp.color
                    );
                    doc.push(html! {
                        g {
                            title {
                                (self.axes.categories[ci]) ": " (comp.label) " "
                                ((self.axes.y_format)(v))
                            }
                            (PreEscaped(rect))
                        }
                    });
                }
                base += v;
            }
            let top = f.py(ya, base);
            doc.text(
                x + bar_w / 2.0,
                top - 5.0,
                &(self.axes.y_format)(base),
                10.5,
                "middle",
                INK,
            );
        }
        canvas.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_bars_per_series_and_category() {
        let mut c = BarChart::new("Throughput at c=4000", "system", "requests/s");
        c.axes.categories = vec!["c=4000".into()];
        for (i, (l, v)) in [("Debian", 63_936.0), ("FreeBSD", 82_122.0)]
            .iter()
            .enumerate()
        {
            c.series.push(BarSeries {
                label: l.to_string(),
                color: i,
                values: vec![Some(Bar {
                    value: *v,
                    lo: Some(v * 0.95),
                    hi: Some(v * 1.02),
                    tip: String::new(),
                })],
            });
        }
        let svg = c.render().into_string();
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2);
        assert_eq!(svg.matches(r#"class="err""#).count(), 2);
        assert!(svg.contains(">FreeBSD</text>") && svg.contains(">82.122k</text>"));
    }

    #[test]
    fn stacks_sum_to_their_total() {
        let mut c = StackedBarChart::new("CPU", "system", "% of all CPUs");
        c.axes.categories = vec!["a".into(), "b".into()];
        c.axes.y_format = |v| format!("{:.0}%", v);
        c.components = vec![
            Component {
                label: "user".into(),
                color: "#0072B2",
                values: vec![30.0, 10.0],
            },
            Component {
                label: "system".into(),
                color: "#D55E00",
                values: vec![20.0, 0.0],
            },
        ];
        let svg = c.render().into_string();
        assert_eq!(
            svg.matches(r#"class="stack""#).count(),
            3,
            "zero segments are not drawn"
        );
        assert!(svg.contains(">50%</text>") && svg.contains(">10%</text>"));
    }
}
