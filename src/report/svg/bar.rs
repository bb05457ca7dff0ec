//! Bar charts over categories: grouped bars (one per series, with error
//! bars) and stacked bars (components of a whole, such as CPU states).

use super::frame::{self, Frame, LABEL_SIZE, RIGHT, TICK_SIZE, TITLE_H};
use super::{color, draw_legend, legend_height, text_width, Axis, Doc, LegendEntry, Sample, INK};
use crate::report::format::{escape, tick};

/// Bars grouped by category, one bar per series in each group.
#[derive(Clone, Debug)]
pub struct BarChart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
    pub y_format: fn(f64) -> String,
    /// The label printed above each bar.
    pub value_format: fn(f64) -> String,
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
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub components: Vec<Component>,
    pub y_format: fn(f64) -> String,
    /// Fix the top of the y axis (100% for shares of the CPUs).
    pub y_max: Option<f64>,
    pub width: f64,
    pub plot_height: f64,
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
                doc.push(&format!(
                    r#"<text x="{x:.1}" y="{y:.1}" font-size="{TICK_SIZE}" text-anchor="end" fill="{INK}" transform="rotate(-30 {x:.1} {y:.1})">{}</text>"#,
                    escape(l)
                ));
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

impl BarChart {
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str) -> BarChart {
        BarChart {
            id: id.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            categories: Vec::new(),
            series: Vec::new(),
            y_format: tick,
            value_format: tick,
            width: 860.0,
            plot_height: 300.0,
        }
    }

    pub fn render(&self) -> String {
        let bars = self.series.iter().flat_map(|s| s.values.iter().flatten());
        let max = bars
            .map(|b| b.hi.unwrap_or(b.value).max(b.value))
            .fold(0.0, f64::max);
        let ya = Axis::linear(0.0, max * 1.08, true, 6);
        let f = layout(self.width, &ya, self.y_format, self.plot_height);
        let cats = Categories::new(&self.categories, f.w);
        let legend: Vec<LegendEntry> = self
            .series
            .iter()
            .map(|s| LegendEntry::new(Sample::Swatch(color(s.color)), s.label.clone()))
            .collect();
        let bottom = f.bottom() + cats.height();
        let mut doc = Doc::new(
            self.width,
            bottom + legend_height(&legend, f.w) + 10.0,
            &self.title,
        );
        frame::draw_title(&mut doc, self.width, &self.title);
        frame::draw_y_axis(&mut doc, &f, &ya, self.y_format, &self.y_label);
        let n = self.series.len().max(1) as f64;
        let bar_w = (cats.slot(&f) * 0.72 / n).min(56.0);
        for (si, s) in self.series.iter().enumerate() {
            let c = color(s.color);
            for (ci, bar) in s.values.iter().enumerate() {
                let Some(b) = bar else { continue };
                let x = cats.center(&f, ci) + (si as f64 - (n - 1.0) / 2.0) * bar_w;
                let top = f.py(&ya, b.value);
                doc.push(&format!(
                    r#"<g><title>{}</title><rect class="bar" data-series="{}" x="{:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{c}"/></g>"#,
                    escape(&b.tip),
                    escape(&s.label),
                    x - bar_w / 2.0 + 1.0,
                    bar_w - 2.0,
                    (f.bottom() - top).max(0.0)
                ));
                let mut label_y = top;
                if let (Some(lo), Some(hi)) = (b.lo, b.hi) {
                    let (y1, y2) = (f.py(&ya, lo), f.py(&ya, hi));
                    doc.push(&format!(
                        r##"<path class="err" d="M{x:.1},{y1:.1}V{y2:.1}M{:.1},{y1:.1}H{:.1}M{:.1},{y2:.1}H{:.1}" stroke="#222" stroke-width="1.2" fill="none"/>"##,
                        x - 4.0, x + 4.0, x - 4.0, x + 4.0
                    ));
                    label_y = label_y.min(y2);
                }
                doc.text(
                    x,
                    label_y - 5.0,
                    &(self.value_format)(b.value),
                    10.5,
                    "middle",
                    INK,
                );
            }
        }
        frame::draw_axis_lines(&mut doc, &f);
        cats.draw(&mut doc, &f, &self.x_label);
        draw_legend(&mut doc, &legend, f.left, bottom, f.w);
        doc.finish()
    }
}

