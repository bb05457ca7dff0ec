//! `scalelab compare`: sides point by point, benchstat style, each against
//! the first (the baseline).
//!
//! The runs may live in different stores (two machines, two OSes):
//! `scalelab compare linux.sqlite:1 freebsd.sqlite:1 dragonfly.sqlite:1`,
//! or `--store-b` for the second. Runs that share a label are pooled as
//! repeats of one system (said on the output; `--each-run` keeps them
//! apart), and between runs the run is the unit (`report::judge`). Runs of
//! another recipe, load kind or sweep axis are refused (exit 2); a
//! percentage drawn from too few trials or runs is marked `?`; a side with
//! no point comparable with the baseline exits 5.
use super::report::{load_named, NamedRun};
use anyhow::Context;
use scalelab::analysis::compare::{sentence_for, Verdict};
use scalelab::analysis::summary::Headline;
use scalelab::report::judge::Rules;
use scalelab::report::multi::{self, background, environment};
use scalelab::report::runs::{compare_sides, RunComparison};
use scalelab::report::verdict;
use scalelab::store::RunData;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Sides and runs:
  Runs of the recipe that share a label are repeats of one system (one OS
  booted and run three times): they are pooled into one side, and the
  output says so. The first side is the baseline; every other side is
  compared with it. --each-run makes every run its own side.

  Between runs the run is the unit: each run gives one value per point
  (its median or best trial), and the verdict is Student's t on the logs
  of those values, with at least 3 runs a side. With fewer runs the
  change is shown with `?` and no p-value. `scalelab run --repeat 3`
  makes three runs with one label.

Exit codes: 0 compared; 2 bad input; 5 a side shares no comparable point
with the baseline.")]
pub struct CompareArgs {
    /// The runs: the first is in the baseline side, each other side is
    /// compared with it. An id, `latest`, or `STORE:RUN` for a run in
    /// another store file (`linux.sqlite:1`).
    #[arg(value_name = "RUN", num_args = 2.., required = true)]
    pub runs: Vec<String>,
    /// Every run its own side, even where runs share a label (by default
    /// they are pooled as repeats of one system).
    #[arg(long)]
    pub each_run: bool,
    /// Read the second RUN from this store (default: --store), e.g. a store
    /// copied from another machine.
    #[arg(long, value_name = "PATH")]
    pub store_b: Option<PathBuf>,
    /// Print JSON instead of the table: each other run's verdicts against
    /// the first under `comparisons`.
    #[arg(long)]
    pub json: bool,
    /// Also write the comparison as a self-contained HTML page, as
    /// `scalelab report RUN RUN…` does: every curve on each chart,
    /// per-point verdicts, the ranking and the environments side by side.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Differences smaller than this many percent are called noise
    /// (default: the baseline run's `[trials] noise`).
    #[arg(long, value_name = "PERCENT")]
    pub noise: Option<f64>,
}

/// `compare --json`: the runs, and each other run's verdicts against the
/// first.
#[derive(Serialize)]
struct CompareDoc<'a> {
    /// The baseline run's label.
    baseline: &'a str,
    /// Every run, the baseline first.
    runs: Vec<RunEntry<'a>>,
    /// The noise floor the verdicts were drawn with (0.02 = 2%).
    noise: f64,
    /// One per run after the first, in the order given.
    comparisons: Vec<Against<'a>>,
    /// How verdicts between runs are drawn (`multi::BETWEEN_RUNS`).
    between_runs: &'static str,
    /// Sides of several runs, pooled by label.
    pooled: Vec<String>,
    /// Each side of 3 or more runs: the drift between its runs per point.
    drift: Vec<multi::drift::SideDrift>,
    /// Background load named where a run's differs from the baseline's.
    background: Vec<String>,
    /// Environment keys that differ between the runs, one value per run.
    environment: Vec<environment::EnvRow>,
}

#[derive(Serialize)]
struct RunEntry<'a> {
    label: &'a str,
    source: &'a str,
    name: &'a str,
    revision: Option<&'a str>,
}

