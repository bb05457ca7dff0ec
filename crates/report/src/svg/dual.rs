//! A line chart with two y axes whose scales are linked: a value `r` on
//! the right axis sits where `r × link` sits on the left. Seed 000's
//! figure draws TPS (left) with TPS per thread and CPU load × frequency as
//! ratios to a baseline thread count (right) on one plot, so that where the
//! curves part is the finding; linking the scales at the baseline makes
//! every curve pass through the same point there.

use super::frame::{self, Frame, LABEL_SIZE, TICK_SIZE, TITLE_H, X_AXIS_H};
use super::{
    color, draw_legend, legend_height, points_attr, text_width, Axis, Doc, LegendEntry, Mark,
    Marker, Sample, ScaleKind, Series, Text, INK, MUTED,
};
use crate::judging::format::tick;
use maud::{html, Markup, PreEscaped};

/// Two linked y axes over one x axis.
#[derive(Clone, Debug)]
pub struct DualAxisChart {
    pub title: String,
    /// A warning drawn under the title in the warning colour (a nominal
    /// CPU frequency), or none.
    pub warning: Option<String>,
    pub x_label: String,
    pub left_label: String,
    pub right_label: String,
    pub x_kind: ScaleKind,
    pub x_format: fn(f64) -> String,
    pub left_format: fn(f64) -> String,
    pub right_format: fn(f64) -> String,
    /// Series read on the left axis, each with its dash pattern
    /// ([`DASHED`], [`DOTTED`] or `None` for solid).
    pub left: Vec<(Series, Option<&'static str>)>,
    /// Series read on the right axis, likewise.
    pub right: Vec<(Series, Option<&'static str>)>,
    /// The left value at which the right axis reads 1.0.
    pub link: f64,
    /// Vertical lines at an x value (grey, labelled at the top).
    pub marks: Vec<Mark>,
    pub width: f64,
    pub plot_height: f64,
}

/// A dashed series.
pub const DASHED: &str = "7 4";
/// A dotted series.
pub const DOTTED: &str = "2 3";
/// The warning colour (the page's `--warn`).
const WARN: &str = "#9a6700";

impl DualAxisChart {
    pub fn new(title: &str, x_label: &str, left_label: &str, right_label: &str) -> Self {
        DualAxisChart {
            title: title.into(),
            warning: None,
            x_label: x_label.into(),
            left_label: left_label.into(),
            right_label: right_label.into(),
            x_kind: ScaleKind::Linear,
            x_format: tick,
            left_format: tick,
            right_format: |v| format!("{v:.2}"),
            left: Vec::new(),
            right: Vec::new(),
            link: 1.0,
            marks: Vec::new(),
            width: 860.0,
            plot_height: 360.0,
        }
    }

    /// The whole SVG document.
    pub fn render(&self) -> Markup {
        let (xa, la, ra) = (self.x_axis(), self.left_axis(), self.right_axis());
        let left = frame::left_margin(&la, self.left_format);
        let right = frame::left_margin(&ra, self.right_format);
        let top = TITLE_H + if self.warning.is_some() { 18.0 } else { 0.0 };
        let f = Frame {
            left,
            top,
            w: self.width - left - right,
            h: self.plot_height,
        };
        let legend = self.legend();
        let bottom = f.bottom() + X_AXIS_H;
        let height = bottom + legend_height(&legend, f.w) + 10.0;
        let mut doc = Doc::new(self.width, height, &self.title);
        frame::draw_title(&mut doc, self.width, &self.title);
        if let Some(w) = &self.warning {
            doc.push(html! {
                text class="warning" x=(format!("{:.1}", self.width / 2.0)) y="50"
                    font-size=(LABEL_SIZE) font-weight="600" text-anchor="middle" fill=(WARN) {
                    "⚠ " (w)
                }
            });
        }
        frame::draw_y_axis(&mut doc, &f, &la, self.left_format, &self.left_label);
        self.draw_right_axis(&mut doc, &f, &la, &ra);
        frame::draw_x_axis(&mut doc, &f, &xa, self.x_format, &self.x_label);
        for m in &self.marks {
            let x = f.px(&xa, m.x);
            doc.push(PreEscaped(format!(
                r#"<line class="mark" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{MUTED}" stroke-width="1.2" stroke-dasharray="4 3"/>"#,
                f.top,
                f.bottom()
            )));
            doc.text(x + 4.0, f.top + 12.0, &m.label, 11.0, "start", MUTED);
        }
        for (s, dash) in &self.left {
            draw(&mut doc, &f, &xa, |v| f.py(&la, v), s, *dash);
        }
        for (s, dash) in &self.right {
            draw(&mut doc, &f, &xa, |v| f.py(&la, v * self.link), s, *dash);
        }
        frame::draw_axis_lines(&mut doc, &f);
        doc.line(
            (f.left + f.w, f.top),
            (f.left + f.w, f.bottom()),
            MUTED,
            1.0,
        );
        draw_legend(&mut doc, &legend, f.left, bottom, f.w);
        doc.finish()
    }

    fn x_axis(&self) -> Axis {
        let xs: Vec<f64> = (self.left.iter().chain(&self.right))
            .flat_map(|(s, _)| s.points.iter().map(|p| p.x))
            .collect();
        match self.x_kind {
            ScaleKind::Linear => Axis::linear_data(&xs),
            kind => Axis::log_data(kind, &xs, 12),
        }
    }

    /// From zero to the largest value of either side, in left units.
    fn left_axis(&self) -> Axis {
        let left = (self.left.iter()).flat_map(|(s, _)| s.points.iter().map(|p| p.y));
        let right = (self.right.iter()).flat_map(|(s, _)| s.points.iter().map(|p| p.y * self.link));
        let max = left
            .chain(right)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        Axis::linear(0.0, max * 1.05, true, 6)
    }

    /// Nice ratio ticks over the left axis's range.
    fn right_axis(&self) -> Axis {
        let hi = self.left_axis().hi / self.link;
        let mut a = Axis::linear(0.0, hi, true, 6);
        a.ticks.retain(|t| *t <= hi * 1.0001);
        a
    }

    fn draw_right_axis(&self, doc: &mut Doc, f: &Frame, la: &Axis, ra: &Axis) {
        let x = f.left + f.w;
        for t in &ra.ticks {
            let y = f.py(la, t * self.link);
            doc.line((x, y), (x + 4.0, y), INK, 1.0);
            let label = (self.right_format)(*t);
            doc.text(x + 6.0, y + 4.0, &label, TICK_SIZE, "start", INK);
        }
        let widest = (ra.ticks.iter())
            .map(|t| text_width(&(self.right_format)(*t), TICK_SIZE))
            .fold(0.0, f64::max);
        let (lx, ly) = (x + widest + 22.0, f.top + f.h / 2.0);
        let (xs, ys) = (format!("{lx:.1}"), format!("{ly:.1}"));
        doc.push(html! {
            text class="right-axis" x=(xs) y=(ys) font-size=(LABEL_SIZE) text-anchor="middle" fill=(INK)
                transform={ "rotate(90 " (xs) " " (ys) ")" } { (self.right_label) }
        });
    }

    fn legend(&self) -> Vec<LegendEntry> {
        (self.left.iter().chain(&self.right))
            .map(|(s, dash)| LegendEntry {
                sample: Sample::Line {
                    color: color(s.color),
                    marker: Some(Marker::nth(s.marker)),
                    dash: *dash,
                },
                label: s.label.clone(),
                new_row: false,
            })
            .collect()
    }
}

fn draw(
    doc: &mut Doc,
    f: &Frame,
    xa: &Axis,
    py: impl Fn(f64) -> f64,
    s: &Series,
    dash: Option<&str>,
) {
    let c = color(s.color);
    let xy: Vec<(f64, f64)> = s.points.iter().map(|p| (f.px(xa, p.x), py(p.y))).collect();
    let dash = dash
        .map(|d| format!(r#" stroke-dasharray="{d}""#))
        .unwrap_or_default();
    doc.push(PreEscaped(format!(
        r#"<polyline class="series" data-series="{}" points="{}" fill="none" stroke="{c}" stroke-width="2" stroke-linejoin="round"{dash}/>"#,
        Text(&s.label),
        points_attr(&xy)
    )));
    let marker = Marker::nth(s.marker);
    for (p, (x, y)) in s.points.iter().zip(&xy) {
        doc.push(html! { g { title { (p.tip) } (PreEscaped(marker.svg(*x, *y, c, p.hollow))) } });
    }
}
