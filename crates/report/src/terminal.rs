//! The terminal report: one row per (point, system) with the headline
//! throughput, its spread, latency, errors and a benchstat-style verdict
//! against the baseline; then the ranking, fits, warnings and failures.

use super::text_table::{Column, Style, TextTable};
use crate::analysis::compare::Verdict;
use crate::judging::analyse::aggregate;
use crate::judging::fits::{ranking_line, shape_sentence, standing, usl_params, Standing};
use crate::judging::format;
use crate::judging::rows::{Aggregate, Cell, TrialNote};
use crate::judging::verdict::{self, Tone};
use crate::store::{Run, RunData};
use std::fmt::Write;

/// The whole terminal report. `color` adds ANSI styles (pass whether
/// standard output is a terminal). The table fits the terminal's width when
/// standard output is one; piped output keeps every column.
pub fn render(data: &RunData, color: bool) -> String {
    render_width(data, color, terminal_width())
}

/// As [`render`], at an explicit width.
pub fn render_width(data: &RunData, color: bool, width: usize) -> String {
    render_aggregate(&aggregate(data), &data.run, color, width)
}

/// As [`render_width`], from an aggregate already computed from the run.
pub(crate) fn render_aggregate(agg: &Aggregate, run: &Run, color: bool, width: usize) -> String {
    let mut out = header(agg, run, color);
    for (g, group) in agg.layout.groups.iter().enumerate() {
        if agg.layout.groups.len() > 1 {
            let _ = writeln!(out, "\n{}", Style::Bold.paint(&group.label, color));
        } else {
            out.push('\n');
        }
        out.push_str(&point_table(agg, g).render(width, color));
    }
    out.push_str(&table_notes(agg));
    out.push_str(&crate::energy::terminal_lines(agg));
    out.push_str(&ranking(agg, color));
    out.push_str(&curve_verdict(agg, color));
    out.push_str(&fits(agg, color));
    out.push_str(&warnings(agg, color));
    out.push_str(&order_effect(agg, color));
    out
}

/// The order-effect check's lines ([`crate::judging::order_effect`]): yellow when
/// an effect cleared the floor.
fn order_effect(agg: &Aggregate, color: bool) -> String {
    let Some(e) = &agg.order_effect else {
        return String::new();
    };
    let found = e.lines.iter().any(|l| !l.starts_with("order effect: none"));
    let mut out = String::from("\n");
    for l in &e.lines {
        let style = if found { Style::Yellow } else { Style::Plain };
        let _ = writeln!(out, "{}", style.paint(l, color));
    }
    out
}

fn header(agg: &Aggregate, run: &Run, color: bool) -> String {
    let mut out = String::new();
    let quick = if run.quick {
        format!(" {}", Style::Yellow.paint("QUICK", color))
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}{quick}  run {} ({}), started {}",
        Style::Bold.paint(&run.name, color),
        run.id,
        run.status,
        format::date(run.started_at)
    );
    let kind = if run.quick {
        "quick run (--quick: the file's [quick] sweep and trials)"
    } else {
        "ran"
    };
    let _ = writeln!(out, "{kind}: {}", agg.ran());
    let headline = agg.headline_word();
    let base = agg
        .baseline
        .as_deref()
        .map(|b| {
            let floor = format::percent_fine(agg.noise);
            format!(
                "; verdicts against {b} ({}, {floor} noise floor)",
                tests_used(agg)
            )
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "throughput in {}, {headline} of the successful trials{base}",
        agg.unit
    );
    for n in &agg.notes {
        let _ = writeln!(out, "{}", Style::Yellow.paint(&format!("note: {n}"), color));
    }
    out
}

