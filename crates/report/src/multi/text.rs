//! `scalelab compare`'s table of one side against the baseline side, from
//! the comparison the N-run page draws too ([`crate::judging::multi::verdicts`]):
//! benchstat's layout, with each value column named by what it holds.

use crate::analysis::compare::{sentence_for, Verdict};
use crate::judging::format;
use crate::judging::judge::BESIDE_BACKGROUND_LOAD;
use crate::judging::multi::verdicts::too_few;
use crate::judging::runs::RunComparison;
use crate::judging::verdict;

/// Side `b` against the baseline side `a`: the heading, the table, the
/// points only one side has, and a sentence per verdict that claims
/// something.
pub fn render(c: &RunComparison, (a, b): (&str, &str)) -> String {
    let side = |runs: usize, id: i64| {
        if runs == 1 {
            format!("run {id}")
        } else {
            format!("{runs} runs")
        }
    };
    let mut out = format!(
        "{b} ({}, {}) against {a} ({}, {}, the baseline); differences under {:.0}% are noise\n\n",
        c.name_b,
        side(c.runs_b, c.run_b),
        c.name_a,
        side(c.runs_a, c.run_a),
        c.noise * 100.0
    );
    if c.points.is_empty() {
        out += "no point was measured in both runs\n";
    } else {
        out += &table(c, a, b);
    }
    for (which, list) in [(a, &c.only_in_a), (b, &c.only_in_b)] {
        if !list.is_empty() {
            out += &format!("\nonly in {which}: {}\n", list.join(", "));
        }
    }
    let verdicts: Vec<String> = (c.points.iter())
        .filter(|p| {
            matches!(
                p.comparison.verdict,
                Verdict::Faster | Verdict::Slower | Verdict::NotComparable { .. }
            ) || p.comparison.sentence.contains(BESIDE_BACKGROUND_LOAD)
        })
        .map(|p| {
            format!(
                "  {} {}: {}",
                p.system,
                p.point,
                sentence_for(&p.comparison, b)
            )
        })
        .collect();
    if !verdicts.is_empty() {
        out += &format!("\n{}\n", verdicts.join("\n"));
    }
    out
}

/// The geometric mean's cell: the run as a whole judged between runs
/// (`runs::compare_sides`' `geomean`), with the same marks as a point.
pub fn geomean_cell(c: &RunComparison) -> Option<String> {
    let g = c.geomean.as_ref()?;
    let (short, _) = verdict::short(g);
    let judged = c.points.len() - too_few(c);
    Some(match too_few(c) {
        n if n > 0 && judged == 0 && !matches!(g.verdict, Verdict::NeedsMoreRuns { .. }) => {
            format!("{short} (too few trials at all {n} points)")
        }
        _ => short,
    })
}

/// A side's value at a point (`12.35k`), or `-` without a judged trial.
pub fn value(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), format::rate)
}

/// `system -> system_b` where single systems of other names were paired.
pub fn system_cell(p: &crate::judging::runs::PointComparison) -> String {
    if p.system == p.system_b {
        p.system.clone()
    } else {
        format!("{} -> {}", p.system, p.system_b)
    }
}

fn table(c: &RunComparison, a: &str, b: &str) -> String {
    let mut rows = vec![[
        "system".to_string(),
        "point".to_string(),
        format!("{a} {}", c.value_name_a()),
        format!("{b} {}", c.value_name_b()),
        "change".to_string(),
    ]];
    for p in &c.points {
        rows.push([
            system_cell(p),
            p.point.clone(),
            value(p.value_a),
            value(p.value_b),
            verdict::short(&p.comparison).0,
        ]);
    }
    if let Some(cell) = geomean_cell(c) {
        rows.push([
            "geomean".into(),
            String::new(),
            String::new(),
            String::new(),
            cell,
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = (0..5)
                .map(|i| format!("{:<w$}", r[i], w = widths[i]))
                .collect();
            cells.join("  ").trim_end().to_string() + "\n"
        })
        .collect()
}

/// The work per request under a comparison's verdicts: one line a point,
/// saying which count per request changed or that none did.
pub fn work_lines(lines: &[crate::judging::work_change::PointWorkLine]) -> String {
    use crate::judging::work_change::Unit;
    let Some(first) = lines.first() else {
        return String::new();
    };
    let unit = match first.work.unit {
        Unit::Runs => "each run's median is the unit",
        Unit::Trials => "the trials are the unit (fewer than 3 runs a side)",
    };
    let mut out = format!(
        "\nwork per request (the kernel's counts of the server's cgroup; {unit}; a change \
         is claimed when its 95% interval clears {:.2} per request and {:.0}%):\n",
        crate::judging::work_change::MIN_CHANGE,
        crate::judging::work_change::MIN_RELATIVE * 100.0
    );
    for l in lines {
        out += &format!("  {} {}: {}\n", l.system, l.point, l.sentence);
    }
    out
}
