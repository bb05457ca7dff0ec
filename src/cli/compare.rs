//! `scalelab compare`: sides point by point, benchstat style, each against
//! the first (the baseline).
//!
//! The runs may live in different stores (two machines, two OSes):
//! `scalelab compare linux.sqlite:1 freebsd.sqlite:1 dragonfly.sqlite:1`,
//! or `--store-b` for the second. Runs that share a label are pooled as
//! repeats of one system (said on the output; `--each-run` keeps them
//! apart), and between runs the run is the unit (`judging::judge`). Runs of
//! another recipe, load kind or sweep axis are refused (exit 2); a
//! percentage drawn from too few trials or runs is marked `?`; a side with
//! no point comparable with the baseline exits 5.
use super::report::{load_named, NamedRun};
use anyhow::Context;
use scalelab::judging::multi::verdicts::{self, nothing_comparable, too_few};
use scalelab::judging::multi::{self, background, environment};
use scalelab::judging::runs::RunComparison;
use scalelab::judging::verdict;
use scalelab::judging::work_change;
use scalelab::report::multi::text;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Sides and runs:
  Runs of the recipe that share a label are repeats of one system (one OS
  booted and run three times): they are pooled into one side, and the
  output says so. The first side is the baseline; every other side is
  compared with it, each system against the same system of the baseline
  side. --each-run makes every run its own side.

  Between runs the run is the unit: each run gives one value per point
  (its median or best trial), and the verdict is Student's t on the logs
  of those values, with at least 3 runs a side. With fewer runs the
  change is shown with `?` and no p-value. `scalelab run --repeat 3`
  makes three runs with one label. Each value column holds what the
  verdict divides: a run's median (or best), or for several runs the
  geometric mean of their medians. `report RUN RUN...` draws the same
  comparison as a page.

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
    /// Also write the differential flame graphs between the runs into DIR
    /// (made if absent), one SVG each: each side's profile of a system at
    /// a point against the baseline side's, on-CPU and off-CPU (the runs
    /// need profiles: `run --profile`). The page of `--html` draws the
    /// same graphs.
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
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
    /// Which series are judged against which (`multi::PAIRS`).
    pairs: &'static str,
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
    /// Each point's work per request against the baseline's: which
    /// counts changed (`judging::work_change`).
    work: &'a [work_change::PointWorkLine],
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
    let mut datas: Vec<_> = runs.into_iter().map(|r| r.data).collect();
    if !a.json {
        datas
            .iter_mut()
            .for_each(scalelab::judging::format::terminal_safe_names);
    }
    let mut merged = multi::merge(datas, sources.clone(), pooling)?;
    // --noise is the floor of every figure below: the verdicts, the drift's
    // "to tell X% apart" plan and the --html page's.
    let noise = a.noise.map_or(merged.runs[0].run.noise, |n| n / 100.0);
    merged.data.run.noise = noise;
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
    let rules = verdicts::rules(&merged, Some(noise));
    let sides = verdicts::against_baseline(&merged, &rules);
    let comparisons: Vec<RunComparison> = sides.iter().map(|s| s.comparison.clone()).collect();
    let side_names: Vec<String> = merged.sides.iter().map(|s| s.name.clone()).collect();
    let work: Vec<Vec<work_change::PointWorkLine>> = (comparisons.iter().enumerate())
        .map(|(i, c)| work_change::of_comparison(&merged, i + 1, c))
        .collect();
    let pooled = multi::pooled_lines(&merged);
    let drift = multi::drift::of_sides(&merged);
    let background = background::differences(runs, names);
    let env: Vec<environment::EnvRow> = environment::rows(runs)
        .into_iter()
        .filter(|r| r.differs)
        .collect();
    if let Some(path) = &a.html {
        std::fs::write(
            path,
            scalelab::report::multi::page::render_sides(&merged, &sides, noise),
        )
        .with_context(|| format!("cannot write the comparison page to {}", path.display()))?;
    }
    if let Some(dir) = &a.profile {
        write_flame_graphs(&merged, dir)?;
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
            comparisons: (comparisons.iter().zip(&side_names[1..]).zip(&work))
                .map(|((c, label), work)| Against {
                    label,
                    too_few_trials: too_few(c),
                    nothing_comparable: nothing_comparable(c),
                    comparison: c,
                    work,
                })
                .collect(),
            between_runs: multi::BETWEEN_RUNS,
            pairs: multi::PAIRS,
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
        for ((c, name), work) in comparisons.iter().zip(&side_names[1..]).zip(&work) {
            out!("{}\n", text::render(c, (&side_names[0], name)));
            out!("{}", text::work_lines(work));
        }
        outln!("{}", verdict::legend(noise, &merged.data.kind_legend()));
        outln!("\n{}", multi::BETWEEN_RUNS);
        outln!("\n{}", multi::PAIRS);
        out!("{}", scalelab::report::multi::drift::render(&drift));
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

/// `--profile DIR`: each differential graph between the runs as a file in
/// `dir`, named on stderr; a run pair without profiles is said, and is no
/// error.
fn write_flame_graphs(merged: &multi::Merged, dir: &Path) -> anyhow::Result<()> {
    let files = scalelab::report::files_across_runs(merged);
    if files.is_empty() {
        eprintln!(
            "--profile: no flame graph between the runs: no two sides hold a profile of one \
             system, point and role (record them with `run --profile`)"
        );
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot make the flame-graph directory {} (--profile)",
            dir.display()
        )
    })?;
    for f in files {
        match f.svg {
            Ok(svg) => {
                let path = dir.join(&f.name);
                std::fs::write(&path, svg)
                    .with_context(|| format!("cannot write the flame graph {}", path.display()))?;
                eprintln!("flame graph: {} ({})", path.display(), f.title);
            }
            Err(e) => eprintln!("flame graph not drawn: {}: {e}", f.title),
        }
    }
    Ok(())
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
