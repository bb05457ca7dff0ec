//! The OS-against-OS page, `scalelab compare A B --html FILE`: two runs,
//! possibly from two stores (two machines, two kernels), on one
//! self-contained page. It leads with whether the runs can be compared at
//! all (same recipe, same sweep points, neither side client-bound), then
//! the verdict (geometric mean and per-point verdicts with CIs) beside the
//! environment difference that might explain it, each run's peak and
//! collapse, and the two curves overlaid.

use super::analyse::aggregate;
use super::charts::compare::{overlay, Pair};
use super::fits::curve_verdicts;
use super::format;
use super::html::document;
use super::rows::Aggregate;
use super::verdict::{self, Tone};
use crate::analysis::compare::Verdict;
use crate::report::runs::{EnvDifference, RunComparison};
use crate::store::RunData;
use maud::{html, Markup};

/// Environment keys a reader looks at first when two runs differ, shown at
/// the top of the difference table.
const KEY_FACTS: &[&str] = &[
    "kernel",
    "sysctls",
    "cpu_model",
    "online_cpus",
    "haltpoll",
    "virtualization",
    "cpufreq",
    "cpuidle",
    "clocksource",
    "smt",
    "thp",
    "mem_total",
    "server_version",
];

/// The page for `c`, the comparison of run `b` against run `a`; `names`
/// are how the page calls the runs (`run 3`, `linux.sqlite:1`).
pub fn render(c: &RunComparison, (a, b): (&RunData, &RunData), names: (&str, &str)) -> String {
    let (agg_a, agg_b) = (aggregate(a), aggregate(b));
    let reasons = not_comparable(c, (a, b), (&agg_a, &agg_b), names);
    let body = html! {
        header {
            p class="kicker" { "scalelab comparison" }
            h1 { (names.1) " against " (names.0) }
            p class="desc" {
                (names.1) ": " (b.run.name) " (" (format::date(b.run.started_at)) "). "
                (names.0) ": " (a.run.name) " (" (format::date(a.run.started_at)) ", the baseline)."
            }
        }
        (verdict_and_environment(c, &reasons, names))
        (curves(c, (&agg_a, &agg_b), names))
        (points_table(c, names))
        (page_end(c, names))
    };
    document(
        &format!("{} against {} — scalelab comparison", names.1, names.0),
        &a.run.scalelab_version,
        body,
    )
}

/// Why the two runs should not be compared at all; empty when they can.
pub fn not_comparable(
    c: &RunComparison,
    (a, b): (&RunData, &RunData),
    (agg_a, agg_b): (&Aggregate, &Aggregate),
    (na, nb): (&str, &str),
) -> Vec<String> {
    let mut out = Vec::new();
    if a.run.name != b.run.name || a.run.load_kind != b.run.load_kind {
        out.push(format!(
            "another recipe: {na} ran `{}` ({} load), {nb} ran `{}` ({} load)",
            a.run.name, a.run.load_kind, b.run.name, b.run.load_kind
        ));
    }
    if c.points.is_empty() {
        out.push("no sweep point was measured in both runs".into());
    } else if !c.only_in_a.is_empty() || !c.only_in_b.is_empty() {
        let list = |l: &[String]| {
            if l.is_empty() {
                "none".into()
            } else {
                l.join(", ")
            }
        };
        out.push(format!(
            "other sweep points: only in {na}: {}; only in {nb}: {}",
            list(&c.only_in_a),
            list(&c.only_in_b)
        ));
    }
    for (name, agg) in [(na, agg_a), (nb, agg_b)] {
        let mut at: Vec<String> = Vec::new();
        for (cell, _) in agg.client_bound() {
            let l = format!("{} {}", cell.system, cell.point.label());
            if !at.contains(&l) {
                at.push(l);
            }
        }
        if !at.is_empty() {
            out.push(format!(
                "{name} is client-bound at {}: there the load generator, not the server, was the limit",
                at.join(", ")
            ));
        }
    }
    out
}

