//! The self-contained HTML report: one file, inline CSS and inline SVG, no
//! fonts or anything else fetched from the network. The only scripts are
//! the flame graphs' own (search and zoom), each inside its graph's
//! `data:` iframe. The page is built with `maud`, which escapes every
//! string it is given: only markup built the same way (and the charts'
//! SVG, built by `svg`'s escaping builders) goes in unescaped.

use super::charts::{charts, kind_sections, Chart, ChartKind};
use super::html_tables as tables;
use crate::judging::analyse::aggregate;
use crate::judging::fits::{curve_verdicts, ranking_line, standing, Standing};
use crate::judging::format;
use crate::judging::rows::Aggregate;
use crate::store::{Run, RunData};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// The whole HTML report of one run, as one self-contained document:
/// aggregated tables, charts, fits and verdicts, plus the hosts section
/// (multi-host runs) and the flame graphs (`run --profile`) when the store
/// has them.
pub fn render(data: &RunData) -> String {
    let extra = Extra {
        hosts: super::hosts::section(data),
        profiles: super::flames::section(data),
        steady: super::steady_view::section(data),
    };
    render_with(&aggregate(data), &data.run, &extra)
}

/// The report of an already aggregated run, without the hosts and flame
/// graph sections (they need the trials, not the aggregate).
#[cfg(test)]
pub(crate) fn render_aggregate(agg: &Aggregate, run: &Run) -> String {
    render_with(agg, run, &Extra::default())
}

/// Sections made from the trials themselves rather than the aggregate;
/// each may be empty.
#[derive(Default)]
struct Extra {
    /// A multi-host run's client split, before the server section.
    hosts: Markup,
    /// Flame graphs, after the server section.
    profiles: Markup,
    /// Each trial's timeline strip and class, after the server section.
    steady: Markup,
}

/// One section of the page: its anchor, its heading and its content. The
/// page and its navigation are both built from one list of these.
struct Section {
    /// The `id` the navigation links to.
    id: &'static str,
    /// The `h2` heading, and the link's text.
    title: &'static str,
    /// What follows the heading.
    body: Markup,
}

impl Section {
    fn new(id: &'static str, title: &'static str, body: Markup) -> Section {
        Section { id, title, body }
    }
}

fn render_with(agg: &Aggregate, run: &Run, extra: &Extra) -> String {
    let sections = sections(agg, run, extra);
    let body = html! {
        (header(agg, run))
        (nav(&sections))
        @for s in &sections {
            section id=(s.id) { h2 { (s.title) } (s.body) }
        }
    };
    page(run, body)
}

/// The page's sections in order, those with nothing to show left out.
fn sections(agg: &Aggregate, run: &Run, extra: &Extra) -> Vec<Section> {
    let charts = charts(agg);
    let mut charted: Vec<(&str, &str, Vec<ChartKind>, Markup)> = vec![(
        "throughput",
        "Throughput",
        vec![ChartKind::Throughput, ChartKind::PerClient],
        tables::scaling(agg),
    )];
    // The load kind's own charts (DNS's rate ramps), each in its section.
    charted.extend(
        kind_sections(&charts)
            .into_iter()
            .map(|k| (k.id, k.title, vec![ChartKind::Kind(k)], Markup::default())),
    );
    charted.extend([
        (
            "latency",
            "Latency",
            vec![ChartKind::Latency],
            Markup::default(),
        ),
        (
            "bandwidth",
            "Bandwidth",
            vec![ChartKind::Bandwidth],
            Markup::default(),
        ),
        (
            "efficiency",
            "Scaling efficiency",
            vec![ChartKind::Efficiency],
            Markup::default(),
        ),
        (
            "relative",
            "Relative to the baseline",
            vec![],
            html! { (tables::relative(agg)) (tables::verdicts(agg)) },
        ),
        ("points", "Every point", vec![], tables::points(agg)),
        (
            "energy",
            "Energy",
            vec![ChartKind::Energy],
            crate::energy::html_table(agg),
        ),
    ]);
    let server_kinds = [
        ChartKind::ServerCpu,
        ChartKind::ServerCost,
        ChartKind::Memory,
        ChartKind::CpuBreakdown,
    ];
    let mut out = vec![Section::new("summary", "Summary", summary(agg))];
    for (id, title, kinds, table) in charted {
        let figs = figures(&charts, &kinds);
        if !figs.0.is_empty() || !table.0.is_empty() {
            out.push(Section::new(id, title, html! { (figs) (table) }));
        }
    }
    let optional = |id, title, body: &Markup| {
        (!body.0.is_empty()).then(|| Section::new(id, title, body.clone()))
    };
    out.extend(optional("hosts", "Client hosts", &extra.hosts));
    out.push(Section::new(
        "server",
        "Server",
        html! { (figures(&charts, &server_kinds)) (tables::server(agg)) },
    ));
    out.extend(optional("steady", "Steady windows", &extra.steady));
    out.extend(optional("profiles", "Profiles", &extra.profiles));
    out.push(Section::new("warnings", "Warnings", warnings(agg)));
    out.push(Section::new(
        "environment",
        "Environment",
        tables::environment(&run.environment_facts()),
    ));
    out.push(Section::new(
        "experiment",
        "Experiment file",
        html! { p class="muted" { (run.experiment_path) } pre { (run.experiment) } },
    ));
    out
}

