//! The plot area shared by every chart: title, axes, ticks and grid.

use super::{text_width, Axis, Doc, GRID, INK, MUTED};
use maud::{html, Markup, PreEscaped};

pub const TICK_SIZE: f64 = 11.0;
pub const LABEL_SIZE: f64 = 12.0;
pub const TITLE_SIZE: f64 = 15.0;
/// Space above the plot area for the title.
pub const TITLE_H: f64 = 40.0;
/// Space below the plot area for tick labels and the x-axis label.
pub const X_AXIS_H: f64 = 46.0;
pub const RIGHT: f64 = 24.0;

/// The plot area in document coordinates.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub left: f64,
    pub top: f64,
    pub w: f64,
    pub h: f64,
}

impl Frame {
    pub fn px(&self, axis: &Axis, v: f64) -> f64 {
        self.left + axis.frac(v) * self.w
    }

    pub fn py(&self, axis: &Axis, v: f64) -> f64 {
        self.top + self.h - axis.frac(v) * self.h
    }

    pub fn bottom(&self) -> f64 {
        self.top + self.h
    }

    /// A clip path with id `id` around the plot area (a little slack so
    /// markers on the edge are whole).
    pub fn clip_path(&self, id: &str) -> Markup {
        let rect = format!(
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/>"#,
            self.left - 6.0,
            self.top - 6.0,
            self.w + 12.0,
            self.h + 12.0
        );
        html! { clipPath id=(id) { (PreEscaped(rect)) } }
    }
}

/// The left margin that fits the y tick labels and the rotated axis label.
pub fn left_margin(axis: &Axis, fmt: fn(f64) -> String) -> f64 {
    let widest = axis
        .ticks
        .iter()
        .map(|t| text_width(&fmt(*t), TICK_SIZE))
        .fold(0.0, f64::max);
    widest + 36.0
}

pub fn draw_title(doc: &mut Doc, width: f64, title: &str) {
    doc.heading(width / 2.0, 24.0, title);
}

/// Horizontal grid lines, y tick labels and the rotated y-axis label.
pub fn draw_y_axis(doc: &mut Doc, f: &Frame, axis: &Axis, fmt: fn(f64) -> String, label: &str) {
    for t in &axis.ticks {
        let y = f.py(axis, *t);
        if y < f.top - 0.5 || y > f.bottom() + 0.5 {
            continue;
        }
        doc.line((f.left, y), (f.left + f.w, y), GRID, 1.0);
        doc.text(f.left - 6.0, y + 4.0, &fmt(*t), TICK_SIZE, "end", INK);
    }
    let (x, y) = (14.0, f.top + f.h / 2.0);
    let ys = format!("{y:.1}");
    doc.push(html! {
        text x=(x) y=(ys) font-size=(LABEL_SIZE) text-anchor="middle" fill=(INK)
            transform={ "rotate(-90 " (x) " " (ys) ")" } { (label) }
    });
}

/// Tick marks, x tick labels (skipping any that would overlap the previous
/// one) and the x-axis label.
pub fn draw_x_axis(doc: &mut Doc, f: &Frame, axis: &Axis, fmt: fn(f64) -> String, label: &str) {
    let mut last_right = f64::NEG_INFINITY;
    for t in &axis.ticks {
        let x = f.px(axis, *t);
        doc.line((x, f.bottom()), (x, f.bottom() + 4.0), INK, 1.0);
        doc.line((x, f.top), (x, f.bottom()), GRID, 0.6);
        let text = fmt(*t);
        let half = text_width(&text, TICK_SIZE) / 2.0;
        if x - half > last_right + 4.0 {
            doc.text(x, f.bottom() + 17.0, &text, TICK_SIZE, "middle", INK);
            last_right = x + half;
        }
    }
    draw_x_label(doc, f, label);
}

pub fn draw_x_label(doc: &mut Doc, f: &Frame, label: &str) {
    doc.text(
        f.left + f.w / 2.0,
        f.bottom() + 38.0,
        label,
        LABEL_SIZE,
        "middle",
        INK,
    );
}

/// The left and bottom axis lines, drawn last so they sit over the data.
pub fn draw_axis_lines(doc: &mut Doc, f: &Frame) {
    doc.line((f.left, f.top), (f.left, f.bottom()), MUTED, 1.0);
    doc.line((f.left, f.bottom()), (f.left + f.w, f.bottom()), MUTED, 1.0);
}
