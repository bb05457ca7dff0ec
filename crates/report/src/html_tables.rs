//! The HTML report's tables. Each returns a fragment, empty when the run
//! has nothing to show in it. Built with `maud`, which escapes every
//! interpolated string.

use crate::judging::fits::shape_sentence;
use crate::judging::format;
use crate::judging::rows::{Aggregate, Cell};
use crate::judging::verdict::{self, Tone};
use maud::{html, Markup};
use serde_json::Value;

/// A header cell; `n` marks numeric (right-aligned) columns.
fn th(label: &str, numeric: bool) -> Markup {
    html! { th class=[numeric.then_some("n")] { (label) } }
}

fn td(text: &str) -> Markup {
    html! { td { (text) } }
}

fn tdn(text: &str) -> Markup {
    html! { td class="n" { (text) } }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".into())
}

/// Peak, past-peak behaviour and USL parameters per system (and group);
/// the USL columns only when some series was fitted.
pub fn scaling(agg: &Aggregate) -> Markup {
    let Some(axis) = agg.layout.x_axis.as_deref() else {
        return Markup::default();
    };
    let any_usl = agg.fits.iter().any(|f| f.usl.is_some());
    if !any_usl && agg.fits.iter().all(|f| f.shape.is_none()) {
        return Markup::default();
    }
    let groups = agg.layout.groups.len() > 1;
    html! {
        h3 { "Scaling" }
        div class="scroll" { table {
            tr {
                (th("system", false))
                @if groups { (th("group", false)) }
                (th("peak and past the peak", false))
                @if any_usl {
                    @for h in ["σ (contention)", "κ (coherency)", "λ", "N*", "R²"] { (th(h, true)) }
                }
            }
            @for f in &agg.fits {
                tr {
                    (td(&f.system))
                    @if groups { (td(&agg.layout.groups[f.group].label)) }
                    (td(&f.shape.as_ref().map(|s| shape_sentence(s, axis) + &f.caveat.after_shape()).unwrap_or_default()))
                    @if any_usl { (usl_cells(f.usl.as_ref(), f.points.len())) }
                }
            }
        } }
        @if let Some(short) = crate::judging::fits::too_short_sentence(agg) {
            p class="muted" { (short) }
        }
        @if any_usl { (usl_notes(agg, axis)) }
    }
}

/// The five USL cells of a scaling-table row.
fn usl_cells(usl: Option<&Result<crate::analysis::usl::UslFit, String>>, levels: usize) -> Markup {
    match usl {
        Some(Ok(u)) => {
            let n_star = crate::judging::fits::n_star_cell(u);
            let cells = [
                format::sig(u.sigma, 3),
                format::sig(u.kappa, 2),
                format::rate(u.lambda),
                n_star,
                format!("{:.3}", u.r_squared),
            ];
            html! { @for v in &cells { (tdn(v)) } }
        }
        Some(Err(e)) => html! { td colspan="5" class="muted" { "fit failed: " (e) } },
        None => html! {
            td colspan="5" class="muted" {
                "no fit: " (levels) " level" @if levels != 1 { "s" }
                ", a fit needs " (crate::analysis::usl::FEW_POINTS)
            }
        },
    }
}

/// The fits' warnings and what the USL parameters mean.
fn usl_notes(agg: &Aggregate, axis: &str) -> Markup {
    html! {
        @for f in &agg.fits {
            @for w in f.usl.iter().flatten().flat_map(|u| &u.warnings) {
                p class="note" { "USL fit of " (f.name(agg)) ": " (w) }
            }
        }
        p class="muted" {
            "Universal Scalability Law: X(N) = λN / (1 + σ(N−1) + κN(N−1)), fitted to the "
            (agg.headline_word()) " throughput at each " (axis)
            " value. σ is the serial fraction (contention), κ the cost of keeping shared state \
             coherent; N* = √((1−σ)/κ) is where throughput peaks."
        }
    }
}