fn point_table(agg: &Aggregate, group: usize) -> TextTable {
    let first = agg.layout.x_axis.as_deref().unwrap_or("point");
    let headline = agg.headline_word();
    let vs = agg
        .baseline
        .as_deref()
        .filter(|_| agg.systems.len() > 1)
        .map(|b| format!("vs {b}"))
        .unwrap_or_default();
    let mut columns = vec![
        Column::left(first, 255),
        Column::left("system", 255),
        Column::right(headline, 255),
        Column::right("min–max", 5),
        Column::right("95% CI", 1),
        Column::right("n", 3),
        Column::right("p50", 4),
        Column::right("p99", 6),
        Column::left("errors", 2),
        Column::left("limiter", 3),
        Column::left(&vs, 254),
    ];
    // With an energy source: "W" and "ops/J" before the verdict.
    let energy = crate::judging::energy::measured(agg);
    if energy {
        columns.insert(9, Column::right("W", 7));
        columns.insert(10, Column::right("ops/J", 7));
    }
    // A single system is compared with nothing: no "vs" column.
    if vs.is_empty() {
        columns.pop();
    }
    let compared = !vs.is_empty();
    let mut t = TextTable::new(columns);
    let mut last_point = None;
    for c in agg.cells_in_group(group) {
        let label = if last_point == Some(c.point.index) {
            String::new()
        } else {
            agg.layout.short_label(&c.point)
        };
        last_point = Some(c.point.index);
        let mut row = cell_row(agg, c, label);
        if energy {
            let [w, ops] = crate::energy::terminal_cells(c);
            row.insert(9, (w, Style::Plain));
            row.insert(10, (ops, Style::Plain));
        }
        if !compared {
            row.pop();
        }
        t.row(row);
    }
    // The CI of the median needs 6+ trials; without any, the column goes.
    t.drop_if_blank("95% CI", "-");
    t
}

fn cell_row(agg: &Aggregate, c: &Cell, label: String) -> Vec<(String, Style)> {
    let plain = |s: String| (s, Style::Plain);
    let s = c.summary.as_ref();
    let flag = if c.client_bound.is_empty() { "" } else { " !" };
    let headline = s
        .map(|s| format!("{}{flag}", format::rate(s.headline)))
        .unwrap_or_else(|| "failed".into());
    let range = s
        .filter(|s| s.n > 1)
        .map(|s| format!("{}–{}", format::rate(s.min), format::rate(s.max)));
    let ci = s
        .and_then(|s| s.median_ci)
        .map(|(lo, hi)| format!("{}–{}", format::rate(lo), format::rate(hi)));
    let n = trials_cell(c);
    // Timed-out requests have no latency: percentiles that leave them out
    // are marked.
    let cut = if c.errors.timeout > 0 { "†" } else { "" };
    let lat = |v: Option<f64>| {
        v.map(|v| format!("{}{cut}", format::latency_us(v)))
            .unwrap_or_else(|| "-".into())
    };
    let errors = c.errors.total();
    let verdict = if Some(&c.system) == agg.baseline.as_ref() {
        match &crate::judging::judge::excluded(c) {
            Some(why) => (format!("baseline, {} {why}", verdict::EXCLUDED), Style::Red),
            None => ("baseline".to_string(), Style::Dim),
        }
    } else {
        match &c.comparison {
            Some(cmp) => {
                let (text, tone) = verdict::short(cmp);
                (text, tone_style(tone))
            }
            None => ("-".into(), Style::Dim),
        }
    };
    vec![
        plain(label),
        plain(c.system.clone()),
        (headline, if s.is_some() { Style::Bold } else { Style::Red }),
        plain(range.unwrap_or_else(|| "-".into())),
        plain(ci.unwrap_or_else(|| "-".into())),
        (
            n,
            if c.failed.is_empty() {
                Style::Plain
            } else {
                Style::Red
            },
        ),
        plain(lat(c.latency.p50_us)),
        plain(lat(c.latency.p99_us)),
        (
            c.errors.describe(),
            match (errors, &c.not_comparable) {
                (_, Some(_)) => Style::Red,
                (0, None) => Style::Plain,
                _ => Style::Yellow,
            },
        ),
        plain(crate::limiter_view::table_cell(c.limiter.as_ref())),
        verdict,
    ]
}

/// The `n` column: the trials the median (and the verdict) is over, `+1!`
/// for client-bound ones left out of both, `/4` for all the trials when
/// some failed: `2+1!/4`.
fn trials_cell(c: &Cell) -> String {
    let left_out = crate::judging::judge::left_out(c);
    let used = c.throughput.len() - left_out;
    let bound = if left_out > 0 {
        format!("+{left_out}!")
    } else {
        String::new()
    };
    let all = if c.failed.is_empty() {
        String::new()
    } else {
        format!("/{}", c.trials())
    };
    format!("{used}{bound}{all}")
}

