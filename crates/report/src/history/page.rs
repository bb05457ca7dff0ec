//! The history as a self-contained HTML page: one chart per point with the
//! headline statistic across the runs (whiskers: the slowest and fastest
//! trial), each change point marked between its two runs, and a hover on the
//! first run after a change that says what changed; then the change table,
//! each system's curve across the runs ([`super::curves`]) and the list of
//! runs.

use crate::analysis::compare::format_p;
use crate::html::document;
use crate::judging::format;
use crate::judging::history::{History, HistoryPoint};
use crate::svg::{LineChart, Mark, Pt};
use maud::{html, Markup};

/// The page for `h`.
pub fn render(h: &History, scalelab_version: &str) -> String {
    let changes: usize = h.points.iter().map(|p| p.change_points.len()).sum();
    let body = html! {
        header {
            p class="kicker" { "scalelab history" }
            h1 { "History of " (h.recipe) }
            p class="desc" {
                (h.runs.len()) " runs ordered by "
                (match h.order { crate::judging::history::Order::Time => "start time", crate::judging::history::Order::Label => "label" })
                "; " (h.statistic.as_str()) " of each run's trials, whiskers from the slowest to the fastest trial. "
                "Change points by E-divisive means (Matteson & James 2014) with a permutation test (p < "
                (h.alpha) ", " (h.permutations) " permutations); changes under "
                (format!("{:.0}%", h.min_magnitude * 100.0)) " are not reported. "
                (match changes { 0 => "No change point.".to_string(), n => format!("{n} change point(s).") })
            }
        }
        @for (i, p) in h.points.iter().enumerate() {
            section {
                h2 { (p.system) " · " (p.point) }
                figure { (chart(h, p, i).render()) }
                @for l in &p.left_out {
                    p class="caveat" {
                        "✗ run " (l.position + 1) " (" (h.runs[l.position].label) ") left out: " (l.reason)
                    }
                }
                @if !p.change_points.is_empty() {
                    (change_table(p))
                }
            }
        }
        (super::curves::sections(h))
        (change_profiles(h))
        section {
            h2 { "Runs" }
            (runs_table(h))
        }
    };
    document(
        &format!("History of {} — scalelab", h.recipe),
        scalelab_version,
        body,
    )
}

fn chart(h: &History, p: &HistoryPoint, i: usize) -> LineChart {
    let points = p.values.iter().map(|v| point(h, p, v)).collect();
    let title = format!("{} · {}", p.system, p.point);
    let mut c = super::across::across_runs(
        (&format!("history-{i}"), &title, &h.unit),
        &p.system,
        points,
    );
    for change in &p.change_points {
        c.marks.push(Mark {
            // Halfway between the two runs' dots (x is 1-based).
            x: (change.before_position + change.after_position) as f64 / 2.0 + 1.0,
            label: format!(
                "{:+.1}% ({}→{})",
                (change.ratio - 1.0) * 100.0,
                change.before_position + 1,
                change.after_position + 1
            ),
            color: Some(1),
            x_in_label: false,
        });
    }
    c
}

fn point(h: &History, p: &HistoryPoint, v: &crate::judging::history::RunValue) -> Pt {
    let run = &h.runs[v.position];
    let mut tip = format!(
        "{} (run {} in {}): {} {}, {} trial(s)",
        run.label,
        run.run,
        run.store,
        format::rate(v.value),
        h.unit,
        v.trials
    );
    if let Some(r) = &run.revision {
        tip += &format!(", revision {r}");
    }
    if v.disturbed {
        tip += "\nevery trial beside background load";
    }
    if let Some(c) = p
        .change_points
        .iter()
        .find(|c| c.after_position == v.position)
    {
        tip += &format!(
            "\nchange {:+.1}% here; what changed:",
            (c.ratio - 1.0) * 100.0
        );
        for d in c.changed.iter().take(12) {
            tip += &format!(
                "\n  {}: {} -> {}",
                d.key,
                d.before.as_deref().unwrap_or("(none)"),
                d.after.as_deref().unwrap_or("(none)")
            );
        }
    }
    Pt {
        x: v.position as f64 + 1.0,
        y: v.value,
        lo: Some(v.min),
        hi: Some(v.max),
        hollow: false,
        tip,
    }
}

fn change_table(p: &HistoryPoint) -> Markup {
    html! {
        table {
            thead { tr { th { "between" } th { "change" } th { "95% CI" } th { "p" } th { "what changed" } } }
            tbody {
                @for c in &p.change_points {
                    tr {
                        td { (c.before_label) " → " (c.after_label) }
                        td { (format!("{:+.1}%", (c.ratio - 1.0) * 100.0)) }
                        td { (c.ratio_ci.map_or("—".to_string(), |(lo, hi)| format!("{:+.1}%..{:+.1}%", (lo - 1.0) * 100.0, (hi - 1.0) * 100.0))) }
                        td { (format_p(c.p_value)) }
                        td {
                            @if c.changed.is_empty() { "nothing recorded differs" }
                            @for d in &c.changed {
                                code { (d.key) } ": " (d.before.as_deref().unwrap_or("(none)")) " → " (d.after.as_deref().unwrap_or("(none)")) br;
                            }
                            @if let Some(w) = &c.work { (w) }
                        }
                    }
                }
            }
        }
    }
}

/// The differential flame graphs between the two runs on either side of
/// each change point (once per pair of runs, however many points changed
/// between them); nothing when no run of the history was profiled.
fn change_profiles(h: &History) -> Markup {
    if h.runs.iter().all(|r| r.profiles.is_empty()) {
        return Markup::default();
    }
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for c in h.points.iter().flat_map(|p| &p.change_points) {
        let pair = (c.before_position, c.after_position);
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    if pairs.is_empty() {
        return Markup::default();
    }
    let name = |i: usize| format!("run {} ({})", i + 1, h.runs[i].label);
    html! {
        section id="profiles" {
            h2 { "Profiles at the change points" }
            p class="muted" {
                "The server's stacks in the run after each change against the run before it, for \
                 the same system, point and role, from their profile trials (" code { "run --profile" }
                "). The frames are the later run's; red where it spends a larger share of its \
                 samples, blue where a smaller one."
            }
            @for (before, after) in pairs {
                @let refs = |i: usize| h.runs[i].profiles.iter().collect::<Vec<_>>();
                @let graphs = crate::flames::between(&refs(before), &refs(after), (&name(before), &name(after)));
                h3 { "Between " (name(before)) " and " (name(after)) }
                @if graphs.is_empty() {
                    p class="muted" { "No profile of one system, point and role in both runs." }
                }
                @for g in &graphs { (crate::flames::figure(g)) }
            }
        }
    }
}

fn runs_table(h: &History) -> Markup {
    html! {
        table {
            thead { tr { th { "#" } th { "label" } th { "revision" } th { "run" } th { "started" } } }
            tbody {
                @for (i, r) in h.runs.iter().enumerate() {
                    tr {
                        td { (i + 1) }
                        td { (r.label) }
                        td { (r.revision.as_deref().unwrap_or("—")) }
                        td { (r.store) ":" (r.run) }
                        td { (format::date(r.started_at)) }
                    }
                }
            }
        }
    }
}