/// The verdict (or why there is none) beside the environment difference.
fn verdict_and_environment(
    c: &RunComparison,
    reasons: &[String],
    (na, nb): (&str, &str),
) -> Markup {
    let counts =
        |f: fn(&Verdict) -> bool| c.points.iter().filter(|p| f(&p.comparison.verdict)).count();
    let (faster, slower, same, excluded) = (
        counts(|v| matches!(v, Verdict::Faster)),
        counts(|v| matches!(v, Verdict::Slower)),
        counts(|v| matches!(v, Verdict::NoDifference)),
        counts(|v| matches!(v, Verdict::NotComparable { .. })),
    );
    let compared = c.points.len() - excluded;
    let plural = if compared == 1 { "" } else { "s" };
    let stat = c.statistic.as_str();
    html! {
        section id="verdict" { div class="split" {
            div {
                h2 { "Verdict" }
                @if !reasons.is_empty() {
                    div class="callout callout-bad" {
                        p class="ranking bad-text" { "Not comparable" }
                        ul { @for r in reasons { li { (r) } } }
                        p class="muted" {
                            "The figures below are shown for inspection; no verdict is drawn from them."
                        }
                    }
                }
                @if let Some(g) = c.geomean_ratio {
                    @if reasons.is_empty() {
                        p class="ranking" { (nb) ": " (format::change(g)) " against " (na) }
                        p {
                            "Geometric mean of the " (stat) " ratios over " (compared)
                            " comparable point" (plural) "."
                        }
                    } @else {
                        p class="muted" {
                            "For inspection only, not a verdict: the geometric mean of the " (stat)
                            " ratios is " (format::change(g)) " over " (compared) " point" (plural) "."
                        }
                    }
                }
                p {
                    "Per point: " span class="good" { (faster) " faster" } ", "
                    span class="bad" { (slower) " slower" } ", "
                    span class="same" { (same) " no difference" } ", "
                    (c.points.len() - faster - slower - same - excluded) " too few trials to judge"
                    @if excluded > 0 {
                        ", " span class="bad" { (excluded) " not comparable (errors)" }
                    }
                    "."
                }
            }
            div { (environment(&c.environment, (na, nb))) }
        } }
    }
}

/// The environment keys that differ, the ones a reader looks at first on
/// top and highlighted.
fn environment(diff: &[EnvDifference], (na, nb): (&str, &str)) -> Markup {
    if diff.is_empty() {
        return html! {
            h2 { "What differs" }
            p class="muted" { "The two environments' fingerprints are identical." }
        };
    }
    let key_fact = |k: &str| KEY_FACTS.iter().any(|f| k.contains(f));
    let mut rows: Vec<&EnvDifference> = diff.iter().collect();
    rows.sort_by_key(|d| !key_fact(&d.key));
    let absent = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
    html! {
        h2 { "What differs" }
        div class="scroll" { table {
            tr { th { "key" } th { (na) } th { (nb) } }
            @for d in rows {
                tr class=[key_fact(&d.key).then_some("diff")] {
                    td { (d.key) } td { (absent(&d.a)) } td { (absent(&d.b)) }
                }
            }
        } }
        p class="muted" {
            "Highlighted: kernel, sysctls, CPU, idle polling (haltpoll), virtualisation, frequency and memory."
        }
    }
}

/// Each run's peaks and collapses, then the overlaid curves.
fn curves(c: &RunComparison, (a, b): (&Aggregate, &Aggregate), names: (&str, &str)) -> Markup {
    let mut pairs: Vec<Pair> = Vec::new();
    for p in &c.points {
        let group = a
            .cells
            .iter()
            .find(|cell| cell.system == p.system && cell.point.coords == p.coords)
            .map(|cell| a.layout.groups[cell.group].label.clone())
            .unwrap_or_default();
        if !pairs
            .iter()
            .any(|q| q.system_a == p.system && q.group == group)
        {
            pairs.push(Pair {
                system_a: &p.system,
                system_b: &p.system_b,
                group,
            });
        }
    }
    let charts = pairs
        .iter()
        .enumerate()
        .filter_map(|(i, pair)| overlay((a, b), names, pair, &c.points, i));
    html! {
        section id="curves" {
            h2 { "Curves" }
            h3 { "Where each peaks and collapses" }
            ul {
                @for (name, agg) in [(names.0, a), (names.1, b)] {
                    @let lines = curve_verdicts(agg);
                    @if lines.is_empty() {
                        li { b { (name) } ": no curve (fewer than two levels)" }
                    }
                    @for l in lines { li { b { (name) } " " (l) } }
                }
            }
            @for chart in charts {
                figure { (chart.svg) figcaption { (chart.caption) } }
            }
        }
    }
}