#[derive(Serialize)]
struct Against<'a> {
    /// This side's label.
    label: &'a str,
    /// Shared points whose verdict could not be drawn for too few trials:
    /// the geometric mean then claims nothing.
    too_few_trials: usize,
    /// Whether no shared point could be compared at all.
    nothing_comparable: bool,
    #[serde(flatten)]
    comparison: &'a RunComparison,
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
    let runs = (a.runs.iter().enumerate())
        .map(|(i, r)| match (i, &a.store_b) {
            (1, Some(b)) => load_named(r, b),
            _ => load_named(r, store),
        })
        .collect::<anyhow::Result<Vec<NamedRun>>>()?;
    super::report::refuse_repeated(&runs)?;
    let sources: Vec<String> = runs.iter().map(|r| r.source.clone()).collect();
    let pooling = if a.each_run {
        multi::Pooling::EachRun
    } else {
        multi::Pooling::ByLabel
    };
    let merged = multi::merge(
        runs.into_iter().map(|r| r.data).collect(),
        sources.clone(),
        pooling,
    )?;
    let (runs, names) = (&merged.runs, &merged.names);
    if merged.sides.len() < 2 {
        anyhow::bail!(
            "all {} runs share the label `{}`, so they are pooled as repeats of one system and \
             there is nothing to compare; give each side its own --label when you run it, or \
             pass --each-run to compare the runs one by one",
            runs.len(),
            merged.sides[0].name
        );
    }
    let noise = a.noise.map_or(runs[0].run.noise, |n| n / 100.0);
    let headline = Headline::parse(&runs[0].run.headline).unwrap_or_default();
    let rules = Rules::symmetric(headline, noise);
    let side_runs =
        |s: &multi::Side| -> Vec<RunData> { s.runs.iter().map(|&i| runs[i].clone()).collect() };
    let comparisons: Vec<RunComparison> = merged.sides[1..]
        .iter()
        .map(|s| compare_sides(&side_runs(&merged.sides[0]), &side_runs(s), &rules))
        .collect();
    let side_names: Vec<String> = merged.sides.iter().map(|s| s.name.clone()).collect();
    let pooled = multi::pooled_lines(&merged);
    let drift = multi::drift::of_sides(&merged);
    let background = background::differences(runs, names);
    let env: Vec<environment::EnvRow> = environment::rows(runs)
        .into_iter()
        .filter(|r| r.differs)
        .collect();
    if let Some(path) = &a.html {
        std::fs::write(path, multi::page::render(&merged))
            .with_context(|| format!("cannot write the comparison page to {}", path.display()))?;
    }
    if a.json {
        let doc = CompareDoc {
            baseline: &side_names[0],
            runs: (runs.iter().zip(names).zip(&sources))
                .map(|((r, label), source)| RunEntry {
                    label,
                    source,
                    name: &r.run.name,
                    revision: r.run.revision.as_deref(),
                })
                .collect(),
            noise,
            comparisons: (comparisons.iter().zip(&side_names[1..]))
                .map(|(c, label)| Against {
                    label,
                    too_few_trials: too_few(c),
                    nothing_comparable: nothing_comparable(c),
                    comparison: c,
                })
                .collect(),
            between_runs: multi::BETWEEN_RUNS,
            pooled: pooled.clone(),
            drift: drift.clone(),
            background: background.clone(),
            environment: env.clone(),
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for p in &pooled {
            outln!("{p}");
        }
        if !pooled.is_empty() {
            outln!();
        }
        for (c, name) in comparisons.iter().zip(&side_names[1..]) {
            out!("{}\n", render(c, (&side_names[0], name)));
        }
        outln!("{}", verdict::legend(noise));
        outln!("\n{}", multi::BETWEEN_RUNS);
        out!("{}", multi::drift::render(&drift));
        for b in &background {
            outln!("\n{b}");
        }
        out!("{}", environment_table(&env, names));
    }
    if let Some(path) = &a.html {
        eprintln!("comparison page: {}", path.display());
    }
    let empty: Vec<&String> = (comparisons.iter().zip(&side_names[1..]))
        .filter(|(c, _)| nothing_comparable(c))
        .map(|(_, n)| n)
        .collect();
    if empty.is_empty() {
        return Ok(super::exit::OK);
    }
    for n in empty {
        eprintln!(
            "nothing comparable: `{n}` shares no point with `{}` at which both sides measured \
             without errors or client-bound trials",
            side_names[0]
        );
    }
    Ok(super::exit::NOTHING_COMPARABLE)
}

/// Shared points whose verdict needs more trials or runs.
fn too_few(c: &RunComparison) -> usize {
    (c.points.iter())
        .filter(|p| {
            matches!(
                p.comparison.verdict,
                Verdict::NeedsMoreTrials { .. } | Verdict::NeedsMoreRuns { .. }
            )
        })
        .count()
}

/// No shared point, or every shared point not comparable.
fn nothing_comparable(c: &RunComparison) -> bool {
    (c.points.iter()).all(|p| matches!(p.comparison.verdict, Verdict::NotComparable { .. }))
}

fn render(c: &RunComparison, (a, b): (&str, &str)) -> String {
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
/// (`runs::geomean_verdict`), with the same marks as a point.
fn geomean_cell(c: &RunComparison) -> Option<String> {
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

/// The environment keys that differ, one column per run.
fn environment_table(rows: &[environment::EnvRow], names: &[String]) -> String {
    if rows.is_empty() {
        return "\nenvironment: no differences\n".into();
    }
    let absent = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
    let key_w = rows.iter().map(|e| e.key.len()).max().unwrap_or(0).max(3);
    let widths: Vec<usize> = (0..names.len())
        .map(|i| {
            rows.iter()
                .map(|r| absent(&r.values[i]).chars().count())
                .chain([names[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |key: &str, cells: Vec<String>| {
        let cells: Vec<String> = (cells.iter().zip(&widths))
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("  {key:<key_w$}  {}", cells.join("  "))
            .trim_end()
            .to_string()
            + "\n"
    };
    let mut out = String::from("\nenvironment differences:\n");
    out += &line("key", names.to_vec());
    for r in rows {
        out += &line(&r.key, r.values.iter().map(absent).collect());
    }
    out
}
