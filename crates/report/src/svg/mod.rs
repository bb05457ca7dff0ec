//! SVG chart primitives, written by hand (no crates): line charts with
//! error bars, bands and fitted curves; grouped and stacked bar charts.
//!
//! Every chart is a standalone SVG document (it declares its xmlns) that
//! also works inline in HTML. Styling is in presentation attributes, not a
//! `<style>` block, so several charts inline in one page cannot restyle
//! each other. Colours are the Okabe-Ito palette, which stays distinct under
//! the common colour-vision deficiencies; series also differ by marker
//! shape so the charts survive printing in grey.

mod bar;
mod dual;
mod frame;
mod line;
mod panels;
pub(crate) mod scale;
pub(crate) mod strip;

pub use bar::{Bar, BarChart, BarSeries, Component, StackedBarChart};
pub use dual::{DualAxisChart, DASHED, DOTTED};
pub use line::{Fit, Guide, LineChart, LineStyle, Mark, Pt, Series, YScale};
pub use panels::Panels;
pub use scale::{Axis, ScaleKind};

use maud::{html, Markup, PreEscaped, Render};
use std::fmt::{self, Write};

/// Text from the data, for `format!` into SVG markup: it displays escaped
/// (through `maud`), so an interpolated label cannot open a tag.
#[derive(Clone, Copy, Debug)]
pub struct Text<'a>(pub &'a str);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&html! { (self.0) }.into_string())
    }
}

/// Okabe & Ito (2008), "Color Universal Design"; yellow last, as it is
/// faint on white.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

pub const FONT: &str =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
pub const INK: &str = "#222";
pub const MUTED: &str = "#666";
pub const GRID: &str = "#e6e6e6";

/// An approximate rendered width of `s` at `size` px in a sans-serif face
/// (about 0.58 em per character); good enough for layout.
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.58
}

/// Marker shapes, cycled per series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
}

impl Marker {
    pub fn nth(i: usize) -> Marker {
        const ALL: [Marker; 6] = [
            Marker::Circle,
            Marker::Square,
            Marker::TriangleUp,
            Marker::Diamond,
            Marker::TriangleDown,
            Marker::Cross,
        ];
        ALL[i % ALL.len()]
    }

    /// The marker centred at (x, y); hollow markers are white-filled.
    pub fn svg(self, x: f64, y: f64, color: &str, hollow: bool) -> String {
        let fill = if hollow { "#fff" } else { color };
        let paint = format!(r#"fill="{fill}" stroke="{color}" stroke-width="1.5""#);
        let r = 3.6;
        match self {
            Marker::Circle => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" {paint}/>"#),
            Marker::Square => format!(
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" {paint}/>"#,
                x - r * 0.9,
                y - r * 0.9,
                r * 1.8,
                r * 1.8
            ),
            Marker::TriangleUp => polygon(
                &[(x, y - r * 1.2), (x + r, y + r * 0.8), (x - r, y + r * 0.8)],
                &paint,
            ),
            Marker::TriangleDown => polygon(
                &[(x, y + r * 1.2), (x + r, y - r * 0.8), (x - r, y - r * 0.8)],
                &paint,
            ),
            Marker::Diamond => polygon(
                &[(x, y - r * 1.3), (x + r, y), (x, y + r * 1.3), (x - r, y)],
                &paint,
            ),
            Marker::Cross => format!(
                r#"<path d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" stroke="{color}" stroke-width="2" fill="none"/>"#,
                x - r,
                y - r,
                x + r,
                y + r,
                x - r,
                y + r,
                x + r,
                y - r
            ),
        }
    }
}

fn polygon(pts: &[(f64, f64)], paint: &str) -> String {
    format!(r#"<polygon points="{}" {paint}/>"#, points_attr(pts))
}

/// `x1,y1 x2,y2 ...` with one decimal.
pub fn points_attr(pts: &[(f64, f64)]) -> String {
    let mut s = String::new();
    for (i, (x, y)) in pts.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{x:.1},{y:.1}");
    }
    s
}

/// An SVG document being written.
pub struct Doc {
    out: String,
}

impl Doc {
    /// Opens a `width` x `height` document with a white background and an
    /// accessible title.
    pub fn new(width: f64, height: f64, title: &str) -> Doc {
        let t = Text(title);
        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" style="font-family:{FONT}" role="img" aria-label="{t}"><title>{t}</title><rect width="100%" height="100%" fill="#fff"/>"##
        );
        Doc { out }
    }

    /// Appends markup. Strings are escaped (`maud::Render`); geometry
    /// written with `format!` from numbers and constants goes in as
    /// `PreEscaped`, text through `html!` or [`Doc::text`].
    pub fn push(&mut self, m: impl Render) {
        m.render_to(&mut self.out);
    }

    /// Text at (x, y); `anchor` is start, middle or end. `s` is escaped.
    pub fn text(&mut self, x: f64, y: f64, s: &str, size: f64, anchor: &str, fill: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}" text-anchor="{anchor}" fill="{fill}">{}</text>"#,
            Text(s)
        );
    }

    /// A chart's bold, centred title at (x, y).
    pub fn heading(&mut self, x: f64, y: f64, s: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{x:.1}" y="{y}" font-size="{}" font-weight="600" text-anchor="middle" fill="{INK}">{}</text>"#,
            frame::TITLE_SIZE,
            Text(s)
        );
    }

    /// Opens a group clipped by the clip path `id`; close it with
    /// `push(PreEscaped("</g>"))`.
    pub fn open_group_clipped(&mut self, id: &str) {
        let _ = write!(self.out, r#"<g clip-path="url(#{})">"#, Text(id));
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        let _ = write!(
            self.out,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}" stroke-width="{width}"/>"#
        );
    }

    pub fn finish(mut self) -> Markup {
        self.out.push_str("</svg>");
        PreEscaped(self.out)
    }
}

