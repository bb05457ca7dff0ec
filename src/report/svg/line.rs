//! Line charts: several series with markers, error bars, optional bands
//! and an optional dashed fitted curve per series.

use super::frame::{self, Frame, RIGHT, TITLE_H, X_AXIS_H};
use super::{
    color, draw_legend, legend_height, points_attr, Axis, Doc, LegendEntry, Marker, Sample,
    ScaleKind, MUTED,
};
use crate::report::format::{escape, tick};
use std::fmt::Write;

/// How the y axis is scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YScale {
    /// Linear from zero: the honest default for throughput.
    FromZero,
    /// Linear over the data's range.
    Linear,
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
    pub width: f64,
    pub plot_height: f64,
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
            width: 860.0,
            plot_height: 330.0,
        }
    }

    pub fn render(&self) -> String {
        let (xa, ya) = (self.x_axis(), self.y_axis());
        let legend = self.legend();
        let left = frame::left_margin(&ya, self.y_format);
        let f = Frame {
            left,
            top: TITLE_H,
            w: self.width - left - RIGHT,
            h: self.plot_height,
        };
        let height = f.bottom() + X_AXIS_H + legend_height(&legend, f.w) + 10.0;
        let mut doc = Doc::new(self.width, height, &self.title);
        let clip = format!("{}-clip", self.id);
        doc.push(&format!("<defs>{}</defs>", f.clip_path(&clip)));
        frame::draw_title(&mut doc, self.width, &self.title);
        frame::draw_y_axis(&mut doc, &f, &ya, self.y_format, &self.y_label);
        frame::draw_x_axis(&mut doc, &f, &xa, self.x_format, &self.x_label);
        if let Some((v, label)) = &self.reference {
            let y = f.py(&ya, *v);
            doc.push(&format!(
                r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{MUTED}" stroke-width="1" stroke-dasharray="2 3"/>"#,
                f.left,
                f.left + f.w
            ));
            doc.text(f.left + f.w - 4.0, y - 5.0, label, 11.0, "end", MUTED);
        }
        doc.push(&format!(r#"<g clip-path="url(#{})">"#, escape(&clip)));
        let n = self.series.len();
        for (i, s) in self.series.iter().enumerate() {
            let dodge = if n > 1 {
                (i as f64 - (n - 1) as f64 / 2.0) * 3.0
            } else {
                0.0
            };
            draw_series(&mut doc, &f, &xa, &ya, s, dodge);
        }
        doc.push("</g>");
        frame::draw_axis_lines(&mut doc, &f);
        draw_legend(&mut doc, &legend, f.left, f.bottom() + X_AXIS_H, f.w);
        doc.finish()
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
        ys.retain(|v| v.is_finite());
        let max = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let (min, max) = if ys.is_empty() {
            (0.0, 1.0)
        } else {
            (min, max)
        };
        match self.y_scale {
            YScale::FromZero => Axis::linear(min.max(0.0), max, true, 6),
            YScale::Linear => Axis::linear(min, max, false, 6),
            YScale::Log10 => Axis::log10_nice(&ys),
        }
    }

    fn legend(&self) -> Vec<LegendEntry> {
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
    let label = escape(&s.label);
    if !s.band.is_empty() {
        let mut pts: Vec<(f64, f64)> = s
            .band
            .iter()
            .map(|b| (f.px(xa, b.0), f.py(ya, b.2)))
            .collect();
        pts.extend(s.band.iter().rev().map(|b| (f.px(xa, b.0), f.py(ya, b.1))));
        doc.push(&format!(
            r#"<polygon class="band" points="{}" fill="{c}" fill-opacity="0.12" stroke="none"/>"#,
            points_attr(&pts)
        ));
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
        doc.push(&format!(
            r#"<path class="fit" data-series="{label}" d="{d}" fill="none" stroke="{c}" stroke-width="1.4" stroke-dasharray="{FIT_DASH}" stroke-opacity="0.85"/>"#
        ));
    }
    let xy: Vec<(f64, f64)> = s
        .points
        .iter()
        .map(|p| (f.px(xa, p.x) + dodge, f.py(ya, p.y)))
        .collect();
    for (p, (x, _)) in s.points.iter().zip(&xy) {
        if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
            let (y1, y2) = (f.py(ya, lo), f.py(ya, hi));
            doc.push(&format!(
                r#"<path class="err" d="M{x:.1},{y1:.1}V{y2:.1}M{:.1},{y1:.1}H{:.1}M{:.1},{y2:.1}H{:.1}" stroke="{c}" stroke-width="1.2" fill="none"/>"#,
                x - 3.5, x + 3.5, x - 3.5, x + 3.5
            ));
        }
    }
    let dash = s
        .style
        .dash()
        .map(|d| format!(r#" stroke-dasharray="{d}""#))
        .unwrap_or_default();
    doc.push(&format!(
        r#"<polyline class="series" data-series="{label}" points="{}" fill="none" stroke="{c}" stroke-width="2" stroke-linejoin="round"{dash}/>"#,
        points_attr(&xy)
    ));
    let marker = Marker::nth(s.marker);
    for (p, (x, y)) in s.points.iter().zip(&xy) {
        doc.push(&format!(
            "<g><title>{}</title>{}</g>",
            escape(&p.tip),
            marker.svg(*x, *y, c, p.hollow)
        ));
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
        let svg = c.render();
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