fn page(run: &Run, body: Markup) -> String {
    document(
        &format!("{} — scalelab run {}", run.name, run.id),
        &run.scalelab_version,
        body,
    )
}

/// A whole self-contained page: `title` and `version` are text, `body`
/// is markup.
pub(super) fn document(title: &str, version: &str, body: Markup) -> String {
    let page = html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                "\n"
                meta name="generator" content={ "scalelab " (version) };
                title { (title) }
                "\n"
                style { (PreEscaped(CSS)) }
            }
            "\n"
            body { main {
                (body)
                footer {
                    "Generated by scalelab " (version)
                    ". This file is self-contained: it loads nothing from the network."
                }
            } }
        }
        "\n"
    };
    page.into_string()
}

fn figures(charts: &[Chart], kinds: &[ChartKind]) -> Markup {
    html! {
        @for c in charts.iter().filter(|c| kinds.contains(&c.kind)) {
            figure { (c.svg) figcaption { (c.caption) } }
        }
    }
}

fn header(agg: &Aggregate, run: &Run) -> Markup {
    let mut meta: Vec<(&str, String)> = vec![
        ("Run", format!("{} ({})", run.id, run.status)),
        ("Label", run.label.clone()),
        ("Started", format::date(run.started_at)),
    ];
    if let Some(rev) = &run.revision {
        meta.push(("Revision", rev.clone()));
    }
    if let Some(end) = run.finished_at {
        meta.push(("Finished", format::date(end)));
        meta.push((
            "Duration",
            format!("{:.0} s", (end - run.started_at) as f64),
        ));
    }
    meta.push(("scalelab", run.scalelab_version.clone()));
    if let Some(v) = &run.server_version {
        meta.push(("Server", v.clone()));
    }
    meta.push(("Systems", agg.systems.join(", ")));
    if let Some(b) = &agg.baseline {
        meta.push(("Baseline", b.clone()));
    }
    let axis = agg.layout.x_axis.clone().unwrap_or_else(|| "none".into());
    if run.quick {
        meta.push((
            "Mode",
            "quick (--quick: the file's [quick] sweep and trials)".into(),
        ));
    }
    meta.push(("Sweep", format!("{}; x axis: {axis}", agg.ran())));
    html! {
        header {
            p class="kicker" { "scalelab report" @if run.quick { " · quick run" } }
            h1 { (run.name) @if run.quick { " " span class="quick" { "quick" } } }
            p class="desc" { (run.description) }
            ul class="meta" {
                @for (k, v) in meta { li { span class="k" { (k) } " " (v) } }
            }
        }
    }
}

fn summary(agg: &Aggregate) -> Markup {
    let bound = agg.client_bound().count();
    let failed = agg.failures().count();
    let trials: usize = agg.cells.iter().map(|c| c.trials()).sum();
    html! {
            @if agg.ranking.len() >= 2 && !crate::judging::fits::ranks_anything(&agg.ranking) {
                p class="ranking bad-text" { (ranking_line(&agg.ranking, agg.noise)) }
            } @else if agg.ranking.len() >= 2 {
                p class="ranking" { (ranking_line(&agg.ranking, agg.noise)) }
                (status(agg))
                p class="muted" {
                    "Throughput relative to " (agg.baseline.as_deref().unwrap_or("the baseline"))
                    ": geometric mean over " (crate::judging::fits::mean_over(agg))
                    " of the " (agg.headline_word()) " throughput ratio."
                }
            }
            @if agg.systems.len() == 1 {
                @for line in curve_verdicts(agg) { p class="ranking" { (line) } }
            }
            p {
                (count(trials, "trial")) " over " (count(agg.points.len(), "point")) " and "
                (count(agg.systems.len(), "system")) "; throughput in " (agg.unit) ", the "
                (agg.headline_word()) " of the successful trials."
                @if bound > 0 {
                    " " a class="warn-text" href="#warnings" { (bound) " client-bound trial(s)." }
                }
                @if failed > 0 {
                    " " a class="bad-text" href="#warnings" { (failed) " failed trial(s)." }
                }
            }
            @for n in &agg.notes { p class="note" { (n) } }
            @if let Some(e) = &agg.order_effect {
                @for l in &e.lines { p class="note order-effect" { (l) } }
            }
    }
}