/// Headline throughput per point and system, with the ratio to the
/// baseline; the best system at each point in bold.
pub fn relative(agg: &Aggregate) -> Markup {
    let Some(base) = agg.baseline.as_deref() else {
        return Markup::default();
    };
    if agg.systems.len() < 2 {
        return Markup::default();
    }
    // One column per series: its long name wraps in its header (class
    // `rel`), so six series fit the page's width; a table wider still
    // scrolls inside its box.
    html! {
        div class="scroll" { table class="rel" {
            tr { (th("point", false)) @for s in &agg.systems { (th(s, true)) } }
            @for p in &agg.points { (relative_row(agg, base, p)) }
            tr class="first" {
                td { b { "geometric mean" } }
                @for s in &agg.systems {
                    (tdn(&agg.ranking.iter().find(|r| &r.system == s)
                        .map(geomean_cell)
                        .unwrap_or_else(|| "–".into())))
                }
            }
        } }
    }
}

/// A series' geometric mean, marked: between runs by the run as a whole's
/// verdict; inside a run `?` when no point could be judged, `~` when none
/// differs.
fn geomean_cell(r: &crate::judging::rows::Rank) -> String {
    if r.points == 0 {
        return format!("– {}", verdict::EXCLUDED);
    }
    let pct = format::percent(r.relative);
    let mark = match (&r.whole, r.significant) {
        (Some(w), _) => verdict::percent_mark(Some(w)),
        (None, _) if r.too_few_trials => format!(" {}", verdict::TOO_FEW),
        (None, Some(0)) => format!(" {}", verdict::SAME),
        _ => String::new(),
    };
    format!("{pct}{mark}")
}

/// One point's row of [`relative`].
fn relative_row(agg: &Aggregate, base: &str, p: &crate::model::Point) -> Markup {
    let values: Vec<Option<f64>> = agg
        .systems
        .iter()
        .map(|s| agg.cell(s, p.index).and_then(Cell::headline))
        .collect();
    let best = values
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let b = agg.cell(base, p.index).and_then(Cell::headline);
    html! {
        tr {
            (td(&p.label()))
            @for (v, s) in values.iter().zip(&agg.systems) {
                @let excluded = agg.cell(s, p.index).is_some_and(|c| crate::judging::judge::excluded(c).is_some());
                @let text = match (v, b) {
                    (Some(v), _) if excluded => format!("{} {}", format::rate(*v), verdict::EXCLUDED),
                    (Some(v), Some(b)) if b > 0.0 => format!(
                        "{} ({}{})",
                        format::rate(*v),
                        format::percent(v / b),
                        verdict::percent_mark(agg.cell(s, p.index).and_then(|c| c.comparison.as_ref()))
                    ),
                    (Some(v), _) => format::rate(*v),
                    (None, _) => "–".into(),
                };
                @let class = if excluded {
                    "n bad"
                } else if *v == Some(best) && values.len() > 1 {
                    "n best"
                } else {
                    "n"
                };
                td class=(class) { (text) }
            }
        }
    }
}

/// One row per comparison against the baseline.
pub fn verdicts(agg: &Aggregate) -> Markup {
    let Some(base) = agg.baseline.as_deref() else {
        return Markup::default();
    };
    let rows: Vec<&Cell> = agg
        .cells
        .iter()
        .filter(|c| c.comparison.is_some())
        .collect();
    if rows.is_empty() {
        return Markup::default();
    }
    // Comparisons are of the statistic the tables show.
    let stat = agg.headline_word();
    let base_head = format!("{base} {stat}");
    let heads = [
        ("point", false),
        ("system", false),
        (base_head.as_str(), true),
        (stat, true),
        ("change", true),
        ("95% CI", true),
    ];
    let median = |c: &Cell| c.headline();
    html! {
        h3 { "Verdicts against " (base) }
        div class="scroll" { table class="grid" {
            tr { @for (h, n) in heads { (th(h, n)) } }
            @for c in &rows {
                @if let Some(cmp) = &c.comparison {
                    @let (short, tone) = verdict::short(cmp);
                    @let class = match tone {
                        Tone::Better => "good",
                        Tone::Worse => "bad",
                        Tone::Same | Tone::Unknown => "same",
                    };
                    @let b = agg.cell(base, c.point.index).and_then(median);
                    tr {
                        (td(&c.point.label()))
                        (td(&c.system))
                        (tdn(&opt(b, format::rate)))
                        (tdn(&opt(median(c), format::rate)))
                        // The sentence, with the series' own name, on hover:
                        // the table fits the page.
                        td class={ "wrap " (class) }
                            title=(crate::analysis::compare::sentence_for(cmp, &c.system)) { (short) }
                        (tdn(&verdict::ci(cmp).unwrap_or_else(|| "–".into())))
                    }
                }
            }
        } }
        p class="muted" {
            "Change: ratio of the " (stat) "s. " (tests_used(&rows)) " "
            (verdict::legend(agg.noise, &agg.kind_legend)) "."
        }
    }
}

