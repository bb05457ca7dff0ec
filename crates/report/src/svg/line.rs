//! Line charts: several series with markers, error bars, optional bands
//! and an optional dashed fitted curve per series; grey guide curves (a
//! line rate), vertical marks (a peak, a collapse, the 1.0 line of a ratio
//! axis). [`super::panels`] stacks several of them over one legend.

use super::frame::{self, Frame, RIGHT, TITLE_H, X_AXIS_H};
use super::{
    color, draw_legend, legend_height, points_attr, Axis, Doc, LegendEntry, Marker, Sample,
    ScaleKind, Text, MUTED,
};
use crate::judging::format::tick;
use maud::{html, Markup, PreEscaped};
use std::fmt::Write;

/// How the y axis is scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YScale {
    /// Linear from zero: the honest default for throughput.
    FromZero,
    /// Log10, for quantities spanning decades (latency).
    Log10,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineStyle {
    Solid,
    Dashed,
}

impl LineStyle {
    fn dash(self) -> Option<&'static str> {
        match self {
            LineStyle::Solid => None,
            LineStyle::Dashed => Some("5 3"),
        }
    }
}

/// The dash pattern of fitted curves.
const FIT_DASH: &str = "7 4";
/// The dash pattern of guide curves.
const GUIDE_DASH: &str = "2 4";
/// Vertical distance between stacked mark labels.
const MARK_ROW: f64 = 13.0;

/// Vertical marks, their labels stacked in rows so that no two overlap.
fn draw_marks(doc: &mut Doc, f: &Frame, xa: &Axis, marks: &[Mark], fmt: fn(f64) -> String) {
    let mut rows: Vec<f64> = Vec::new(); // right end of the last label per row
    let mut sorted: Vec<&Mark> = marks.iter().collect();
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
    for m in sorted {
        let x = f.px(xa, m.x);
        let c = m.color.map_or(MUTED, color);
        doc.push(PreEscaped(format!(
            r#"<line class="mark" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{c}" stroke-width="1.2" stroke-dasharray="4 3"/>"#,
            f.top,
            f.bottom()
        )));
        let text = if m.x_in_label {
            format!("{} ({})", m.label, fmt(m.x))
        } else {
            m.label.clone()
        };
        let w = super::text_width(&text, MARK_SIZE);
        // Right of the line, unless that runs past the plot.
        let (start, anchor) = if x + 4.0 + w <= f.left + f.w {
            (x + 4.0, "start")
        } else {
            (x - 4.0 - w, "end")
        };
        let row = match rows.iter().position(|end| *end + 6.0 < start) {
            Some(r) => r,
            None => {
                rows.push(f64::NEG_INFINITY);
                rows.len() - 1
            }
        };
        rows[row] = start + w;
        let tx = if anchor == "start" { start } else { x - 4.0 };
        let ty = f.top + 12.0 + row as f64 * MARK_ROW;
        doc.push(PreEscaped(format!(
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#fff" fill-opacity="0.85"/>"##,
            start - 1.0,
            ty - 10.0,
            w + 2.0,
            MARK_ROW - 1.0
        )));
        doc.text(tx, ty, &text, MARK_SIZE, anchor, c);
    }
}

const MARK_SIZE: f64 = 11.0;

fn draw_x_notes(doc: &mut Doc, f: &Frame, xa: &Axis, notes: &[XNote]) {
    let mut last_right = f64::NEG_INFINITY;
    let y = f.bottom() - 8.0;
    for n in notes {
        let x = f.px(xa, n.x);
        let w = super::text_width(&n.text, MARK_SIZE);
        let start = (x - w / 2.0).clamp(f.left + 2.0, f.left + f.w - w - 2.0);
        if start < last_right + 6.0 {
            continue;
        }
        last_right = start + w;
        doc.push(PreEscaped(format!(
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="14" fill="#fff" fill-opacity="0.9"/>"##,
            start - 2.0,
            y - 11.0,
            w + 4.0
        )));
        doc.text(start, y, &n.text, MARK_SIZE, "start", n.color);
    }
}

