//! A strip under a line chart's x axis: one row per series, one coloured
//! cell per x value with a short word (what limited that point), so the
//! bend of the curve and its cause line up. The cells share the chart's x
//! scale; each carries a hover title with the whole sentence.

use super::frame::Frame;
use super::scale::Axis;
use super::{Doc, Text, INK, MUTED};
use maud::PreEscaped;
use std::fmt::Write;

/// Height of one row.
pub const ROW_H: f64 = 22.0;
/// Space above the strip for its heading.
const HEAD_H: f64 = 16.0;

/// One row: a series' label and its cells.
#[derive(Clone, Debug)]
pub struct StripRow {
    /// The row's label (the system), drawn left of the plot area.
    pub label: String,
    /// The row's colour (the system's palette colour).
    pub color: &'static str,
    /// Its cells, by x.
    pub cells: Vec<StripCell>,
}

/// One x value of a row.
#[derive(Clone, Debug)]
pub struct StripCell {
    /// Where, in data units of the chart's x axis.
    pub x: f64,
    /// A word or two.
    pub text: String,
    /// The cell's fill.
    pub fill: &'static str,
    /// The whole verdict, shown on hover.
    pub title: String,
}

/// A titled strip of rows.
#[derive(Clone, Debug, Default)]
pub struct Strip {
    /// The heading above the rows.
    pub heading: String,
    /// The rows, top to bottom.
    pub rows: Vec<StripRow>,
}

impl Strip {
    /// The height it takes; 0 when it has no row.
    pub fn height(&self) -> f64 {
        if self.rows.is_empty() {
            0.0
        } else {
            HEAD_H + ROW_H * self.rows.len() as f64 + 6.0
        }
    }

    /// Draws the strip with its top at `top`, its cells under `f`'s plot
    /// area on the axis `xa`.
    pub fn draw(&self, doc: &mut Doc, f: &Frame, xa: &Axis, top: f64) {
        if self.rows.is_empty() {
            return;
        }
        doc.text(f.left, top + 11.0, &self.heading, 11.0, "start", MUTED);
        let xs: Vec<f64> = {
            let mut v: Vec<f64> = self
                .rows
                .iter()
                .flat_map(|r| r.cells.iter().map(|c| f.px(xa, c.x)))
                .collect();
            v.sort_by(f64::total_cmp);
            v.dedup_by(|a, b| (*a - *b).abs() < 0.5);
            v
        };
        for (i, row) in self.rows.iter().enumerate() {
            let y = top + HEAD_H + i as f64 * ROW_H;
            let label = fit_text(&row.label, f.left - 10.0);
            doc.text(f.left - 6.0, y + 15.0, &label, 10.0, "end", row.color);
            for c in &row.cells {
                let x = f.px(xa, c.x);
                let (lo, hi) = cell_span(&xs, x, f);
                let mut out = String::new();
                let _ = write!(
                    out,
                    r#"<g class="limiter-cell"><title>{}</title><rect x="{lo:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" rx="3"/></g>"#,
                    Text(&c.title),
                    y + 1.0,
                    (hi - lo - 2.0).max(1.0),
                    ROW_H - 3.0,
                    c.fill
                );
                doc.push(PreEscaped(out));
                let width = hi - lo - 4.0;
                let text = fit_text(&c.text, width);
                doc.text(x, y + 15.0, &text, 10.0, "middle", INK);
            }
        }
    }
}

/// A cell reaches halfway to its neighbours (to the plot's edge at the ends).
fn cell_span(xs: &[f64], x: f64, f: &Frame) -> (f64, f64) {
    let i = xs.iter().position(|v| (v - x).abs() < 0.5).unwrap_or(0);
    let lo = if i == 0 {
        f.left.max(x - 60.0)
    } else {
        (xs[i - 1] + x) / 2.0
    };
    let hi = xs
        .get(i + 1)
        .map(|n| (n + x) / 2.0)
        .unwrap_or((f.left + f.w).min(x + 60.0));
    (lo + 1.0, hi)
}

/// `s`, shortened with an ellipsis to fit `width` pixels at 10 px.
fn fit_text(s: &str, width: f64) -> String {
    if super::text_width(s, 10.0) <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().collect();
    while !out.is_empty() && super::text_width(&format!("{out}…"), 10.0) > width {
        out.pop();
    }
    if out.is_empty() {
        String::new()
    } else {
        format!("{}…", out.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_meet_halfway_and_long_words_are_cut() {
        let f = Frame {
            left: 50.0,
            top: 0.0,
            w: 400.0,
            h: 100.0,
        };
        let xs = [100.0, 200.0, 400.0];
        assert_eq!(cell_span(&xs, 200.0, &f), (151.0, 300.0));
        assert_eq!(cell_span(&xs, 100.0, &f), (51.0, 150.0));
        assert_eq!(cell_span(&xs, 400.0, &f), (301.0, 450.0));
        assert_eq!(fit_text("locks", 200.0), "locks");
        let cut = fit_text("server CPU saturated", 40.0);
        assert!(cut.ends_with('…') && cut.len() < 20, "{cut}");
    }
}