/// The headline's status, coloured by what it may claim.
fn status(agg: &Aggregate) -> Markup {
    let Some(s) = standing(agg) else {
        return Markup::default();
    };
    let class = match s {
        Standing::Significant { .. } => "status-sig",
        Standing::NotSignificant { .. } => "status-ns",
        Standing::TooFewTrials { .. } | Standing::TooFewRuns { .. } => "status-few",
    };
    html! { p class={ "status " (class) } { (s.sentence(agg.noise)) } }
}

fn warnings(agg: &Aggregate) -> Markup {
    let lists: [(&str, &str, &str, Vec<_>); 3] = [
        (
            "callout-warn",
            "Client-bound trials",
            "The load generator, not the server, was the limit: these points understate what the server can do. They are drawn with hollow markers.",
            agg.client_bound().collect(),
        ),
        (
            "callout-bad",
            "Failed trials",
            "Listed here and left out of every statistic.",
            agg.failures().collect(),
        ),
        (
            "callout-warn",
            "Probe warnings",
            "Caveats the server-side sampler raised about its own figures.",
            agg.probe_warnings().collect(),
        ),
    ];
    let shown: Vec<_> = lists.iter().filter(|l| !l.3.is_empty()).collect();
    html! {
            @for (class, title, blurb, notes) in &shown {
                div class={ "callout " (class) } {
                    h3 { (title) }
                    p { (blurb) }
                    ul {
                        @for (c, n) in notes {
                            li { b { (c.system) } " " (c.point.label()) " trial " (n.trial) ": " (n.reason) }
                        }
                    }
                }
            }
            @if shown.is_empty() {
                p class="muted" { "No client-bound or failed trials, and no probe warnings." }
            }
    }
}

/// The table of contents: a link to each section, by its id and heading.
fn nav(sections: &[Section]) -> Markup {
    html! { nav { @for s in sections { a href={ "#" (s.id) } { (s.title) } } } }
}

/// `1 point`, `5 points`.
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

