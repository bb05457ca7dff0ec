//! `scalelab compare`: two runs point by point, benchstat style.
//!
//! The two runs may live in different stores (two machines, two OSes):
//! `scalelab compare linux.sqlite:1 freebsd.sqlite:1`, or `--store-b`.
use super::report::open_existing;
use anyhow::Context;
use scalelab::analysis::compare::{sentence_for, Verdict};
use scalelab::report::runs::{compare_runs, RunComparison};
use scalelab::report::{compare_page, verdict};
use scalelab::store::RunData;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The baseline run: an id, `latest`, or `STORE:RUN` for a run in
    /// another store file (`linux.sqlite:1`).
    pub run_a: String,
    /// The run compared against it, in the same forms.
    pub run_b: String,
    /// Read RUN_B from this store (default: --store), e.g. a store copied
    /// from another machine.
    #[arg(long, value_name = "PATH")]
    pub store_b: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the comparison as a self-contained HTML page: the two
    /// curves overlaid, per-point verdicts, and what differs between the
    /// environments.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Differences smaller than this many percent are called noise
    /// (default: the baseline run's `[trials] noise`).
    #[arg(long, value_name = "PERCENT")]
    pub noise: Option<f64>,
}

pub fn run(a: &CompareArgs, store: &Path) -> anyhow::Result<i32> {
    if let Some(n) = a
        .noise
        .filter(|n| !(n.is_finite() && (0.0..100.0).contains(n)))
    {
        anyhow::bail!(
            "--noise {n} is not a percentage between 0 and 100 (the default is the baseline run's [trials] noise)"
        );
    }
    let (store_a, sel_a) = run_ref(&a.run_a, store);
    let (store_b, sel_b) = run_ref(&a.run_b, a.store_b.as_deref().unwrap_or(store));
    let run_a = open_existing(&store_a)?.load_run(&sel_a)?;
    let run_b = open_existing(&store_b)?.load_run(&sel_b)?;
    let noise = a.noise.map_or(run_a.run.noise, |n| n / 100.0);
    let c = compare_runs(&run_a, &run_b, noise);
    let names = if store_a == store_b {
        (format!("run {}", c.run_a), format!("run {}", c.run_b))
    } else {
        (label(&store_a, &run_a), label(&store_b, &run_b))
    };
    if let Some(path) = &a.html {
        let page = compare_page::render(&c, (&run_a, &run_b), (&names.0, &names.1));
        std::fs::write(path, page)
            .with_context(|| format!("cannot write the comparison page to {}", path.display()))?;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        out!("{}", render(&c, names));
    }
    if let Some(path) = &a.html {
        eprintln!("comparison page: {}", path.display());
    }
    Ok(0)
}

/// Splits `STORE:RUN` into its store file and run selector; a plain
/// selector (`3`, `latest`) names a run in `default_store`.
fn run_ref(text: &str, default_store: &Path) -> (PathBuf, String) {
    match text.rsplit_once(':') {
        Some((path, run)) if !path.is_empty() => (PathBuf::from(path), run.to_string()),
        _ => (default_store.to_path_buf(), text.to_string()),
    }
}

/// `linux.sqlite:1`: how a run in another store is named in the table.
fn label(store: &Path, data: &RunData) -> String {
    let file = store.file_name().map_or_else(
        || store.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    format!("{file}:{}", data.run.id)
}

fn render(c: &RunComparison, (a, b): (String, String)) -> String {
    let mut out = format!(
        "{b} ({}) against {a} ({}, the baseline); differences under {:.0}% are noise\n\n",
        c.name_b,
        c.name_a,
        c.noise * 100.0
    );
    if c.points.is_empty() {
        out += "no point was measured in both runs\n";
    } else {
        out += &table(c, &a, &b);
        out += &format!("\n{}\n", verdict::legend(c.noise));
    }
    for (which, list) in [(&a, &c.only_in_a), (&b, &c.only_in_b)] {
        if !list.is_empty() {
            out += &format!("\nonly in {which}: {}\n", list.join(", "));
        }
    }
    let verdicts: Vec<String> = c
        .points
        .iter()
        .filter(|p| {
            matches!(
                p.comparison.verdict,
                Verdict::Faster | Verdict::Slower | Verdict::NotComparable { .. }
            )
        })
        .map(|p| {
            format!(
                "  {} {}: {}",
                p.system,
                p.point,
                sentence_for(&p.comparison, &b)
            )
        })
        .collect();
    if !verdicts.is_empty() {
        out += &format!("\n{}\n", verdicts.join("\n"));
    }
    out += &environment(c, &a, &b);
    out
}

fn table(c: &RunComparison, a: &str, b: &str) -> String {
    let stat = c.statistic.as_str();
    let mut rows = vec![[
        "system".to_string(),
        "point".to_string(),
        format!("{a} {stat}"),
        format!("{b} {stat}"),
        format!("delta of {stat}s"),
    ]];
    for p in &c.points {
        let system = if p.system == p.system_b {
            p.system.clone()
        } else {
            format!("{} -> {}", p.system, p.system_b)
        };
        rows.push([
            system,
            p.point.clone(),
            with_spread(p.median_a, p.spread_a),
            with_spread(p.median_b, p.spread_b),
            verdict::short(&p.comparison).0,
        ]);
    }
    if let Some(g) = c.geomean_ratio {
        let cell = format!("{:+.1}%", (g - 1.0) * 100.0);
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

/// `12.35k ±1.2%`, or `-` without a successful trial.
fn with_spread(median: Option<f64>, spread: Option<f64>) -> String {
    match (median, spread) {
        (Some(m), Some(s)) => format!("{} ±{:.1}%", si(m), s * 100.0),
        (Some(m), None) => si(m),
        (None, _) => "-".into(),
    }
}

/// Four significant digits with k/M/G, like benchstat.
fn si(v: f64) -> String {
    let (scaled, unit) = match v.abs() {
        x if x >= 1e9 => (v / 1e9, "G"),
        x if x >= 1e6 => (v / 1e6, "M"),
        x if x >= 1e4 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let decimals = match scaled.abs() {
        x if x >= 1000.0 => 0,
        x if x >= 100.0 => 1,
        x if x >= 10.0 => 2,
        _ => 3,
    };
    format!("{scaled:.decimals$}{unit}")
}

fn environment(c: &RunComparison, a: &str, b: &str) -> String {
    if c.environment.is_empty() {
        return "\nenvironment: no differences\n".into();
    }
    let absent = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
    let key_w = c
        .environment
        .iter()
        .map(|e| e.key.len())
        .max()
        .unwrap_or(0)
        .max(3);
    let a_w = c
        .environment
        .iter()
        .map(|e| absent(&e.a).chars().count())
        .max()
        .unwrap_or(0)
        .max(a.len());
    let mut out = format!(
        "\nenvironment differences:\n  {:<key_w$}  {a:<a_w$}  {b}\n",
        "key"
    );
    for e in &c.environment {
        out += &format!(
            "  {:<key_w$}  {:<a_w$}  {}\n",
            e.key,
            absent(&e.a),
            absent(&e.b)
        );
    }
    out
}