/// What the verdicts' CIs and p-values come from, for the tests used.
fn tests_used(rows: &[&Cell]) -> String {
    use crate::analysis::compare::Test;
    let mut used: Vec<Test> = Vec::new();
    for c in rows {
        if let Some(t) = c
            .comparison
            .as_ref()
            .filter(|c| c.p_value.is_some())
            .map(|c| c.test)
        {
            if !used.contains(&t) {
                used.push(t);
            }
        }
    }
    let say = |t: &Test| match t {
        Test::MannWhitney => {
            "Inside one run: two-sided Mann-Whitney U on the trials, 95% CI by \
                              percentile bootstrap of the ratio of medians (none for best)."
        }
        Test::Welch => "Inside one run with 3 trials a side: Welch's t on all trials.",
        Test::Runs => {
            "Between runs: Student's t on the logs of each run's headline (the runs, \
                       not their trials, are the samples), 95% CI of the ratio of geometric means."
        }
    };
    if used.is_empty() {
        "No test could be run (too few trials or runs).".into()
    } else {
        used.iter().map(say).collect::<Vec<_>>().join(" ")
    }
}

/// Every (point, system) with its spread, latency and errors.
pub fn points(agg: &Aggregate) -> Markup {
    let bytes = agg.cells.iter().any(|c| c.gbit_s.unwrap_or(0.0) > 0.0);
    let heads = [
        ("point", false),
        ("system", false),
        (agg.headline_word(), true),
        ("min–max", true),
        ("95% CI", true),
        ("trials", true),
        ("p50", true),
        ("p90", true),
        ("p99", true),
        ("p99.9", true),
    ];
    // The CI of the median needs 6+ trials; without any, the column goes.
    let any_ci = agg
        .cells
        .iter()
        .any(|c| c.summary.as_ref().and_then(|s| s.median_ci).is_some());
    let mut notes: Vec<String> = Vec::new();
    let mut last = None;
    let mut rows = Vec::new();
    for c in &agg.cells {
        let first = last != Some(c.point.index);
        last = Some(c.point.index);
        rows.push(points_row(c, first, any_ci, bytes, &mut notes));
    }
    let timeouts: u64 = agg.cells.iter().map(|c| c.errors.timeout).sum();
    if timeouts > 0 {
        notes.push(format!(
            "† Latency percentiles leave out the {timeouts} timed-out requests, which have no latency."
        ));
    }
    html! {
        div class="scroll" { table class="grid" {
            tr {
                @for (h, n) in heads {
                    @if h != "95% CI" || any_ci { (th(h, n)) }
                }
                @if bytes { (th("Gbit/s", true)) }
                (th("errors", true))
                (th("notes", false))
            }
            @for r in rows { (r) }
        } }
        @if !notes.is_empty() {
            ol class="notes" { @for n in &notes { li { (n) } } }
        }
    }
}