/// Every shared point: both statistics with their spread, the verdict and
/// the ratio's CI.
fn points_table(c: &RunComparison, (na, nb): (&str, &str)) -> Markup {
    let stat = c.statistic.as_str();
    let value = |m: Option<f64>, s: Option<f64>| match (m, s) {
        (Some(m), Some(s)) => format!("{} ±{:.1}%", format::rate(m), s * 100.0),
        (Some(m), None) => format::rate(m),
        (None, _) => "–".into(),
    };
    html! {
        section id="points" {
            h2 { "Every point" }
            div class="scroll" { table {
                tr {
                    th { "system" } th { "point" }
                    th class="n" { (na) " " (stat) } th class="n" { (nb) " " (stat) }
                    th { "verdict" } th { "95% CI of the ratio" }
                }
                @for p in &c.points {
                    @let (text, tone) = verdict::short(&p.comparison);
                    @let (row, class) = match tone {
                        _ if matches!(p.comparison.verdict, Verdict::NotComparable { .. }) => {
                            (Some("excluded"), "bad")
                        }
                        Tone::Better => (None, "good"),
                        Tone::Worse => (None, "bad"),
                        Tone::Same | Tone::Unknown => (None, "same"),
                    };
                    @let system = if p.system == p.system_b {
                        p.system.clone()
                    } else {
                        format!("{} → {}", p.system, p.system_b)
                    };
                    tr class=[row] {
                        td { (system) }
                        td { (p.point) }
                        td class="n" { (value(p.median_a, p.spread_a)) }
                        td class="n" { (value(p.median_b, p.spread_b)) }
                        td class=(class) { (text) }
                        td { (verdict::ci(&p.comparison).unwrap_or_else(|| "–".into())) }
                    }
                }
            } }
            p class="muted" {
                "± is the 95% CI half-width of the median (6 or more trials). "
                (verdict::legend(c.noise))
            }
        }
    }
}

fn page_end(c: &RunComparison, (na, nb): (&str, &str)) -> Markup {
    html! {
        @for (name, list) in [(na, &c.only_in_a), (nb, &c.only_in_b)] {
            @if !list.is_empty() {
                p class="note" { "Only in " (name) ": " (list.join(", ")) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::runs::compare_runs;
    use crate::report::test_support::run_data;

    fn names() -> (&'static str, &'static str) {
        ("linux.sqlite:1", "freebsd.sqlite:1")
    }

    #[test]
    fn the_same_recipe_and_points_without_client_bound_trials_compare() {
        let strip = |mut d: RunData| {
            for t in &mut d.trials {
                t.context = Default::default();
            }
            d
        };
        let (a, b) = (strip(run_data(&["nginx"])), strip(run_data(&["nginx"])));
        let c = compare_runs(&a, &b, 0.02);
        let aggs = (aggregate(&a), aggregate(&b));
        assert!(not_comparable(&c, (&a, &b), (&aggs.0, &aggs.1), names()).is_empty());
        let page = render(&c, (&a, &b), names());
        assert!(!page.contains("Not comparable"));
        assert!(page.contains("freebsd.sqlite:1: +0.0% against linux.sqlite:1"));
        assert!(page.contains("The two environments' fingerprints are identical."));
        assert_eq!(page.matches(r#"class="series""#).count(), 2);
    }

    #[test]
    fn another_recipe_other_points_or_a_client_bound_side_are_not_comparable() {
        let a = run_data(&["nginx"]); // a client-bound trial at connections=4000
        let mut b = run_data(&["nginx"]);
        b.run.name = "nginx-return200".into();
        if let Some(env) = &mut b.run.environment {
            env.machine.kernel_release = "14.0-RELEASE".into();
        }
        b.trials.retain(|t| t.point.index != 0);
        let c = compare_runs(&a, &b, 0.02);
        let aggs = (aggregate(&a), aggregate(&b));
        let why = not_comparable(&c, (&a, &b), (&aggs.0, &aggs.1), names());
        assert_eq!(why.len(), 4, "{why:?}");
        assert!(why[0].starts_with("another recipe: linux.sqlite:1 ran `nginx <scaling>`"));
        assert!(why[1].contains(
            "only in linux.sqlite:1: nginx connections=1; only in freebsd.sqlite:1: none"
        ));
        assert!(why[2].starts_with("linux.sqlite:1 is client-bound at nginx connections=4000"));
        let page = render(&c, (&a, &b), names());
        assert!(page.contains("Not comparable"));
        assert!(
            !page.contains("against linux.sqlite:1</p><p>Geometric mean"),
            "no verdict"
        );
        let kernel = (page.find("<td>kernel_release</td>")).expect("the kernel difference");
        assert!(page[kernel..]
            .starts_with("<td>kernel_release</td><td>6.1.0</td><td>14.0-RELEASE</td>"));
        assert!(!page.contains("<script"));
    }
}