impl StackedBarChart {
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str) -> StackedBarChart {
        StackedBarChart {
            id: id.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            categories: Vec::new(),
            components: Vec::new(),
            y_format: tick,
            y_max: None,
            width: 860.0,
            plot_height: 300.0,
        }
    }

    fn total(&self, ci: usize) -> f64 {
        self.components
            .iter()
            .map(|c| c.values.get(ci).copied().unwrap_or(0.0).max(0.0))
            .sum()
    }

    pub fn render(&self) -> String {
        let max = (0..self.categories.len())
            .map(|i| self.total(i))
            .fold(0.0, f64::max);
        let ya = Axis::linear(0.0, self.y_max.unwrap_or(max).max(max), true, 6);
        let f = layout(self.width, &ya, self.y_format, self.plot_height);
        let cats = Categories::new(&self.categories, f.w);
        let legend: Vec<LegendEntry> = self
            .components
            .iter()
            .map(|c| LegendEntry::new(Sample::Swatch(c.color), c.label.clone()))
            .collect();
        let bottom = f.bottom() + cats.height();
        let mut doc = Doc::new(
            self.width,
            bottom + legend_height(&legend, f.w) + 10.0,
            &self.title,
        );
        frame::draw_title(&mut doc, self.width, &self.title);
        frame::draw_y_axis(&mut doc, &f, &ya, self.y_format, &self.y_label);
        let bar_w = (cats.slot(&f) * 0.55).min(90.0);
        for ci in 0..self.categories.len() {
            let x = cats.center(&f, ci) - bar_w / 2.0;
            let mut base = 0.0;
            for comp in &self.components {
                let v = comp.values.get(ci).copied().unwrap_or(0.0).max(0.0);
                if v > 0.0 {
                    let (y_top, y_base) = (f.py(&ya, base + v), f.py(&ya, base));
                    doc.push(&format!(
                        r#"<g><title>{}: {}</title><rect class="stack" x="{x:.1}" y="{y_top:.1}" width="{bar_w:.1}" height="{:.1}" fill="{}"/></g>"#,
                        escape(&self.categories[ci]),
                        escape(&format!("{} {}", comp.label, (self.y_format)(v))),
                        y_base - y_top,
                        comp.color
                    ));
                }
                base += v;
            }
            let top = f.py(&ya, base);
            doc.text(
                x + bar_w / 2.0,
                top - 5.0,
                &(self.y_format)(base),
                10.5,
                "middle",
                INK,
            );
        }
        frame::draw_axis_lines(&mut doc, &f);
        cats.draw(&mut doc, &f, &self.x_label);
        draw_legend(&mut doc, &legend, f.left, bottom, f.w);
        doc.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_bars_per_series_and_category() {
        let mut c = BarChart::new("b", "Throughput at c=4000", "system", "requests/s");
        c.categories = vec!["c=4000".into()];
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
        let svg = c.render();
        assert_eq!(svg.matches(r#"class="bar""#).count(), 2);
        assert_eq!(svg.matches(r#"class="err""#).count(), 2);
        assert!(svg.contains(">FreeBSD</text>") && svg.contains(">82.122k</text>"));
    }

    #[test]
    fn stacks_sum_to_their_total() {
        let mut c = StackedBarChart::new("s", "CPU", "system", "% of all CPUs");
        c.categories = vec!["a".into(), "b".into()];
        c.y_format = |v| format!("{:.0}%", v);
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
        let svg = c.render();
        assert_eq!(
            svg.matches(r#"class="stack""#).count(),
            3,
            "zero segments are not drawn"
        );
        assert!(svg.contains(">50%</text>") && svg.contains(">10%</text>"));
    }
}