/// One row of [`points`]; its summary notes become footnotes in `notes`.
fn points_row(c: &Cell, first: bool, any_ci: bool, bytes: bool, notes: &mut Vec<String>) -> Markup {
    let s = c.summary.as_ref();
    let range = s
        .filter(|s| s.n > 1)
        .map(|s| format!("{}–{}", format::rate(s.min), format::rate(s.max)))
        .unwrap_or_else(|| "–".into());
    let ci = s
        .and_then(|s| s.median_ci)
        .map(|(a, b)| format!("{}–{}", format::rate(a), format::rate(b)))
        .unwrap_or_else(|| "–".into());
    let left_out = crate::judging::judge::left_out(c);
    let used = c.throughput.len() - left_out;
    let mut trials = if c.failed.is_empty() {
        used.to_string()
    } else {
        format!("{used} ok / {}", c.trials())
    };
    if left_out > 0 {
        let words = crate::judging::judge::left_out_words(c);
        trials.push_str(&format!(" (+{words}, left out)"));
    }
    let cut = if c.errors.timeout > 0 { "†" } else { "" };
    let latencies = [
        c.latency.p50_us,
        c.latency.p90_us,
        c.latency.p99_us,
        c.latency.p999_us,
    ];
    let mut marks: Vec<String> = s
        .map(|s| s.notes.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|n| format!("[{}]", footnote(notes, n)))
        .collect();
    let excluded = crate::judging::judge::excluded(c);
    if let Some(why) = &excluded {
        marks.insert(0, format!("{} not comparable: {why}", verdict::EXCLUDED));
    }
    if left_out > 0 {
        marks.push(format!(
            "throughput and min–max of the {used} trial(s) the verdict used: \
             {} left out",
            crate::judging::judge::left_out_words(c)
        ));
    }
    let class = match (first, excluded.is_some()) {
        (true, true) => Some("first excluded"),
        (false, true) => Some("excluded"),
        (true, false) => Some("first"),
        (false, false) => None,
    };
    html! {
        tr class=[class] {
            td { @if first { (c.point.label()) } }
            (td(&c.system))
            td class="n" {
                b { (opt(c.headline(), format::rate)) }
                @if !c.client_bound.is_empty() { " " span class="flag" title="client-bound" { "!" } }
            }
            (tdn(&range))
            @if any_ci { (tdn(&ci)) }
            (tdn(&trials))
            @for v in latencies { (tdn(&opt(v, |v| format!("{}{cut}", format::latency_us(v))))) }
            @if bytes { (tdn(&opt(c.gbit_s, |v| format!("{v:.3}")))) }
            (tdn(&c.errors.describe()))
            (td(&marks.join(" ")))
        }
    }
}

/// The 1-based number of `note` in `notes`, adding it when new.
fn footnote(notes: &mut Vec<String>, note: &str) -> usize {
    match notes.iter().position(|n| n == note) {
        Some(i) => i + 1,
        None => {
            notes.push(note.to_string());
            notes.len()
        }
    }
}

/// Server CPU and memory per worker, columns only for what was measured.
pub fn server(agg: &Aggregate) -> Markup {
    type Col = (&'static str, fn(&Cell) -> Option<f64>, fn(f64) -> String);
    let cols: [Col; 20] = [
        (
            "server CPU (CPUs)",
            |c| c.server.cpu_util,
            |v| format!("{v:.2}"),
        ),
        (
            "machine busy",
            |c| c.server.cpu_busy,
            |v| format!("{:.0}%", v * 100.0),
        ),
        ("RSS / worker", |c| c.server.rss_per_worker, format::bytes),
        ("VSZ / worker", |c| c.server.vsz_per_worker, format::bytes),
        ("processes", |c| c.server.processes, |v| format!("{v:.0}")),
        ("threads", |c| c.server.threads, |v| format!("{v:.0}")),
        ("CPU MHz", |c| c.server.freq_mhz, |v| format!("{v:.0}")),
        ("syscalls / req", |c| work(c)?.syscalls, per_req),
        ("read calls / req", |c| work(c)?.read_calls, per_req),
        ("write calls / req", |c| work(c)?.write_calls, per_req),
        ("ctx switches / req", |c| work(c)?.context_switches, per_req),
        ("minor faults / req", |c| work(c)?.minor_faults, per_req),
        ("user µs / req", |c| work(c)?.user_us, per_req),
        ("system µs / req", |c| work(c)?.system_us, per_req),
        ("softirq µs / req", |c| work(c)?.softirq_us, per_req),
        (
            "instructions / req",
            |c| work(c)?.instructions,
            count_per_req,
        ),
        ("cycles / req", |c| work(c)?.cycles, count_per_req),
        ("IPC", |c| work(c)?.ipc, |v| format!("{v:.2}")),
        ("LLC misses / req", |c| work(c)?.llc_misses, per_req),
        ("branch misses / req", |c| work(c)?.branch_misses, per_req),
    ];
    let present: Vec<&Col> = cols
        .iter()
        .filter(|(_, get, _)| agg.cells.iter().any(|c| get(c).is_some()))
        .collect();
    if present.is_empty() {
        return html! { p class="muted" { "No server-side probe data in this run." } };
    }
    let firsts: Vec<bool> = agg
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| i == 0 || agg.cells[i - 1].point.index != c.point.index)
        .collect();
    html! {
        h3 { "Memory and CPU per point" }
        div class="scroll" { table class="grid" {
            tr {
                (th("point", false))
                (th("system", false))
                @for (h, _, _) in &present { (th(h, true)) }
            }
            @for (c, first) in agg.cells.iter().zip(firsts) {
                // The point label (every axis of a grouped sweep) may wrap, so
                // the table fits a 1400 px window without scrolling.
                tr class=[first.then_some("first")] {
                    td class="wrap" { @if first { (c.point.label()) } }
                    (td(&c.system))
                    @for (_, get, fmt) in &present { (tdn(&opt(get(c), fmt))) }
                }
            }
        } }
        p class="muted" {
            "Medians across the successful trials. Memory per worker: resident (RSS) and \
             virtual (VSZ) size of each server worker process. Per request: the kernel's \
             counts of the server's cgroup over the measured window (perf_event_open in \
             counting mode; CPU time from the cgroup's cpu.stat; softirq time from \
             /proc/stat on the CPUs a pinned server had to itself), divided by the trial's \
             completed requests. Hardware counts (instructions, cycles, IPC, misses) show \
             where the machine has a PMU."
        }
        (work_calls(agg))
    }
}

