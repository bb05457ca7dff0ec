//! The report's "Steady windows" section: per system and point, one small
//! strip per trial (its timeline buckets as a line, coloured by its class,
//! `analysis::steady`), with the share of steady trials, so a warm-up, a
//! drift or a step inside a window is seen where it happened.

use crate::analysis::steady::Steadiness;
use crate::store::{RunData, Trial};
use maud::{html, Markup, PreEscaped};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Width and height of one trial's strip, in pixels.
const W: f64 = 96.0;
const H: f64 = 22.0;

/// The colour a class is drawn in.
fn color(s: Option<Steadiness>) -> &'static str {
    match s {
        Some(Steadiness::Steady) => "#2e7d32",
        Some(Steadiness::Warming) => "#f9a825",
        Some(Steadiness::Drifting) => "#ef6c00",
        Some(Steadiness::Stepped) => "#c62828",
        Some(Steadiness::TooShort | Steadiness::Ramped) | None => "#757575",
    }
}

/// One trial's strip: an SVG polyline of its buckets, scaled to its own
/// largest, with the class and its detail on hover.
fn strip(t: &Trial) -> Markup {
    let counts = &t.timeline;
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let step = W / counts.len().max(2).saturating_sub(1) as f64;
    let mut points = String::new();
    for (i, c) in counts.iter().enumerate() {
        let y = H - 2.0 - (*c as f64 / max) * (H - 4.0);
        let _ = write!(points, "{:.1},{y:.1} ", i as f64 * step);
    }
    let class = t.window.steadiness;
    let word = class.map_or("not classified", |s| s.as_str());
    let partial = if t.window.last_partial == Some(true) {
        ", the last partial"
    } else {
        ""
    };
    let title = format!(
        "trial {}: {} ({} buckets of {} ms{partial})",
        t.trial,
        t.window.steadiness_detail.as_deref().unwrap_or(word),
        counts.len(),
        t.window.bucket_ms,
    );
    let svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img"><title>{}</title><polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/></svg>"#,
        html! { (title) }.into_string(),
        color(class),
        points.trim_end()
    );
    html! { span class="strip" { (PreEscaped(svg)) " " small { (word) } } }
}

/// The section's content, or nothing when no trial has a timeline.
pub fn section(data: &RunData) -> Markup {
    let mut cells: BTreeMap<(u32, &str), Vec<&Trial>> = BTreeMap::new();
    for t in data.trials.iter().filter(|t| !t.timeline.is_empty()) {
        cells
            .entry((t.point.index, t.system.as_str()))
            .or_default()
            .push(t);
    }
    if cells.is_empty() {
        return Markup::default();
    }
    let classified: Vec<&Trial> = cells
        .values()
        .flatten()
        .copied()
        .filter(|t| t.window.steadiness.is_some())
        .collect();
    let steady = classified
        .iter()
        .filter(|t| t.window.steadiness == Some(Steadiness::Steady))
        .count();
    html! {
        p class="muted" {
            (steady) " of " (classified.len()) " classified trials steady. Each strip is one \
             trial's completed requests per bucket over its measured window; its colour is \
             its class (docs/trusting-the-numbers.md, \"Steady windows\")."
        }
        table {
            tr { th { "point" } th { "system" } th { "trials" } }
            @for ((_, system), trials) in &cells {
                tr {
                    td { (trials[0].point.label()) }
                    td { (system) }
                    td { @for t in trials { (strip(t)) } }
                }
            }
        }
    }
}