#[derive(Clone, Debug)]
pub struct LineChart {
    /// Unique within a page (used for the clip path id).
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_kind: ScaleKind,
    pub y_scale: YScale,
    pub x_format: fn(f64) -> String,
    pub y_format: fn(f64) -> String,
    pub series: Vec<Series>,
    /// A horizontal reference line and its label (efficiency 1.0).
    pub reference: Option<(f64, String)>,
    /// What hollow markers mean, shown in the legend when any are drawn.
    pub hollow_meaning: String,
    /// Grey dashed curves with a legend entry, such as a link's line rate.
    pub guides: Vec<Guide>,
    /// Vertical lines at an x value, labelled at the top of the plot.
    pub marks: Vec<Mark>,
    /// Short texts along the bottom of the plot at an x value (a verdict
    /// per point); one that would overlap its left neighbour is left out.
    pub x_notes: Vec<XNote>,
    /// Rows under the x axis on the same scale (what limited each point).
    pub strip: super::strip::Strip,
    /// The smallest left margin: panels stacked in one figure share theirs
    /// so their plot areas line up.
    pub min_left: f64,
    pub width: f64,
    pub plot_height: f64,
}

/// A reference curve that is not data (drawn grey and dashed).
#[derive(Clone, Debug)]
pub struct Guide {
    pub curve: Vec<(f64, f64)>,
    pub label: String,
}

/// A short text at `x` along the bottom of the plot, in `color`.
#[derive(Clone, Debug)]
pub struct XNote {
    pub x: f64,
    pub text: String,
    pub color: &'static str,
}

/// A vertical line at `x` with a short label; `color` is a palette index
/// (the system it belongs to), `None` for grey.
#[derive(Clone, Debug)]
pub struct Mark {
    pub x: f64,
    pub label: String,
    pub color: Option<usize>,
    /// Append ` (x)` to the label (off where x is no value of its own, such
    /// as halfway between two runs).
    pub x_in_label: bool,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    /// Palette index: keep one colour per system across all charts.
    pub color: usize,
    pub marker: usize,
    pub style: LineStyle,
    pub points: Vec<Pt>,
    /// (x, lo, hi): a shaded band, such as a confidence interval.
    pub band: Vec<(f64, f64, f64)>,
    pub fit: Option<Fit>,
}

/// A fitted curve, drawn dashed in the series colour.
#[derive(Clone, Debug)]
pub struct Fit {
    pub curve: Vec<(f64, f64)>,
    /// The legend text, e.g. `USL σ=0.012 κ=3.1e-4 N*=56`.
    pub label: String,
}

#[derive(Clone, Debug, Default)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    /// Error bar ends.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Drawn hollow: the point is flagged (client-bound).
    pub hollow: bool,
    /// Hover text.
    pub tip: String,
}

impl LineChart {
    pub fn new(id: &str, title: &str, x_label: &str, y_label: &str) -> LineChart {
        LineChart {
            id: id.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_kind: ScaleKind::Linear,
            y_scale: YScale::FromZero,
            x_format: tick,
            y_format: tick,
            series: Vec::new(),
            reference: None,
            hollow_meaning: "hollow marker: flagged".into(),
            guides: Vec::new(),
            marks: Vec::new(),
            x_notes: Vec::new(),
            strip: super::strip::Strip::default(),
            min_left: 0.0,
            width: 860.0,
            plot_height: 330.0,
        }
    }

    pub fn render(&self) -> Markup {
        let legend = self.legend();
        let left = self.left_margin();
        let w = self.width - left - RIGHT;
        let height = self.height() + self.strip.height() + legend_height(&legend, w) + 10.0;
        let mut doc = Doc::new(self.width, height, &self.title);
        let mut bottom = self.draw(&mut doc, left);
        if !self.strip.rows.is_empty() {
            let f = Frame {
                left,
                top: TITLE_H,
                w,
                h: self.plot_height,
            };
            self.strip.draw(&mut doc, &f, &self.x_axis(), bottom);
            bottom += self.strip.height();
        }
        draw_legend(&mut doc, &legend, left, bottom, w);
        doc.finish()
    }

    /// The left margin this chart needs (at least [`Self::min_left`]).
    pub fn left_margin(&self) -> f64 {
        frame::left_margin(&self.y_axis(), self.y_format)
            .max(self.min_left)
            .max(self.strip.label_room())
    }

    /// Title, plot and x axis, without the legend.
    pub fn height(&self) -> f64 {
        TITLE_H + self.plot_height + X_AXIS_H
    }

