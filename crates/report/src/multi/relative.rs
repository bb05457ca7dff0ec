//! The N-run page's "Relative to the baseline" section, drawn from the
//! comparison `compare` prints ([`crate::judging::multi::verdicts`]): per system and
//! point each side's value with its % of the baseline's and its mark, the
//! geometric mean, and each side's verdicts with the 95% CI of the ratio.
//! The values and the % are the ones the verdicts divide.

use super::text::{geomean_cell, system_cell, value};
use crate::analysis::compare::{sentence_for, Verdict};
use crate::judging::format;
use crate::judging::multi::verdicts::SideComparison;
use crate::judging::runs::{PointComparison, RunComparison};
use crate::judging::verdict::{self, Tone};
use maud::{html, Markup};

/// The whole section's tables.
pub fn tables(baseline: &str, sides: &[SideComparison]) -> Markup {
    html! {
        (matrix(baseline, sides))
        @for s in sides { (side_verdicts(baseline, s)) }
    }
}

/// `(system, point)` in the order the comparisons list them.
fn row_keys(sides: &[SideComparison]) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for p in sides.iter().flat_map(|s| &s.comparison.points) {
        let key = (p.system.clone(), p.point.clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

fn point_of<'a>(
    c: &'a RunComparison,
    (system, point): &(String, String),
) -> Option<&'a PointComparison> {
    (c.points.iter()).find(|p| &p.system == system && &p.point == point)
}

/// One row per (system, point), one column per side, the baseline first.
fn matrix(baseline: &str, sides: &[SideComparison]) -> Markup {
    let keys = row_keys(sides);
    let Some(first) = sides.first() else {
        return Markup::default();
    };
    html! {
        div class="scroll" { table {
            tr {
                th { "system" } th { "point" }
                th class="n" { (baseline) " " (first.comparison.value_name_a()) }
                @for s in sides { th class="n" { (s.side) " " (s.comparison.value_name_b()) } }
            }
            @for key in &keys {
                tr {
                    td { (key.0) } td { (key.1) }
                    td class="n" {
                        (sides.iter().find_map(|s| point_of(&s.comparison, key)).map_or("–".into(), |p| value(p.value_a)))
                    }
                    @for s in sides { (relative_cell(point_of(&s.comparison, key))) }
                }
            }
            tr class="first" {
                td { b { "geomean" } } td {} td class="n" { "100%" }
                @for s in sides {
                    td class="n" {
                        (s.comparison.geomean.as_ref().map_or("–".into(), |g| format!(
                            "{}{}", format::percent(g.ratio), verdict::percent_mark(Some(g)))))
                    }
                }
            }
        } }
    }
}

/// `8.04k (80% ?)`, `8.04k ✗` where not comparable, `–` where missing.
fn relative_cell(p: Option<&PointComparison>) -> Markup {
    let Some(p) = p else {
        return html! { td class="n" { "–" } };
    };
    let c = &p.comparison;
    let excluded = matches!(c.verdict, Verdict::NotComparable { .. });
    let text = match (p.value_b, excluded) {
        (Some(v), true) => format!("{} {}", format::rate(v), verdict::EXCLUDED),
        (None, true) => verdict::EXCLUDED.to_string(),
        (Some(v), false) => format!(
            "{} ({}{})",
            format::rate(v),
            format::percent(c.ratio),
            verdict::percent_mark(Some(c))
        ),
        (None, false) => "–".into(),
    };
    html! { td class=(if excluded { "n bad" } else { "n" }) { (text) } }
}

/// One side's verdicts, as `compare` prints them, with the CI.
fn side_verdicts(baseline: &str, s: &SideComparison) -> Markup {
    let c = &s.comparison;
    let tone = |cmp| match verdict::short(cmp).1 {
        Tone::Better => "good",
        Tone::Worse => "bad",
        Tone::Same | Tone::Unknown => "same",
    };
    html! {
        h3 { "Verdicts of " (s.side) " against " (baseline) }
        div class="scroll" { table class="grid" {
            tr {
                th { "system" } th { "point" }
                th class="n" { (baseline) " " (c.value_name_a()) }
                th class="n" { (s.side) " " (c.value_name_b()) }
                th class="n" { "change" } th class="n" { "95% CI" }
            }
            @for p in &c.points {
                tr {
                    td { (system_cell(p)) } td { (p.point) }
                    td class="n" { (value(p.value_a)) } td class="n" { (value(p.value_b)) }
                    td class={ "wrap " (tone(&p.comparison)) }
                        title=(sentence_for(&p.comparison, &s.side)) { (verdict::short(&p.comparison).0) }
                    td class="n" { (verdict::ci(&p.comparison).unwrap_or_else(|| "–".into())) }
                }
            }
            @if let (Some(cell), Some(g)) = (geomean_cell(c), &c.geomean) {
                tr class="first" {
                    td { b { "geomean" } } td {} td {} td {}
                    td class={ "wrap " (tone(g)) } title=(sentence_for(g, &s.side)) { (cell) }
                    td class="n" { (verdict::ci(g).unwrap_or_else(|| "–".into())) }
                }
            }
        } }
        @if !c.only_in_a.is_empty() || !c.only_in_b.is_empty() {
            p class="muted" {
                @if !c.only_in_a.is_empty() { "Only in " (baseline) ": " (c.only_in_a.join(", ")) ". " }
                @if !c.only_in_b.is_empty() { "Only in " (s.side) ": " (c.only_in_b.join(", ")) "." }
            }
        }
    }
}