fn tone_style(t: Tone) -> Style {
    match t {
        Tone::Better => Style::Green,
        Tone::Worse => Style::Red,
        Tone::Same | Tone::Unknown => Style::Dim,
    }
}

/// The legend of the verdict marks, and what the † on latencies means.
fn table_notes(agg: &Aggregate) -> String {
    let mut out = String::new();
    let shown: Vec<&Verdict> = agg
        .cells
        .iter()
        .filter_map(|c| c.comparison.as_ref().map(|cmp| &cmp.verdict))
        .collect();
    for (mark, meaning) in verdict::legend_items(agg.noise, &agg.kind_legend) {
        let used = shown.iter().any(|v| verdict::mark(v) == Some(mark));
        if used {
            let _ = writeln!(out, "  {mark} {meaning}");
        }
    }
    let left_out: usize = agg.cells.iter().map(crate::judging::judge::left_out).sum();
    if left_out > 0 {
        let _ = writeln!(
            out,
            "  +N! in n: N client-bound trial(s) left out of the {} and the verdict ({left_out} in all, with the unsteady ones of a run that excludes them): the figures shown are the ones the verdict used",
            agg.headline_word()
        );
    }
    let timeouts: u64 = agg.cells.iter().map(|c| c.errors.timeout).sum();
    if timeouts > 0 {
        let _ = writeln!(
            out,
            "  † latency percentiles leave out the {timeouts} timed-out requests, which have no latency"
        );
    }
    out
}

fn ranking(agg: &Aggregate, color: bool) -> String {
    if agg.ranking.len() < 2 {
        return String::new();
    }
    let status = standing(agg)
        .map(|s| {
            let style = match s {
                Standing::Significant { .. } => Style::Bold,
                Standing::NotSignificant { .. } => Style::Dim,
                Standing::TooFewTrials { .. } | Standing::TooFewRuns { .. } => Style::Yellow,
            };
            format!("  {}\n", style.paint(&s.sentence(agg.noise), color))
        })
        .unwrap_or_default();
    let line = ranking_line(&agg.ranking, agg.noise);
    if !crate::judging::fits::ranks_anything(&agg.ranking) {
        let style = Style::Red;
        return format!(
            "\n{} {}\n",
            Style::Bold.paint("Ranking:", color),
            style.paint(&line, color)
        );
    }
    format!(
        "\n{} {}\n{status}  (geometric mean over {} of the {} throughput relative to {})\n",
        Style::Bold.paint("Ranking:", color),
        line,
        crate::judging::fits::mean_over(agg),
        agg.headline_word(),
        agg.baseline.as_deref().unwrap_or("the baseline")
    )
}

/// A single system has no ranking: its summary is the curve's own verdict.
fn curve_verdict(agg: &Aggregate, color: bool) -> String {
    if agg.systems.len() != 1 {
        return String::new();
    }
    let lines = crate::judging::fits::curve_verdicts(agg);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{}\n", Style::Bold.paint("Verdict:", color));
    for l in lines {
        let _ = writeln!(out, "  {l}");
    }
    out
}

