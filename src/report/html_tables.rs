//! The HTML report's tables. Each returns a fragment, empty when the run
//! has nothing to show in it.

use super::fits::shape_sentence;
use super::format::{self, escape};
use super::rows::{Aggregate, Cell};
use super::verdict::{self, Tone};
use serde_json::Value;
use std::fmt::Write;

/// A header cell; `n` marks numeric (right-aligned) columns.
fn th(label: &str, numeric: bool) -> String {
    let class = if numeric { r#" class="n""# } else { "" };
    format!("<th{class}>{}</th>", escape(label))
}

fn td(text: &str) -> String {
    format!("<td>{}</td>", escape(text))
}

fn tdn(text: &str) -> String {
    format!(r#"<td class="n">{}</td>"#, escape(text))
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "–".into())
}

/// Peak, past-peak behaviour and USL parameters per system (and group);
/// the USL columns only when some series was fitted.
pub fn scaling(agg: &Aggregate) -> String {
    let Some(axis) = agg.layout.x_axis.as_deref() else {
        return String::new();
    };
    let any_usl = agg.fits.iter().any(|f| f.usl.is_some());
    if !any_usl && agg.fits.iter().all(|f| f.shape.is_none()) {
        return String::new();
    }
    let groups = agg.layout.groups.len() > 1;
    let mut out = String::from("<h3>Scaling</h3><div class=scroll><table><tr>");
    out.push_str(&th("system", false));
    if groups {
        out.push_str(&th("group", false));
    }
    out.push_str(&th("peak and past the peak", false));
    if any_usl {
        for h in ["σ (contention)", "κ (coherency)", "λ", "N*", "R²"] {
            out.push_str(&th(h, true));
        }
    }
    out.push_str("</tr>");
    for f in &agg.fits {
        out.push_str("<tr>");
        out.push_str(&td(&f.system));
        if groups {
            out.push_str(&td(&agg.layout.groups[f.group].label));
        }
        let shape = f.shape.as_ref().map(|s| shape_sentence(s, axis));
        out.push_str(&td(&shape.unwrap_or_default()));
        if any_usl {
            out.push_str(&usl_cells(f.usl.as_ref(), f.points.len()));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    if let Some(short) = super::fits::too_short_sentence(agg) {
        let _ = write!(out, r#"<p class="muted">{}</p>"#, escape(&short));
    }
    if any_usl {
        out.push_str(&usl_notes(agg, axis));
    }
    out
}

/// The five USL cells of a scaling-table row.
fn usl_cells(usl: Option<&Result<crate::analysis::usl::UslFit, String>>, levels: usize) -> String {
    match usl {
        Some(Ok(u)) => {
            let n_star = u
                .peak_concurrency
                .map(|n| format!("{n:.0}"))
                .unwrap_or_else(|| "∞".into());
            [
                format::sig(u.sigma, 3),
                format::sig(u.kappa, 2),
                format::rate(u.lambda),
                n_star,
                format!("{:.3}", u.r_squared),
            ]
            .iter()
            .map(|v| tdn(v))
            .collect()
        }
        Some(Err(e)) => format!(
            r#"<td colspan="5" class="muted">fit failed: {}</td>"#,
            escape(e)
        ),
        None => format!(
            r#"<td colspan="5" class="muted">no fit: {levels} level{}, a fit needs {}</td>"#,
            if levels == 1 { "" } else { "s" },
            crate::analysis::usl::FEW_POINTS
        ),
    }
}

/// The fits' warnings and what the USL parameters mean.
fn usl_notes(agg: &Aggregate, axis: &str) -> String {
    let mut out = String::new();
    for f in &agg.fits {
        for w in f.usl.iter().flatten().flat_map(|u| &u.warnings) {
            let _ = write!(
                out,
                r#"<p class="note">USL fit of {}: {}</p>"#,
                escape(&f.name(agg)),
                escape(w)
            );
        }
    }
    let _ = write!(
        out,
        "<p class=\"muted\">Universal Scalability Law: X(N) = λN / (1 + σ(N−1) + κN(N−1)), \
         fitted to the {} throughput at each {axis} value. σ is the serial fraction \
         (contention), κ the cost of keeping shared state coherent; \
         N* = √((1−σ)/κ) is where throughput peaks.</p>",
        agg.headline_word()
    );
    out
}

/// Headline throughput per point and system, with the ratio to the
/// baseline; the best system at each point in bold.
pub fn relative(agg: &Aggregate) -> String {
    let Some(base) = agg.baseline.as_deref() else {
        return String::new();
    };
    if agg.systems.len() < 2 {
        return String::new();
    }
    let mut out = String::from("<div class=scroll><table><tr>");
    out.push_str(&th("point", false));
    for s in &agg.systems {
        out.push_str(&th(s, true));
    }
    out.push_str("</tr>");
    for p in &agg.points {
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
        let _ = write!(out, "<tr>{}", td(&p.label()));
        for (v, s) in values.iter().zip(&agg.systems) {
            let excluded = agg
                .cell(s, p.index)
                .is_some_and(|c| c.not_comparable.is_some());
            let text = match (v, b) {
                (Some(v), _) if excluded => {
                    format!("{} {}", format::rate(*v), verdict::EXCLUDED)
                }
                (Some(v), Some(b)) if b > 0.0 => {
                    format!("{} ({})", format::rate(*v), format::percent(v / b))
                }
                (Some(v), _) => format::rate(*v),
                (None, _) => "–".into(),
            };
            let class = if excluded {
                "n bad"
            } else if *v == Some(best) && values.len() > 1 {
                "n best"
            } else {
                "n"
            };
            let _ = write!(out, r#"<td class="{class}">{}</td>"#, escape(&text));
        }
        out.push_str("</tr>");
    }
    out.push_str(r#"<tr class="first"><td><b>geometric mean</b></td>"#);
    for s in &agg.systems {
        let r = agg.ranking.iter().find(|r| &r.system == s);
        out.push_str(&tdn(&r
            .map(|r| format::percent(r.relative))
            .unwrap_or_else(|| "–".into())));
    }
    out.push_str("</tr></table></div>");
    out
}

/// One row per comparison against the baseline.
pub fn verdicts(agg: &Aggregate) -> String {
    let Some(base) = agg.baseline.as_deref() else {
        return String::new();
    };
    let rows: Vec<&Cell> = agg
        .cells
        .iter()
        .filter(|c| c.comparison.is_some())
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        r#"<h3>Verdicts against {}</h3><div class=scroll><table class="grid"><tr>"#,
        escape(base)
    );
    // Comparisons are of the statistic the tables show.
    let stat = agg.headline_word();
    let base_head = format!("{base} {stat}");
    let head = stat;
    for (h, n) in [
        ("point", false),
        ("system", false),
        (base_head.as_str(), true),
        (head, true),
        ("change", true),
        ("95% CI", true),
        ("verdict", false),
    ] {
        out.push_str(&th(h, n));
    }
    out.push_str("</tr>");
    for c in rows {
        let Some(cmp) = &c.comparison else { continue };
        let (short, tone) = verdict::short(cmp);
        let class = match tone {
            Tone::Better => "good",
            Tone::Worse => "bad",
            Tone::Same | Tone::Unknown => "same",
        };
        let median = |c: &Cell| c.headline();
        let b = agg.cell(base, c.point.index).and_then(median);
        let _ = write!(
            out,
            r#"<tr>{}{}{}{}<td class="n {class}">{}</td>{}<td class="wrap {class}">{}</td></tr>"#,
            td(&c.point.label()),
            td(&c.system),
            tdn(&opt(b, format::rate)),
            tdn(&opt(median(c), format::rate)),
            escape(&short),
            tdn(&verdict::ci(cmp).unwrap_or_else(|| "–".into())),
            escape(&cmp.sentence)
        );
    }
    out.push_str("</table></div>");
    let _ = write!(
        out,
        r#"<p class="muted">Change: ratio of the {stat}s. 95% CI: percentile bootstrap of the ratio of medians (none for best). p: two-sided Mann-Whitney U. {}.</p>"#,
        escape(&verdict::legend(agg.noise))
    );
    out
}

/// Every (point, system) with its spread, latency and errors.
pub fn points(agg: &Aggregate) -> String {
    let bytes = agg.cells.iter().any(|c| c.gbit_s.unwrap_or(0.0) > 0.0);
    let mut out = String::from(r#"<div class=scroll><table class="grid"><tr>"#);
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
    for (h, n) in heads {
        if h != "95% CI" || any_ci {
            out.push_str(&th(h, n));
        }
    }
    if bytes {
        out.push_str(&th("Gbit/s", true));
    }
    out.push_str(&th("errors", true));
    out.push_str(&th("notes", false));
    out.push_str("</tr>");
    let mut last = None;
    let mut notes: Vec<String> = Vec::new();
    for c in &agg.cells {
        let first = last != Some(c.point.index);
        last = Some(c.point.index);
        let s = c.summary.as_ref();
        let flag = if c.client_bound.is_empty() {
            String::new()
        } else {
            r#" <span class="flag" title="client-bound">!</span>"#.into()
        };
        let class = match (first, c.not_comparable.is_some()) {
            (true, true) => r#" class="first excluded""#,
            (false, true) => r#" class="excluded""#,
            (true, false) => r#" class="first""#,
            (false, false) => "",
        };
        let _ = write!(
            out,
            r#"<tr{class}><td>{}</td>{}<td class="n"><b>{}</b>{flag}</td>"#,
            if first {
                escape(&c.point.label())
            } else {
                String::new()
            },
            td(&c.system),
            escape(&opt(c.headline(), format::rate)),
        );
        out.push_str(&tdn(&s
            .filter(|s| s.n > 1)
            .map(|s| format!("{}–{}", format::rate(s.min), format::rate(s.max)))
            .unwrap_or_else(|| "–".into())));
        if any_ci {
            out.push_str(&tdn(&s
                .and_then(|s| s.median_ci)
                .map(|(a, b)| format!("{}–{}", format::rate(a), format::rate(b)))
                .unwrap_or_else(|| "–".into())));
        }
        let trials = if c.failed.is_empty() {
            c.throughput.len().to_string()
        } else {
            format!("{} ok / {}", c.throughput.len(), c.trials())
        };
        out.push_str(&tdn(&trials));
        for v in [
            c.latency.p50_us,
            c.latency.p90_us,
            c.latency.p99_us,
            c.latency.p999_us,
        ] {
            let cut = if c.errors.timeout > 0 { "†" } else { "" };
            out.push_str(&tdn(&opt(v, |v| format!("{}{cut}", format::latency_us(v)))));
        }
        if bytes {
            out.push_str(&tdn(&opt(c.gbit_s, |v| format!("{v:.3}"))));
        }
        out.push_str(&tdn(&c.errors.describe()));
        let mut marks: Vec<String> = s
            .map(|s| s.notes.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|n| format!("[{}]", footnote(&mut notes, n)))
            .collect();
        if let Some(why) = &c.not_comparable {
            marks.insert(0, format!("{} not comparable: {why}", verdict::EXCLUDED));
        }
        out.push_str(&td(&marks.join(" ")));
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    let timeouts: u64 = agg.cells.iter().map(|c| c.errors.timeout).sum();
    if timeouts > 0 {
        notes.push(format!(
            "† Latency percentiles leave out the {timeouts} timed-out requests, which have no latency."
        ));
    }
    if !notes.is_empty() {
        out.push_str(r#"<ol class="notes">"#);
        for n in &notes {
            let _ = write!(out, "<li>{}</li>", escape(n));
        }
        out.push_str("</ol>");
    }
    out
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
pub fn server(agg: &Aggregate) -> String {
    type Col = (&'static str, fn(&Cell) -> Option<f64>, fn(f64) -> String);
    let cols: [Col; 7] = [
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
    ];
    let present: Vec<&Col> = cols
        .iter()
        .filter(|(_, get, _)| agg.cells.iter().any(|c| get(c).is_some()))
        .collect();
    if present.is_empty() {
        return r#"<p class="muted">No server-side probe data in this run.</p>"#.into();
    }
    let mut out = String::from(
        r#"<h3>Memory and CPU per point</h3><div class=scroll><table class="grid"><tr>"#,
    );
    out.push_str(&th("point", false));
    out.push_str(&th("system", false));
    for (h, _, _) in &present {
        out.push_str(&th(h, true));
    }
    out.push_str("</tr>");
    let mut last = None;
    for c in &agg.cells {
        let first = last != Some(c.point.index);
        last = Some(c.point.index);
        let label = if first {
            c.point.label()
        } else {
            String::new()
        };
        let class = if first { r#" class="first""# } else { "" };
        // The point label (every axis of a grouped sweep) may wrap, so the
        // table fits a 1400 px window without scrolling.
        let _ = write!(
            out,
            r#"<tr{class}><td class="wrap">{}</td>{}"#,
            escape(&label),
            td(&c.system)
        );
        for (_, get, fmt) in &present {
            out.push_str(&tdn(&opt(get(c), fmt)));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div><p class=\"muted\">Medians across the successful trials. Memory per worker: resident (RSS) and virtual (VSZ) size of each server worker process.</p>");
    out
}

/// The environment fingerprint as a key/value table. When the fingerprint
/// holds one entry per system (under `systems`), each gets a column and
/// rows whose values differ are highlighted.
pub fn environment(env: &Value) -> String {
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
pub fn fingerprint_table(columns: &[(String, &Value)]) -> String {
    let flat: Vec<Vec<(String, String)>> = columns.iter().map(|(_, v)| flatten(v)).collect();
    let mut keys: Vec<String> = Vec::new();
    for k in flat.iter().flatten().map(|(k, _)| k) {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    if keys.is_empty() {
        return r#"<p class="muted">No environment fingerprint was recorded.</p>"#.into();
    }
    let mut out = String::from("<div class=scroll><table><tr>");
    out.push_str(&th("key", false));
    for (name, _) in columns {
        out.push_str(&th(name, false));
    }
    out.push_str("</tr>");
    for k in &keys {
        let vals: Vec<&str> = flat
            .iter()
            .map(|f| {
                f.iter()
                    .find(|(fk, _)| fk == k)
                    .map(|(_, v)| v.as_str())
                    .unwrap_or("–")
            })
            .collect();
        let differs = vals.iter().any(|v| *v != vals[0]);
        let _ = write!(
            out,
            "<tr{}>{}",
            if differs { r#" class="diff""# } else { "" },
            td(k)
        );
        for v in vals {
            out.push_str(&td(v));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    if columns.len() > 1 {
        out.push_str(r#"<p class="muted">Highlighted rows differ between the fingerprints.</p>"#);
    }
    out
}

/// Dotted keys to display strings, in document order; arrays of scalars
/// join with commas.
fn flatten(v: &Value) -> Vec<(String, String)> {
    let scalar = |x: &Value| !x.is_object() && !x.is_array();
    let mut out = Vec::new();
    crate::probe::diff::walk_leaves(
        v,
        &|x| match x {
            Value::Array(a) => a.iter().all(scalar),
            other => scalar(other),
        },
        &mut |k, x| {
            let shown = match x {
                Value::Array(a) => {
                    let items: Vec<String> = a.iter().map(crate::model::display_value).collect();
                    items.join(", ")
                }
                Value::Null => "–".into(),
                other => crate::model::display_value(other),
            };
            out.push((k, shown));
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_flatten_and_highlight_differences() {
        let a = json!({"kernel": "6.1.0", "cpu": {"model": "EPYC", "count": 2}, "sysctl": ["a=1", "b=2"]});
        let b = json!({"kernel": "6.6.0", "cpu": {"model": "EPYC", "count": 2}});
        let html = fingerprint_table(&[("A".into(), &a), ("B <x>".into(), &b)]);
        assert!(html.contains(r#"<tr class="diff"><td>kernel</td><td>6.1.0</td><td>6.6.0</td>"#));
        assert!(html.contains("<tr><td>cpu.model</td><td>EPYC</td><td>EPYC</td>"));
        assert!(html.contains(r#"<tr class="diff"><td>sysctl</td><td>a=1, b=2</td><td>–</td>"#));
        assert!(html.contains("B &lt;x&gt;"));
    }

    #[test]
    fn per_system_fingerprints_become_columns() {
        let env = json!({"systems": {"linux": {"kernel": "6.1"}, "bsd": {"kernel": "14.0"}}});
        let html = environment(&env);
        assert!(html.contains(r#"class="diff""#));
        assert!(environment(&json!({})).contains("No environment fingerprint"));
    }
}