    /// Draws title, axes, guides, marks and series into `doc` (at its
    /// origin) with the plot area `left` from the edge; returns the y where
    /// the legend goes.
    pub fn draw(&self, doc: &mut Doc, left: f64) -> f64 {
        let (xa, ya) = (self.x_axis(), self.y_axis());
        let f = Frame {
            left,
            top: TITLE_H,
            w: self.width - left - RIGHT,
            h: self.plot_height,
        };
        let clip = format!("{}-clip", self.id);
        doc.push(html! { defs { (f.clip_path(&clip)) } });
        frame::draw_title(doc, self.width, &self.title);
        frame::draw_y_axis(doc, &f, &ya, self.y_format, &self.y_label);
        frame::draw_x_axis(doc, &f, &xa, self.x_format, &self.x_label);
        if let Some((v, label)) = &self.reference {
            let y = f.py(&ya, *v);
            doc.push(PreEscaped(format!(
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{MUTED}" stroke-width="1" stroke-dasharray="2 3"/>"#,
                f.left,
                f.left + f.w
            )));
            doc.text(f.left + f.w - 4.0, y - 5.0, label, 11.0, "end", MUTED);
        }
        draw_marks(doc, &f, &xa, &self.marks, self.x_format);
        doc.open_group_clipped(&clip);
        for g in &self.guides {
            let pts: Vec<(f64, f64)> = g
                .curve
                .iter()
                .map(|(x, y)| (f.px(&xa, *x), f.py(&ya, *y)))
                .collect();
            doc.push(PreEscaped(format!(
                r#"<polyline class="guide" points="{}" fill="none" stroke="{MUTED}" stroke-width="1.5" stroke-dasharray="{GUIDE_DASH}"/>"#,
                points_attr(&pts)
            )));
        }
        let n = self.series.len();
        for (i, s) in self.series.iter().enumerate() {
            let dodge = if n > 1 {
                (i as f64 - (n - 1) as f64 / 2.0) * 3.0
            } else {
                0.0
            };
            draw_series(doc, &f, &xa, &ya, s, dodge);
        }
        doc.push(PreEscaped("</g>"));
        draw_x_notes(doc, &f, &xa, &self.x_notes);
        frame::draw_axis_lines(doc, &f);
        f.bottom() + X_AXIS_H
    }

    fn x_axis(&self) -> Axis {
        let xs: Vec<f64> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x))
            .collect();
        match self.x_kind {
            ScaleKind::Linear => Axis::linear_data(&xs),
            kind => Axis::log_data(kind, &xs, 12),
        }
    }

    fn y_axis(&self) -> Axis {
        let mut ys: Vec<f64> = Vec::new();
        for s in &self.series {
            for p in &s.points {
                ys.extend([Some(p.y), p.lo, p.hi].into_iter().flatten());
            }
            ys.extend(s.band.iter().flat_map(|b| [b.1, b.2]));
            if let Some(fit) = &s.fit {
                ys.extend(fit.curve.iter().map(|c| c.1));
            }
        }
        if let Some((v, _)) = &self.reference {
            ys.push(*v);
        }
        for g in &self.guides {
            ys.extend(g.curve.iter().map(|c| c.1));
        }
        ys.retain(|v| v.is_finite());
        let max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let (min, max) = if ys.is_empty() {
            (0.0, 1.0)
        } else {
            (min, max)
        };
        // Room above the data for the marks' labels, stacked from the top.
        let base = if self.y_scale == YScale::FromZero {
            0.0
        } else {
            min
        };
        let max = max + (max - base) * 0.07 * self.marks.len().min(4) as f64;
        match self.y_scale {
            YScale::FromZero => Axis::linear(min.max(0.0), max, true, 6),
            YScale::Log10 => Axis::log10_nice(&ys),
        }
    }

    /// The legend entries: one per series (and fit), guides, and what
    /// hollow markers mean when any are drawn.
    pub fn legend(&self) -> Vec<LegendEntry> {
        let any_fit = self.series.iter().any(|s| s.fit.is_some());
        let mut out = Vec::new();
        for s in &self.series {
            let c = color(s.color);
            out.push(LegendEntry {
                sample: Sample::Line {
                    color: c,
                    marker: Some(Marker::nth(s.marker)),
                    dash: s.style.dash(),
                },
                label: s.label.clone(),
                new_row: any_fit,
            });
            if let Some(fit) = &s.fit {
                let sample = Sample::Line {
                    color: c,
                    marker: None,
                    dash: Some(FIT_DASH),
                };
                out.push(LegendEntry::new(sample, fit.label.clone()));
            }
        }
        for g in &self.guides {
            let sample = Sample::Line {
                color: MUTED,
                marker: None,
                dash: Some(GUIDE_DASH),
            };
            out.push(LegendEntry::new(sample, g.label.clone()));
        }
        if self.series.iter().flat_map(|s| &s.points).any(|p| p.hollow) {
            out.push(LegendEntry {
                sample: Sample::Hollow(Marker::Circle),
                label: self.hollow_meaning.clone(),
                new_row: true,
            });
        }
        out
    }
}

