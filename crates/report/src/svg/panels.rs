//! Several line charts stacked in one figure over a shared x axis: their
//! plot areas share one left edge, so the same x falls at the same place
//! in every panel, and one legend below them all (seed 000's TPS beside
//! TPS per client; seeds 001/003's requests/s over Gbit/s).

use super::frame::RIGHT;
use super::{draw_legend, legend_height, Doc, LegendEntry, LineChart};
use maud::{Markup, PreEscaped};

/// Space for the figure's own title above the first panel.
const HEADER_H: f64 = 30.0;

#[derive(Clone, Debug)]
pub struct Panels {
    pub title: String,
    /// Top to bottom. Each keeps its own title (the panel's heading), y
    /// axis and x axis labels; their legends are merged.
    pub panels: Vec<LineChart>,
}

impl Panels {
    pub fn new(title: &str, panels: Vec<LineChart>) -> Panels {
        Panels {
            title: title.into(),
            panels,
        }
    }

    pub fn render(&self) -> Markup {
        let width = self.panels.iter().map(|p| p.width).fold(0.0, f64::max);
        let left = self
            .panels
            .iter()
            .map(LineChart::left_margin)
            .fold(0.0, f64::max);
        let legend = self.legend();
        let plot_w = width - left - RIGHT;
        let body: f64 = self.panels.iter().map(LineChart::height).sum();
        let height = HEADER_H + body + legend_height(&legend, plot_w) + 10.0;
        let mut doc = Doc::new(width, height, &self.title);
        doc.heading(width / 2.0, 20.0, &self.title);
        let mut top = HEADER_H;
        for p in &self.panels {
            doc.push(PreEscaped(format!(
                r#"<g transform="translate(0 {top:.1})">"#
            )));
            let mut panel = p.clone();
            panel.width = width;
            panel.draw(&mut doc, left);
            doc.push(PreEscaped("</g>"));
            top += p.height();
        }
        draw_legend(&mut doc, &legend, left, top, plot_w);
        doc.finish()
    }

    /// Every panel's entries, each label once.
    fn legend(&self) -> Vec<LegendEntry> {
        let mut out: Vec<LegendEntry> = Vec::new();
        for e in self.panels.iter().flat_map(LineChart::legend) {
            if !out.iter().any(|o| o.label == e.label) {
                out.push(e);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{LineStyle, Pt, Series};

    fn chart(id: &str, ys: &[f64]) -> LineChart {
        let mut c = LineChart::new(id, id, "connections", "y");
        c.series.push(Series {
            label: "nginx".into(),
            color: 0,
            marker: 0,
            style: LineStyle::Solid,
            points: ys
                .iter()
                .enumerate()
                .map(|(i, y)| Pt {
                    x: i as f64 + 1.0,
                    y: *y,
                    ..Pt::default()
                })
                .collect(),
            band: vec![],
            fit: None,
        });
        c
    }

    #[test]
    fn panels_share_the_left_edge_and_one_legend() {
        // Wide tick labels on the second panel push both plot areas right.
        let p = Panels::new(
            "two",
            vec![chart("a", &[1.0, 2.0]), chart("b", &[1e6, 2.5e6])],
        );
        let svg = p.render().into_string();
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches(r#"class="series""#).count(), 2);
        assert_eq!(svg.matches(">nginx</text>").count(), 1, "one legend");
        let (own, shared) = (p.panels[0].left_margin(), p.panels[1].left_margin());
        assert!(shared > own);
        let axis_at = |x: f64| {
            svg.matches(&format!(r#"<line x1="{x:.1}" y1="40.0""#))
                .count()
        };
        assert!(
            axis_at(shared) >= 2,
            "both panels' y axes at the shared edge"
        );
        assert_eq!(axis_at(own), 0);
    }
}
