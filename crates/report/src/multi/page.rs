//! The page of N runs (`scalelab report A B C`): every series on every
//! chart, named by label; the ranking of the sides with relative % against
//! the first side (the baseline) and per-point verdicts with the 95% CI of
//! the ratio, both from the comparison `compare` prints
//! ([`crate::judging::multi::verdicts`]: each system against the same system of the
//! baseline side); each series' peak and decline or collapse; the points
//! each series lacks; and the environments side by side, rows that differ
//! first.

use crate::charts::{charts, kind_sections, Chart, ChartKind};
use crate::html::document;
use crate::judging::fits::{curve_verdicts, ranking_line};
use crate::judging::format;
use crate::judging::judge::Rules;
use crate::judging::multi::environment::{is_key_fact, rows, EnvRow};
use crate::judging::multi::verdicts::{self, SideComparison};
use crate::judging::multi::Merged;
use crate::judging::rows::Aggregate;
use maud::{html, Markup};

/// The whole page, its verdicts drawn by `rules`
/// ([`verdicts::rules`]); `compare --html` passes its own, so its page
/// and its table agree.
pub fn render(m: &Merged, rules: &Rules) -> String {
    let sides = verdicts::against_baseline(m, rules);
    render_sides(m, &sides, rules.noise)
}

/// The page of comparisons already drawn ([`verdicts::against_baseline`]).
pub fn render_sides(m: &Merged, sides: &[SideComparison], noise: f64) -> String {
    let agg = m.aggregate();
    let all = charts(&agg);
    // The load kind's own charts (DNS's rate ramps) go with the latency.
    let latency: Vec<ChartKind> = std::iter::once(ChartKind::Latency)
        .chain(kind_sections(&all).into_iter().map(ChartKind::Kind))
        .collect();
    let background = crate::judging::multi::background::differences(&m.runs, &m.names);
    let drift = crate::judging::multi::drift::of_sides(m);
    let names: Vec<&str> = m.sides.iter().map(|s| s.name.as_str()).collect();
    let title = names.join(", ");
    let body = html! {
        header {
            p class="kicker" { "scalelab comparison of " (m.runs.len()) " runs" }
            h1 { (title) }
            p class="desc" {
                "Recipe " code { (m.data.run.name) } "; the baseline is "
                b { (m.series.first().map_or("", |s| s.name.as_str())) } "."
            }
        }
        (runs_table(m))
        (summary(m, sides, noise, &background))
        (figures_section("throughput", "Throughput", &all, &[ChartKind::Throughput, ChartKind::PerClient]))
        section id="relative" {
            h2 { "Relative to the baseline" }
            (super::relative::tables(&m.sides[0].name, sides))
            p class="muted" { "Change: ratio of the values shown. " (crate::judging::verdict::legend(noise, &m.data.kind_legend())) "." }
            p class="note" { (crate::judging::multi::BETWEEN_RUNS) }
            p class="note" { (crate::judging::multi::PAIRS) }
            (work_section(m, sides))
        }
        (drift_section(&drift))
        (curves(&agg))
        (figures_section("latency", "Latency", &all, &latency))
        (figures_section("bandwidth", "Bandwidth", &all, &[ChartKind::Bandwidth]))
        (figures_section("efficiency", "Scaling efficiency", &all, &[ChartKind::Efficiency]))
        (figures_section("server", "Server", &all, &[
            ChartKind::ServerCpu, ChartKind::ServerCost, ChartKind::Memory, ChartKind::CpuBreakdown,
        ]))
        (crate::flames::across_runs(m))
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

/// Beside the verdicts: each side's work per request against the
/// baseline's, point by point (`judging::work_change`); nothing when no
/// point was counted on both sides.
fn work_section(m: &Merged, sides: &[SideComparison]) -> Markup {
    let lines: Vec<(usize, Vec<crate::judging::work_change::PointWorkLine>)> =
        (sides.iter().enumerate())
            .map(|(i, s)| {
                (
                    i + 1,
                    crate::judging::work_change::of_comparison(m, i + 1, &s.comparison),
                )
            })
            .filter(|(_, l)| !l.is_empty())
            .collect();
    if lines.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Work per request" }
        @for (side, ls) in &lines {
            p { b { (m.sides[*side].name) } " against " b { (m.sides[0].name) } ":" }
            ul { @for l in ls { li { (l.system) " " (l.point) ": " (l.sentence) } } }
        }
        p class="muted" {
            "The kernel's counts of each server's cgroup (system calls, context switches, \
             migrations, faults) per completed request; a change is claimed when its 95% \
             interval clears " (format!("{:.2}", crate::judging::work_change::MIN_CHANGE))
            " per request and " (format!("{:.0}%", crate::judging::work_change::MIN_RELATIVE * 100.0))
            " of the baseline's count."
        }
    }
}

/// One row per run: its side, label, where it came from, when, and what
/// it ran; then the sides pooled from several runs.
fn runs_table(m: &Merged) -> Markup {
    let side_of = |i: usize| m.sides.iter().position(|s| s.runs.contains(&i));
    html! {
        section id="runs" {
            h2 { "Runs" }
            div class="scroll" { table {
                tr { th { "side" } th { "label" } th { "run" } th { "started" } th { "server" } th { "revision" } th { "mode" } }
                @for (i, r) in m.runs.iter().enumerate() {
                    tr {
                        td { @if let Some(k) = side_of(i) { b { (m.sides[k].name) } @if k == 0 { " (baseline)" } } }
                        td { (m.names[i]) }
                        td { (m.sources.get(i).map_or("", String::as_str)) }
                        td { (format::date(r.run.started_at)) }
                        td { (r.run.server_version.as_deref().unwrap_or("–")) }
                        td { (r.run.revision.as_deref().unwrap_or("–")) }
                        td { @if r.run.quick { "quick" } @else { "full" } }
                    }
                }
            } }
            @for line in crate::judging::multi::pooled_lines(m) { p class="note" { (line) } }
        }
    }
}

/// Each side of 3 or more runs: the drift between its runs beside the
/// spread inside them, the runs a side to plan, and what differed when
/// they disagree.
fn drift_section(sides: &[crate::judging::multi::drift::SideDrift]) -> Markup {
    html! {
        @if !sides.is_empty() {
            section id="drift" {
                h2 { "Drift between runs" }
                @for s in sides {
                    h3 { (s.side) " (" (s.runs) " runs)" }
                    div class="scroll" { table class="grid" {
                        tr { th { "series" } th { "point" } th class="n" { "between runs (CV)" } th class="n" { "within a run (CV)" } }
                        @for p in &s.points {
                            tr {
                                td { (p.series) } td { (p.point) }
                                td class="n" { (format::percent_fine(p.drift.between_cv)) }
                                td class="n" { (p.drift.within_cv.map_or("–".into(), format::percent_fine)) }
                            }
                        }
                    } }
                    p { (crate::judging::multi::drift::plan_sentence(s)) }
                    @if !s.why.is_empty() {
                        div class="callout callout-warn" {
                            p { "These runs disagree beyond their own spread. What each run stored:" }
                            table class="grid" {
                                @for f in &s.why {
                                    tr class=[f.differs.then_some("diff")] {
                                        td { (f.fact) } @for v in &f.values { td { (v) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The ranking of the sides, the headline's status, and what limits the
/// comparison: background load, missing points, and a comparison with
/// nothing comparable.
fn summary(m: &Merged, sides: &[SideComparison], noise: f64, background: &[String]) -> Markup {
    let missing = m.missing_points();
    let base = &m.sides[0].name;
    let ranks = verdicts::ranks(base, sides);
    let points = ranks.iter().map(|r| r.points).max().unwrap_or(0);
    let any = sides
        .iter()
        .any(|s| !verdicts::nothing_comparable(&s.comparison));
    html! {
        section id="summary" {
            h2 { "Summary" }
            @if any {
                p class="ranking" { (ranking_line(&ranks, noise)) }
                @if let Some(s) = verdicts::standing(sides) { p class="status" { (s.sentence(noise)) } }
                p class="muted" {
                    "Throughput relative to " (base)
                    ": each side's geometric mean, over the comparable points it shares with it \
                     (up to " (points) "), of the ratio of its values to the baseline's, each \
                     system against the same system of the baseline; marked by the verdict on \
                     the run as a whole."
                }
            } @else {
                div class="callout callout-bad" {
                    p class="ranking bad-text" { "Nothing comparable" }
                    p {
                        "No side shares a comparable point with the baseline: at each shared \
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