fn draw_series(doc: &mut Doc, f: &Frame, xa: &Axis, ya: &Axis, s: &Series, dodge: f64) {
    let c = color(s.color);
    let label = Text(&s.label);
    if !s.band.is_empty() {
        let mut pts: Vec<(f64, f64)> = s
            .band
            .iter()
            .map(|b| (f.px(xa, b.0), f.py(ya, b.2)))
            .collect();
        pts.extend(s.band.iter().rev().map(|b| (f.px(xa, b.0), f.py(ya, b.1))));
        doc.push(PreEscaped(format!(
            r#"<polygon class="band" points="{}" fill="{c}" fill-opacity="0.12" stroke="none"/>"#,
            points_attr(&pts)
        )));
    }
    if let Some(fit) = &s.fit {
        let mut d = String::new();
        for (i, (x, y)) in fit.curve.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                f.px(xa, *x),
                f.py(ya, *y)
            );
        }
        doc.push(PreEscaped(format!(
            r#"<path class="fit" data-series="{label}" d="{d}" fill="none" stroke="{c}" stroke-width="1.4" stroke-dasharray="{FIT_DASH}" stroke-opacity="0.85"/>"#
        )));
    }
    let xy: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| (f.px(xa, p.x) + dodge, f.py(ya, p.y)))
        .collect();
    for (p, (x, _)) in s.points.iter().zip(&xy) {
        if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
            let (y1, y2) = (f.py(ya, lo), f.py(ya, hi));
            doc.push(PreEscaped(format!(
                r#"<path class="err" d="M{x:.1},{y1:.1}V{y2:.1}M{:.1},{y1:.1}H{:.1}M{:.1},{y2:.1}H{:.1}" stroke="{c}" stroke-width="1.2" fill="none"/>"#,
                x - 3.5, x + 3.5, x - 3.5, x + 3.5
            )));
        }
    }
    let dash = s
        .style
        .dash()
        .map(|d| format!(r#" stroke-dasharray="{d}""#))
        .unwrap_or_default();
    doc.push(PreEscaped(format!(
        r#"<polyline class="series" data-series="{label}" points="{}" fill="none" stroke="{c}" stroke-width="2" stroke-linejoin="round"{dash}/>"#,
        points_attr(&xy)
    )));
    let marker = Marker::nth(s.marker);
    for (p, (x, y)) in s.points.iter().zip(&xy) {
        doc.push(html! { g { title { (p.tip) } (PreEscaped(marker.svg(*x, *y, c, p.hollow))) } });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, i: usize, ys: &[f64]) -> Series {
        Series {
            label: label.into(),
            color: i,
            marker: i,
            style: LineStyle::Solid,
            points: ys
                .iter()
                .enumerate()
                .map(|(k, y)| Pt {
                    x: 2f64.powi(k as i32),
                    y: *y,
                    lo: Some(y * 0.9),
                    hi: Some(y * 1.1),
                    hollow: k == 1,
                    tip: format!("{label} {y}"),
                })
                .collect(),
            band: vec![],
            fit: None,
        }
    }

    #[test]
    fn one_polyline_per_series_with_legend_and_fit() {
        let mut c = LineChart::new("t", "Throughput", "connections", "requests/s");
        c.x_kind = ScaleKind::Log2;
        c.series.push(series("alpha", 0, &[10.0, 20.0, 25.0]));
        let mut b = series("beta <x>", 1, &[12.0, 18.0, 30.0]);
        b.fit = Some(Fit {
            curve: vec![(1.0, 11.0), (2.0, 19.0), (4.0, 29.0)],
            label: "USL σ=0.1 κ=0.01 N*=9".into(),
        });
        c.series.push(b);
        let svg = c.render().into_string();
        assert_eq!(svg.matches(r#"class="series""#).count(), 2);
        assert_eq!(svg.matches(r#"class="fit""#).count(), 1);
        assert_eq!(svg.matches(r#"class="err""#).count(), 6);
        assert!(svg.contains(">alpha</text>"));
        assert!(svg.contains(">beta &lt;x&gt;</text>"));
        assert!(svg.contains("USL σ=0.1 κ=0.01 N*=9"));
        assert!(svg.contains("hollow marker"));
        assert!(!svg.contains("<x>"));
    }
}