/// A cell's work per request, where it was counted.
fn work(c: &Cell) -> Option<&crate::judging::work::WorkPerOp> {
    c.server.work.as_ref()
}

/// A per-request figure: two decimals, three significant digits below 0.1.
fn per_req(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.2}")
    }
}

/// A large per-request count (instructions, cycles): whole, with
/// thousands apart (`48,213`).
fn count_per_req(v: f64) -> String {
    if v < 1000.0 {
        return per_req(v);
    }
    let digits = format!("{:.0}", v);
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The named system calls per request at each point, most first, and what
/// the counting could not give.
fn work_calls(agg: &Aggregate) -> Markup {
    let counted: Vec<&Cell> = agg
        .cells
        .iter()
        .filter(|c| c.server.work.is_some())
        .collect();
    let Some(first) = counted.first().and_then(|c| c.server.work.as_ref()) else {
        return html! {};
    };
    html! {
        h3 { "System calls per request" }
        div class="scroll" { table class="grid" {
            tr { (th("point", false)) (th("system", false)) (th("calls per request, most first", false)) }
            @for c in &counted {
                @let w = c.server.work.as_ref();
                tr {
                    td class="wrap" { (c.point.label()) }
                    (td(&c.system))
                    td { (w.map(|w| w.top_syscalls.iter().map(|t| format!("{} {}", t.name, per_req(t.per_op))).collect::<Vec<_>>().join(", ")).unwrap_or_default()) }
                }
            }
        } }
        @for u in &first.unavailable { p class="muted" { (u) } }
    }
}

/// The environment fingerprint as a key/value table. When the fingerprint
/// holds one entry per system (under `systems`), each gets a column and
/// rows whose values differ are highlighted.
pub fn environment(env: &Value) -> Markup {
    let columns: Vec<(String, &Value)> = match env.get("systems").and_then(Value::as_object) {
        Some(per) if per.values().all(Value::is_object) && per.len() > 1 => {
            per.iter().map(|(k, v)| (k.clone(), v)).collect()
        }
        _ => vec![("value".into(), env)],
    };
    fingerprint_table(&columns)
}

/// A table of flattened fingerprints, one column each; rows that differ
/// between columns get the `diff` class.
pub fn fingerprint_table(columns: &[(String, &Value)]) -> Markup {
    let flat: Vec<Vec<(String, String)>> = columns.iter().map(|(_, v)| flatten(v)).collect();
    let mut keys: Vec<String> = Vec::new();
    for k in flat.iter().flatten().map(|(k, _)| k) {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    if keys.is_empty() {
        return html! { p class="muted" { "No environment fingerprint was recorded." } };
    }
    let value = |f: &[(String, String)], k: &str| -> String {
        f.iter()
            .find(|(fk, _)| fk == k)
            .map_or_else(|| "–".into(), |(_, v)| v.clone())
    };
    html! {
        div class="scroll" { table {
            tr { (th("key", false)) @for (name, _) in columns { (th(name, false)) } }
            @for k in &keys {
                @let vals: Vec<String> = flat.iter().map(|f| value(f, k)).collect();
                @let differs = vals.iter().any(|v| *v != vals[0]);
                tr class=[differs.then_some("diff")] {
                    (td(k))
                    @for v in &vals { (td(v)) }
                }
            }
        } }
        @if columns.len() > 1 {
            p class="muted" { "Highlighted rows differ between the fingerprints." }
        }
    }
}

/// Flattened keys (`cpu.model`, `hosts.h[0]`) to display strings, in key
/// order; arrays of scalars join with commas.
fn flatten(v: &Value) -> Vec<(String, String)> {
    crate::record::environment::flatten_leaves(v, crate::record::environment::ScalarLists::Whole)
        .into_iter()
        .map(|(k, x)| {
            let shown = match x {
                Value::Array(a) => {
                    let items: Vec<String> = a.iter().map(crate::model::display_value).collect();
                    items.join(", ")
                }
                Value::Null => "–".into(),
                other => crate::model::display_value(other),
            };
            (k, shown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_flatten_and_highlight_differences() {
        let a = json!({"kernel": "6.1.0", "cpu": {"model": "EPYC", "count": 2}, "sysctl": ["a=1", "b=2"]});
        let b = json!({"kernel": "6.6.0", "cpu": {"model": "EPYC", "count": 2}});
        let html = fingerprint_table(&[("A".into(), &a), ("B <x>".into(), &b)]).into_string();
        assert!(html.contains(r#"<tr class="diff"><td>kernel</td><td>6.1.0</td><td>6.6.0</td>"#));
        assert!(html.contains("<tr><td>cpu.model</td><td>EPYC</td><td>EPYC</td>"));
        assert!(html.contains(r#"<tr class="diff"><td>sysctl</td><td>a=1, b=2</td><td>–</td>"#));
        assert!(html.contains("B &lt;x&gt;"));
    }

    /// A run counted on a machine with a PMU: the real counts of an Intel
    /// Kaby Lake's `perf stat -x,` (Jin Yao, linux-kernel, 2021-03-19;
    /// `tests/fixtures/perf-stat/kbl-ppc-perf-stat-x.csv`), read as the probe
    /// reads them, show per request, with perf's instructions per cycle.
    #[test]
    fn a_pmu_machines_counts_show_per_request_with_perfs_ipc() {
        use crate::probe::work::perf_stat_fixture;
        let window = &perf_stat_fixture::windows("kbl-ppc-perf-stat-x.csv")[0];
        let counts = perf_stat_fixture::work_counts(window);
        let mut data = crate::judging::test_support::run_data(&["a"]);
        for t in &mut data.trials {
            if let (Some(m), Some(p)) = (t.measurement.as_mut(), t.probe.as_mut()) {
                m.requests = 1000;
                p.work = Some(counts.clone());
            }
        }
        let agg = crate::judging::analyse::aggregate(&data);
        let html = server(&agg).into_string();
        for column in [
            "instructions / req",
            "cycles / req",
            "IPC",
            "branch misses / req",
        ] {
            assert!(html.contains(column), "no {column} column");
        }
        assert!(!html.contains("LLC misses / req"), "not counted: no column");
        // 10,562,267 instructions over 1000 requests; perf's 0.51 per cycle.
        assert!(html.contains(">10,562<"), "{html}");
        assert!(html.contains(">20,574<"), "{html}");
        assert!(html.contains(">0.51<"), "{html}");
        assert!(html.contains(">106.15<"), "{html}");
    }

    #[test]
    fn per_system_fingerprints_become_columns() {
        let env = json!({"systems": {"linux": {"kernel": "6.1"}, "bsd": {"kernel": "14.0"}}});
        let html = environment(&env).into_string();
        assert!(html.contains(r#"class="diff""#));
        assert!(environment(&json!({}))
            .into_string()
            .contains("No environment fingerprint"));
    }
}