fn fits(agg: &Aggregate, color: bool) -> String {
    let Some(axis) = agg.layout.x_axis.as_deref() else {
        return String::new();
    };
    let mut out = String::new();
    let width = agg
        .systems
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    for f in &agg.fits {
        let group = &agg.layout.groups[f.group].label;
        let who = if group.is_empty() {
            format!("{:width$}", f.system)
        } else {
            format!("{:width$} {group}", f.system)
        };
        let usl = match &f.usl {
            Some(Ok(u)) => format!(
                "USL {} λ={} R²={:.3}{}",
                usl_params(u),
                format::rate(u.lambda),
                u.r_squared,
                f.caveat.after_fit()
            ),
            Some(Err(e)) => format!("USL fit failed: {e}"),
            None => String::new(),
        };
        let shape = f
            .shape
            .as_ref()
            .map(|s| shape_sentence(s, axis) + &f.caveat.after_shape())
            .unwrap_or_default();
        if !usl.is_empty() || !shape.is_empty() {
            // The first line carries the label, whichever of the two exists.
            let (first, second) = if usl.is_empty() {
                (shape, String::new())
            } else {
                (usl, shape)
            };
            let _ = writeln!(out, "  {who}  {first}");
            let pad = who.chars().count();
            if !second.is_empty() {
                let _ = writeln!(out, "  {:pad$}  {second}", "");
            }
            for w in f.usl.iter().flatten().flat_map(|u| &u.warnings) {
                let _ = writeln!(out, "  {:pad$}  {}", "", Style::Yellow.paint(w, color));
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    let short = crate::judging::fits::too_short_sentence(agg)
        .map(|s| format!("  {}\n", Style::Dim.paint(&s, color)))
        .unwrap_or_default();
    format!(
        "\n{}\n{short}{out}",
        Style::Bold.paint(&format!("Scaling over {axis}:"), color)
    )
}

fn warnings(agg: &Aggregate, color: bool) -> String {
    let mut out = String::new();
    let bound: Vec<_> = agg.client_bound().collect();
    if !bound.is_empty() {
        let title = "Client-bound (marked !): the load generator, not the server, was the limit:";
        let _ = writeln!(out, "\n{}", Style::Yellow.paint(title, color));
        for line in per_cell(&bound) {
            let _ = writeln!(out, "  {line}");
        }
    }
    let probe = agg.probe_warnings().count();
    if probe > 0 {
        let text = format!("{probe} probe warning(s); see the HTML report or the JSON export.");
        let _ = writeln!(out, "\n{}", Style::Yellow.paint(&text, color));
    }
    let failed: Vec<_> = agg.failures().collect();
    if !failed.is_empty() {
        let title = format!("Failed trials ({}), not in the statistics:", failed.len());
        trial_list(&mut out, &Style::Red.paint(&title, color), &failed);
    }
    out
}

/// One line per cell rather than per trial (the run printed each trial's
/// warning as it happened): `linux connections=4000 trials 1, 3: client
/// CPU 99% of its cores`, with the first trial's reason.
fn per_cell(notes: &[(&Cell, &TrialNote)]) -> Vec<String> {
    let mut lines: Vec<(String, Vec<u32>, &str)> = Vec::new();
    for (c, n) in notes {
        let who = format!("{} {}", c.system, c.point.label());
        match lines.last_mut() {
            Some((w, trials, _)) if *w == who => trials.push(n.trial),
            _ => {
                let why = n.reason.strip_prefix("client-bound: ").unwrap_or(&n.reason);
                lines.push((who, vec![n.trial], why));
            }
        }
    }
    lines
        .into_iter()
        .map(|(who, trials, reason)| {
            let list: Vec<String> = trials.iter().map(u32::to_string).collect();
            let word = if trials.len() == 1 { "trial" } else { "trials" };
            format!("{who} {word} {}: {reason}", list.join(", "))
        })
        .collect()
}

/// A heading, then one line per trial note.
fn trial_list(out: &mut String, heading: &str, notes: &[(&Cell, &TrialNote)]) {
    let _ = writeln!(out, "\n{heading}");
    for (c, n) in notes {
        let _ = writeln!(
            out,
            "  {} {} trial {}: {}",
            c.system,
            c.point.label(),
            n.trial,
            n.reason
        );
    }
}

/// The terminal's width when standard output is a terminal (from
/// `COLUMNS`, else the kernel's window size), else unlimited.
fn terminal_width() -> usize {
    let Some(kernel_width) = crate::sys::terminal::stdout_width() else {
        return usize::MAX;
    };
    if let Some(w) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return w;
    }
    kernel_width.map_or(100, usize::from)
}

/// The tests behind the run's verdicts: Mann-Whitney U, and Welch's t
/// where a cell had 3 trials a side (`analysis::compare`).
fn tests_used(agg: &Aggregate) -> &'static str {
    use crate::analysis::compare::Test;
    let used = |test| {
        agg.cells
            .iter()
            .filter_map(|c| c.comparison.as_ref())
            .any(|c| c.test == test)
    };
    match (used(Test::MannWhitney), used(Test::Welch)) {
        (_, false) => "Mann-Whitney U",
        (false, true) => "Welch's t on all trials, 3 a side",
        (true, true) => "Mann-Whitney U, or Welch's t where 3 trials a side are too few for it",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::aggregate;

    #[test]
    fn a_row_per_point_and_system_with_spread() {
        let (data, agg) = aggregate(&["linux", "freebsd"]);
        let out = render_aggregate(&agg, &data.run, false, usize::MAX);
        for c in &agg.cells {
            let s = c.summary.as_ref().unwrap();
            let row = out
                .lines()
                .find(|l| l.contains(&c.system) && l.contains(&format::rate(s.median)))
                .unwrap_or_else(|| panic!("no row for {} {}", c.system, c.point.label()));
            if s.n > 1 {
                let range = format!("{}–{}", format::rate(s.min), format::rate(s.max));
                assert!(row.contains(&range), "{row}");
            }
        }
        assert!(out.contains("baseline"));
        assert!(out.contains("~ (p=0.010)") || out.contains("(p=0.010)"));
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn failures_client_bound_and_fits_are_reported() {
        let (data, agg) = aggregate(&["linux", "freebsd"]);
        let out = render_aggregate(&agg, &data.run, true, usize::MAX);
        assert!(out.contains("Failed trials (1)"));
        assert!(out.contains("freebsd connections=1000 trial 2: server exited with signal 9"));
        assert!(out.contains("linux connections=4000 trial 3: client CPU 99% of its cores"));
        assert!(out.contains("USL σ=0.0200 κ=2.0e-5 N*=221"));
        assert!(out.contains("R² = 0.99 <fixture>"));
        assert!(out.contains("Ranking:"));
        assert!(out.contains('\x1b'));
    }

    /// Issue 46 (2.3 of the views: a row's percentage against its
    /// medians): the verdict left a client-bound trial out while the
    /// median column kept it (9.04k against 12.31k printed `? +151.3%`).
    /// Every format now shows the medians the verdict used and how many
    /// trials it left out.
    #[test]
    fn a_rows_medians_are_the_ones_its_verdict_used() {
        let mut data = crate::judging::test_support::run_data(&["a", "b"]);
        for t in &mut data.trials {
            // b at connections=10: its third trial client-bound, at a
            // quarter of the others' rate.
            if t.system == "b" && t.point.index == 1 && t.trial == 3 {
                t.context.client_bound = Some(true);
                t.measurement.as_mut().unwrap().rps.0 /= 4.0;
            }
        }
        let agg = crate::judging::analyse::aggregate(&data);
        let (a, b) = (agg.cell("a", 1).unwrap(), agg.cell("b", 1).unwrap());
        let kept: Vec<f64> = b
            .samples
            .iter()
            .filter(|s| !s.client_bound)
            .map(|s| s.value)
            .collect();
        let median = (kept[0] + kept[1]) / 2.0;
        assert_eq!(b.headline(), Some(median), "the median of the 2 kept");
        let cmp = b.comparison.as_ref().unwrap();
        assert!((cmp.ratio - median / a.headline().unwrap()).abs() < 1e-12);
        assert_eq!(crate::judging::judge::left_out(b), 1);
        let text = render_aggregate(&agg, &data.run, false, usize::MAX);
        let row = text
            .lines()
            .find(|l| l.contains(" b ") && l.contains(&format::rate(median)))
            .unwrap_or_else(|| panic!("no row with the kept median:\n{text}"));
        assert!(row.contains(" 2+1! "), "{row}");
        assert!(row.contains(&verdict::short(cmp).0), "{row}");
        assert!(
            text.contains("+N! in n: N client-bound trial(s) left out"),
            "{text}"
        );
        let json = crate::json::export(&data);
        let p = json["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["system"] == "b" && p["point_index"] == 1)
            .unwrap();
        assert_eq!(p["summary"]["median"].as_f64(), Some(median));
        assert_eq!(p["left_out"], 1);
        let html = crate::html::render(&data);
        assert!(
            html.contains("2 (+1 client-bound, left out)"),
            "the trials column"
        );
        let verdicts = html.split("Verdicts against").nth(1).unwrap();
        assert!(
            verdicts.contains(&format!(">{}</td>", format::rate(median))),
            "the verdict table's median"
        );
    }

    #[test]
    fn narrow_terminals_lose_optional_columns_first() {
        let (data, agg) = aggregate(&["linux", "freebsd"]);
        let wide = render_aggregate(&agg, &data.run, false, usize::MAX);
        let narrow = render_aggregate(&agg, &data.run, false, 60);
        assert!(wide.contains("95% CI") && !narrow.contains("95% CI"));
        assert!(wide.contains("min–max") && !narrow.contains("min–max"));
        assert!(narrow.contains("median") && narrow.contains("vs linux"));
    }
}