const CSS: &str = r#"
:root{--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--good:#1a7f37;--bad:#cf222e;--warn:#9a6700}
*{box-sizing:border-box}
body{margin:0;background:#fff;color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1040px;margin:0 auto;padding:24px 28px 48px}
header{border-bottom:2px solid var(--ink);padding-bottom:14px;margin-bottom:8px}
.kicker{margin:0;color:var(--muted);font-size:12px;letter-spacing:.08em;text-transform:uppercase}
h1{margin:2px 0 6px;font-size:28px;line-height:1.2}
h2{font-size:20px;margin:34px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:0 0 6px}
.desc{margin:0 0 10px;color:var(--ink)}
ul.meta{display:flex;flex-wrap:wrap;gap:4px 22px;margin:0;padding:0;list-style:none;font-size:13px}
ul.meta li{font-weight:500}ul.meta .k{color:var(--muted);font-weight:400;margin-right:2px}
nav{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:13px;padding:8px 0;border-bottom:1px solid var(--line)}
a{color:#0550ae;text-decoration:none}a:hover{text-decoration:underline}
.ranking{font-size:22px;font-weight:600;margin:8px 0 2px}
.muted{color:var(--muted);font-size:13px}
.quick{font-size:14px;vertical-align:middle;background:#fff8c5;color:var(--warn);border:1px solid #d4a72c;border-radius:4px;padding:1px 6px}
.status{font-size:16px;font-weight:600;margin:2px 0 6px;padding:4px 10px;border-left:4px solid}
.status-sig{border-color:var(--good)}.status-ns{border-color:var(--muted);color:var(--muted)}.status-few{border-color:var(--warn);background:#fff8c5;color:var(--warn)}
tr.excluded td{background:#ffebe9;color:var(--bad)}
.note{border-left:3px solid var(--warn);padding:2px 10px;background:#fff8c5}
figure{margin:18px 0 24px}figure svg{display:block;max-width:100%;height:auto;margin:0 auto}
figure.flame iframe{display:block;width:100%;border:0}
figcaption{color:var(--muted);font-size:13px;text-align:center;margin-top:4px}
table{border-collapse:collapse;margin:12px 0 20px;font-size:13px;width:100%}
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600;white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.first td{border-top:1px solid #afb8c1}
.good{color:var(--good);font-weight:600}.bad,.bad-text{color:var(--bad)}.bad{font-weight:600}.same{color:var(--muted)}
.warn-text{color:var(--warn)}
.best{font-weight:700}
.flag{color:var(--warn);font-weight:700;cursor:help}
tr.diff td{background:#fff8c5}
.callout{border-left:4px solid;padding:8px 14px;margin:12px 0;background:var(--soft)}
.callout-warn{border-color:#d4a72c}.callout-bad{border-color:var(--bad)}
.scroll{overflow-x:auto}
table.rel th,table.rel th.n{white-space:normal;min-width:6em}
.split{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:28px}
@media (max-width:800px){.split{grid-template-columns:minmax(0,1fr)}}
table.grid td{white-space:nowrap}table.grid th.n{white-space:normal}table.grid th,table.grid td{padding:4px 7px}table.grid td.wrap{white-space:normal}
ol.notes{font-size:12.5px;color:var(--muted);margin:-8px 0 16px;padding-left:28px}
.callout ul{margin:4px 0;padding-left:20px}
pre{background:var(--soft);border:1px solid var(--line);padding:12px;overflow-x:auto;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
footer{margin-top:40px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
@media print{nav{display:none}main{max-width:none}}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::aggregate;

    /// Issue 46: the relative table ran off the page with six series; its
    /// headers (the series' names) wrap, and it scrolls inside its box.
    #[test]
    fn the_relative_table_wraps_its_headers_inside_a_scroll_box() {
        let (data, agg) = aggregate(&["a", "b", "c", "d", "e", "f"]);
        let html = render_aggregate(&agg, &data.run);
        assert!(html.contains(r#"<div class="scroll"><table class="rel">"#));
        assert!(CSS.contains("table.rel th,table.rel th.n{white-space:normal"));
    }

    #[test]
    fn self_contained_with_escaped_data() {
        let (data, agg) = aggregate(&["linux", "free<b>bsd"]);
        let html = render_aggregate(&agg, &data.run);
        let without_xmlns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!without_xmlns.contains("http://") && !without_xmlns.contains("https://"));
        assert!(!html.contains("<scaling>") && html.contains("nginx &lt;scaling&gt;"));
        assert!(!html.contains("free<b>bsd") && html.contains("free&lt;b&gt;bsd"));
        assert!(!html.contains("<script"));
        assert!(html.contains("USL fit of linux: R² = 0.99 &lt;fixture&gt;"));
        for id in [
            "throughput",
            "latency",
            "efficiency",
            "relative",
            "server",
            "warnings",
            "environment",
            "experiment",
        ] {
            assert!(html.contains(&format!(r#"<section id="{id}">"#)), "{id}");
        }
    }

    #[test]
    fn the_navigation_links_every_section_shown_in_page_order() {
        let (data, agg) = aggregate(&["linux", "freebsd"]);
        let html = render_aggregate(&agg, &data.run);
        let nav = &html[html.find("<nav>").unwrap()..html.find("</nav>").unwrap()];
        let linked: Vec<&str> = nav
            .split(r##"<a href="#"##)
            .skip(1)
            .map(|a| a.split('"').next().unwrap())
            .collect();
        let shown: Vec<&str> = html
            .split(r#"<section id=""#)
            .skip(1)
            .map(|s| s.split('"').next().unwrap())
            .collect();
        assert_eq!(linked, shown);
        assert!(nav.contains(r##"<a href="#relative">Relative to the baseline</a>"##));
        // Sections with nothing to show are neither drawn nor linked.
        assert!(!linked.contains(&"hosts") && !linked.contains(&"profiles"));
        assert_eq!(linked.first(), Some(&"summary"));
    }

    #[test]
    fn throughput_chart_has_a_line_and_fit_per_system() {
        let (data, agg) = aggregate(&["linux", "freebsd"]);
        let html = render_aggregate(&agg, &data.run);
        let start = html.find(r#"<section id="throughput">"#).unwrap();
        let chart = &html[start..html[start..].find("</svg>").unwrap() + start];
        assert_eq!(chart.matches(r#"class="series""#).count(), 2);
        assert_eq!(chart.matches(r#"class="fit""#).count(), 2);
        assert!(chart.contains(">linux</text>") && chart.contains(">freebsd</text>"));
        assert!(chart.contains("USL fit: σ=0.0200 κ=2.0e-5 N*=221"));
    }
}
