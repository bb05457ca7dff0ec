//! The page of N runs (`scalelab report A B C`): every series on every
//! chart, named by label; the ranking with relative % against the first
//! series (the baseline) and per-point verdicts with the 95% CI of the
//! ratio; each series' peak and decline or collapse; the points each
//! series lacks; and the environments side by side, rows that differ
//! first.

use super::environment::{is_key_fact, rows, EnvRow};
use super::Merged;
use crate::report::charts::{charts, Chart, ChartKind};
use crate::report::fits::{curve_verdicts, ranking_line, standing};
use crate::report::format;
use crate::report::html::document;
use crate::report::html_tables as tables;
use crate::report::rows::Aggregate;
use maud::{html, Markup};

/// The whole page; `sources` say where each run was read from
/// (`linux.sqlite:1`), in the runs' order.
pub fn render(m: &Merged, sources: &[String]) -> String {
    let agg = m.aggregate();
    let all = charts(&agg);
    let background = super::background::differences(&m.runs, &m.names);
    let title = m.names.join(", ");
    let body = html! {
        header {
            p class="kicker" { "scalelab comparison of " (m.runs.len()) " runs" }
            h1 { (title) }
            p class="desc" {
                "Recipe " code { (m.data.run.name) } "; the baseline is "
                b { (m.series.first().map_or("", |s| s.name.as_str())) } "."
            }
        }
        (runs_table(m, sources))
        (summary(&agg, m, &background))
        (figures_section("throughput", "Throughput", &all, &[ChartKind::Throughput, ChartKind::PerClient]))
        section id="relative" {
            h2 { "Relative to the baseline" }
            (tables::relative(&agg))
            (tables::verdicts(&agg))
            p class="note" { (super::BETWEEN_RUNS) }
        }
        (curves(&agg))
        (figures_section("latency", "Latency", &all, &[ChartKind::Latency, ChartKind::Ramp]))
        (figures_section("bandwidth", "Bandwidth", &all, &[ChartKind::Bandwidth]))
        (figures_section("efficiency", "Scaling efficiency", &all, &[ChartKind::Efficiency]))
        (figures_section("server", "Server", &all, &[
            ChartKind::ServerCpu, ChartKind::ServerCost, ChartKind::Memory, ChartKind::CpuBreakdown,
        ]))
        section id="environment" {
            h2 { "Environment" }
            (environment(&rows(&m.runs), &m.names))
        }
    };
    document(
        &format!("{title} — scalelab comparison"),
        &m.data.run.scalelab_version,
        body,
    )
}

/// One row per run: its label, where it came from, when, and what it ran.
fn runs_table(m: &Merged, sources: &[String]) -> Markup {
    html! {
        section id="runs" {
            h2 { "Runs" }
            div class="scroll" { table {
                tr { th { "label" } th { "run" } th { "started" } th { "server" } th { "revision" } th { "mode" } }
                @for (i, r) in m.runs.iter().enumerate() {
                    tr {
                        td { b { (m.names[i]) } @if i == 0 { " (baseline)" } }
                        td { (sources.get(i).map_or("", String::as_str)) }
                        td { (format::date(r.run.started_at)) }
                        td { (r.run.server_version.as_deref().unwrap_or("–")) }
                        td { (r.run.revision.as_deref().unwrap_or("–")) }
                        td { @if r.run.quick { "quick" } @else { "full" } }
                    }
                }
            } }
        }
    }
}

/// The ranking, the headline's status, and what limits the comparison:
/// background load, missing points, and a comparison with nothing
/// comparable.
fn summary(agg: &Aggregate, m: &Merged, background: &[String]) -> Markup {
    let missing = m.missing_points();
    let points = agg.ranking.iter().map(|r| r.points).max().unwrap_or(0);
    html! {
        section id="summary" {
            h2 { "Summary" }
            @if agg.ranking.iter().any(|r| r.points > 0) && agg.ranking.len() >= 2 {
                p class="ranking" { (ranking_line(&agg.ranking, agg.noise)) }
                @if let Some(s) = standing(agg) { p class="status" { (s.sentence(agg.noise)) } }
                p class="muted" {
                    "Throughput relative to " (agg.baseline.as_deref().unwrap_or("the baseline"))
                    ": geometric mean over the points each series shares with it (up to "
                    (points) ") of the " (agg.headline_word()) " throughput ratio."
                }
            } @else {
                div class="callout callout-bad" {
                    p class="ranking bad-text" { "Nothing comparable" }
                    p {
                        "No series shares a comparable point with the baseline: at each shared \
                         point one side had errors above 0.1% of its requests or a client-bound \
                         trial (the load generator, not the server, was the limit; see the \
                         verdicts). No ranking is drawn."
                    }
                }
            }
            @for b in background { p class="note" { (b) } }
            @if !missing.is_empty() {
                div class="callout callout-warn" {
                    h3 { "Points a series lacks" }
                    p { "Drawn as measured; verdicts and the ranking cover the shared points only." }
                    ul {
                        @for (series, lacks) in &missing {
                            li { b { (series) } ": " (lacks.join(", ")) }
                        }
                    }
                }
            }
        }
    }
}

/// Each series' peak and what follows it.
fn curves(agg: &Aggregate) -> Markup {
    let lines = curve_verdicts(agg);
    html! {
        @if !lines.is_empty() {
            section id="peaks" {
                h2 { "Peaks, declines and collapses" }
                ul { @for l in &lines { li { (l) } } }
            }
        }
    }
}

fn figures_section(id: &str, title: &str, all: &[Chart], kinds: &[ChartKind]) -> Markup {
    let shown: Vec<&Chart> = all.iter().filter(|c| kinds.contains(&c.kind)).collect();
    html! {
        @if !shown.is_empty() {
            section id=(id) {
                h2 { (title) }
                @for c in shown { figure { (c.svg) figcaption { (c.caption) } } }
            }
        }
    }
}

/// The N-column environment table, differing rows first and highlighted.
fn environment(rows: &[EnvRow], names: &[String]) -> Markup {
    let differing = rows.iter().filter(|r| r.differs).count();
    html! {
        p {
            @if differing == 0 { "The runs' fingerprints are identical." }
            @else { (differing) " key(s) differ; they come first, kernel, sysctls, CPU, memory, \
                    server version and NIC settings at the top." }
        }
        div class="scroll" { table {
            tr { th { "key" } @for n in names { th { (n) } } }
            @for r in rows {
                tr class=[r.differs.then_some("diff")] {
                    td { @if r.differs && is_key_fact(&r.key) { b { (r.key) } } @else { (r.key) } }
                    @for v in &r.values { td { (v.as_deref().unwrap_or("(absent)")) } }
                }
            }
        } }
    }
}
