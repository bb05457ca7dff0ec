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
/// The most of a chart's width the rows' labels may take left of the plot
/// area; a longer label is shortened in the middle, whole on hover.
pub const MAX_LABEL_ROOM: f64 = 200.0;
/// The labels' font size.
const LABEL_SIZE: f64 = 10.0;

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

    /// The left margin the rows' labels need (0 without rows), at most
    /// [`MAX_LABEL_ROOM`]: the chart widens its margin to it, so a label
    /// such as `Debian GNU/Linux 12 · seed 003 config` is not cut.
    pub fn label_room(&self) -> f64 {
        if self.rows.is_empty() {
            return 0.0;
        }
        let width = |labels: &[String]| {
            (labels.iter())
                .map(|l| super::text_width(l, LABEL_SIZE))
                .fold(0.0, f64::max)
                + 16.0
        };
        let full: Vec<String> = self.rows.iter().map(|r| r.label.clone()).collect();
        if width(&full) <= MAX_LABEL_ROOM {
            return width(&full);
        }
        width(&self.without_shared_start()).min(MAX_LABEL_ROOM)
    }

    /// The rows' labels without the words they all start with
    /// (`…quiet · seed 003 config` for `Debian GNU/Linux 12 quiet · seed
    /// 003 config`): what tells the rows apart.
    fn without_shared_start(&self) -> Vec<String> {
        let labels: Vec<&str> = self.rows.iter().map(|r| r.label.as_str()).collect();
        let first = labels.first().copied().unwrap_or("");
        // The longest run of whole words (ending in a space) they all share.
        let shared = (first.char_indices())
            .filter(|(_, c)| *c == ' ')
            .map(|(i, _)| i + 1)
            .rfind(|&n| labels.len() > 1 && labels.iter().all(|l| l.starts_with(&first[..n])))
            .unwrap_or(0);
        (labels.iter())
            .map(|l| {
                if shared == 0 {
                    l.to_string()
                } else {
                    format!("…{}", &l[shared..])
                }
            })
            .collect()
    }

    /// Each row's label as drawn in `width` pixels: whole where it fits,
    /// else without the words every row shares, else also shortened in
    /// the middle.
    fn shown_labels(&self, width: f64) -> Vec<String> {
        let short = self.without_shared_start();
        (self.rows.iter().zip(short))
            .map(|(r, short)| {
                if super::text_width(&r.label, LABEL_SIZE) <= width {
                    r.label.clone()
                } else {
                    fit_middle(&short, width)
                }
            })
            .collect()
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
        let labels = self.shown_labels(f.left - 10.0);
        for (i, (row, label)) in self.rows.iter().zip(labels).enumerate() {
            let y = top + HEAD_H + i as f64 * ROW_H;
            if label == row.label {
                doc.text(f.left - 6.0, y + 15.0, &label, LABEL_SIZE, "end", row.color);
            } else {
                let mut out = String::new();
                let _ = write!(
                    out,
                    r#"<g class="strip-label"><title>{}</title><text x="{:.1}" y="{:.1}" font-size="{LABEL_SIZE}" text-anchor="end" fill="{}">{}</text></g>"#,
                    Text(&row.label),
                    f.left - 6.0,
                    y + 15.0,
                    row.color,
                    Text(&label)
                );
                doc.push(PreEscaped(out));
            }
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
                // Centred on its x, but kept inside its cell (the first
                // cell's x sits near the plot's edge, beside the label).
                let half = super::text_width(&text, 10.0) / 2.0;
                let cx = x.min(hi - half - 2.0).max(lo + half + 2.0);
                doc.text(cx, y + 15.0, &text, 10.0, "middle", INK);
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

/// `s` shortened in the middle to fit `width` pixels at the labels' size:
/// `Debian GNU/L…seed 003 config`, so both the label's start and its
/// system (after `·`) stay readable.
fn fit_middle(s: &str, width: f64) -> String {
    if super::text_width(s, LABEL_SIZE) <= width {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let fits = (width / (LABEL_SIZE * 0.58)).floor() as usize;
    if fits < 3 {
        return "…".into();
    }
    let keep = fits - 1;
    let tail = keep / 2;
    let head = keep - tail;
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{}…{}", start.trim_end(), end.trim_start())
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

    /// Issue 46: the N-run page's labels were cut to `Debian…`. The margin
    /// grows to the widest label (up to a cap); a label past the cap keeps
    /// its start and end, and its whole text is the hover title.
    #[test]
    fn labels_get_room_and_are_shortened_in_the_middle_with_a_title() {
        let row = |label: &str| StripRow {
            label: label.into(),
            color: "#000",
            cells: vec![StripCell {
                x: 1.0,
                text: "CPU".into(),
                fill: "#eee",
                title: "server CPU".into(),
            }],
        };
        let long = |what: &str| {
            format!("Debian GNU/Linux 12 (bookworm) 6.1.0-18-amd64 {what} · seed 003 config")
        };
        let label = "Debian 12 · nginx defaults";
        let short = Strip {
            heading: String::new(),
            rows: vec![row(label)],
        };
        let room = short.label_room();
        assert!(room > super::super::text_width(label, LABEL_SIZE), "{room}");
        let strip = Strip {
            heading: "What limited each point".into(),
            rows: vec![row(&long("quiet")), row(&long("one CPU busy"))],
        };
        let room = strip.label_room();
        assert!(
            room < MAX_LABEL_ROOM,
            "the shared words need no room: {room}"
        );
        let f = Frame {
            left: room,
            top: 0.0,
            w: 400.0,
            h: 100.0,
        };
        let xa = Axis {
            kind: super::super::scale::ScaleKind::Linear,
            lo: 0.0,
            hi: 2.0,
            ticks: vec![],
        };
        let mut doc = Doc::new(800.0, 200.0, "strip");
        strip.draw(&mut doc, &f, &xa, 0.0);
        let svg = doc.finish().into_string();
        for what in ["quiet", "one CPU busy"] {
            let shown = format!("…{what} · seed 003 config");
            assert!(svg.contains(&format!(">{shown}</text>")), "{what}: {svg}");
            assert!(
                svg.contains(&format!("<title>{}</title>", long(what))),
                "{svg}"
            );
        }
        // Too long even without the shared words: both ends kept.
        let cut = fit_middle(&long("x"), 200.0);
        assert!(
            cut.starts_with("Debian GNU/Linux") && cut.ends_with("seed 003 config"),
            "{cut}"
        );
        assert!(super::super::text_width(&cut, LABEL_SIZE) <= 200.0);
    }
}