/// What a legend entry shows before its label.
#[derive(Clone, Debug, PartialEq)]
pub enum Sample {
    /// A line segment with an optional marker; `dash` as in stroke-dasharray.
    Line {
        color: &'static str,
        marker: Option<Marker>,
        dash: Option<&'static str>,
    },
    /// A filled square (bars).
    Swatch(&'static str),
    /// A hollow marker (flagged points).
    Hollow(Marker),
}

#[derive(Clone, Debug, PartialEq)]
pub struct LegendEntry {
    pub sample: Sample,
    pub label: String,
    /// Start a new legend row before this entry.
    pub new_row: bool,
}

impl LegendEntry {
    pub fn new(sample: Sample, label: impl Into<String>) -> Self {
        LegendEntry {
            sample,
            label: label.into(),
            new_row: false,
        }
    }
}

const LEGEND_SIZE: f64 = 12.0;
const LEGEND_ROW: f64 = 19.0;
const SAMPLE_W: f64 = 26.0;

/// Places entries left to right, wrapping at `width`: (x offset, row).
fn legend_layout(entries: &[LegendEntry], width: f64) -> Vec<(f64, usize)> {
    let mut out = Vec::new();
    let (mut x, mut row) = (0.0, 0);
    for (i, e) in entries.iter().enumerate() {
        let w = SAMPLE_W + 6.0 + text_width(&e.label, LEGEND_SIZE) + 18.0;
        if i > 0 && (e.new_row || x + w > width) {
            row += 1;
            x = 0.0;
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// The height the legend needs at `width`.
pub fn legend_height(entries: &[LegendEntry], width: f64) -> f64 {
    legend_layout(entries, width)
        .last()
        .map(|(_, r)| (*r + 1) as f64 * LEGEND_ROW)
        .unwrap_or(0.0)
}

/// Draws the legend with its top-left corner at (x, y).
pub fn draw_legend(doc: &mut Doc, entries: &[LegendEntry], x: f64, y: f64, width: f64) {
    for (e, (dx, row)) in entries.iter().zip(legend_layout(entries, width)) {
        let (sx, cy) = (x + dx, y + row as f64 * LEGEND_ROW + LEGEND_ROW / 2.0);
        match &e.sample {
            Sample::Line {
                color,
                marker,
                dash,
            } => {
                let dash = dash
                    .map(|d| format!(r#" stroke-dasharray="{d}""#))
                    .unwrap_or_default();
                doc.push(PreEscaped(format!(
                    r#"<line x1="{sx:.1}" y1="{cy:.1}" x2="{:.1}" y2="{cy:.1}" stroke="{color}" stroke-width="2"{dash}/>"#,
                    sx + SAMPLE_W
                )));
                if let Some(m) = marker {
                    doc.push(PreEscaped(m.svg(sx + SAMPLE_W / 2.0, cy, color, false)));
                }
            }
            Sample::Swatch(color) => doc.push(PreEscaped(format!(
                r#"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{color}"/>"#,
                sx + SAMPLE_W / 2.0 - 6.0,
                cy - 6.0
            ))),
            Sample::Hollow(m) => doc.push(PreEscaped(m.svg(sx + SAMPLE_W / 2.0, cy, MUTED, true))),
        }
        doc.text(
            sx + SAMPLE_W + 6.0,
            cy + 4.0,
            &e.label,
            LEGEND_SIZE,
            "start",
            INK,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_standalone_and_escaped() {
        let mut d = Doc::new(100.0, 50.0, "a <b> & c");
        d.text(1.0, 2.0, "<script>", 10.0, "start", INK);
        let s = d.finish().into_string();
        assert!(s.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#));
        assert!(s.ends_with("</svg>"));
        assert!(s.contains("a &lt;b&gt; &amp; c"));
        assert!(!s.contains("<script>"));
    }

    #[test]
    fn pushed_strings_and_text_are_escaped_unless_marked_as_markup() {
        let mut d = Doc::new(10.0, 10.0, "t");
        d.push("<script>a</script>".to_string());
        d.push(PreEscaped("<g/>"));
        d.heading(1.0, 2.0, "\"><img src=x onerror=alert(1)>");
        d.open_group_clipped("x\"><script>");
        let s = d.finish().into_string();
        assert!(!s.contains("<script>") && !s.contains("<img"), "{s}");
        assert!(s.contains("&lt;script&gt;a&lt;/script&gt;<g/>"));
        assert!(s.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
        assert_eq!(format!("{}", Text("a & b")), "a &amp; b");
    }

    #[test]
    fn legend_wraps_and_honours_new_rows() {
        let mk = |l: &str, new_row| LegendEntry {
            sample: Sample::Swatch(color(0)),
            label: l.into(),
            new_row,
        };
        let entries = vec![mk("aaaa", false), mk("bbbb", false), mk("cccc", true)];
        let rows: Vec<usize> = legend_layout(&entries, 1000.0)
            .iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(rows, vec![0, 0, 1]);
        let rows: Vec<usize> = legend_layout(&entries, 60.0).iter().map(|p| p.1).collect();
        assert_eq!(rows, vec![0, 1, 2]);
        assert_eq!(legend_height(&entries, 60.0), 3.0 * LEGEND_ROW);
    }
}
