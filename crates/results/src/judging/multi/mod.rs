//! N runs on one page (`scalelab report A B C`, `scalelab compare A B C`):
//! runs from any number of stores merged into one run whose systems are
//! the sides' series.
//!
//! A side is one or more runs: runs of the recipe that share a label are
//! repeats of one system ([`Pooling::ByLabel`], the default; the pooling
//! is printed, never silent), and `--each-run` keeps every run apart. Each
//! series is a (side, system) pair, named by the side's label, or `label ·
//! system` when its runs have several systems; a series is identified by
//! its side and system, and a name that collides with another series' gets
//! its source added. Merging renames each trial's system to its series,
//! sets its `run_id` to its run's position, and puts the points of every
//! run on one list (matched by coordinates, not by index), so the ordinary
//! analysis ([`super::analyse::aggregate`]) draws every series on every
//! chart. The verdicts, the ranking and the relative % come from one
//! comparison ([`verdicts`]), which `compare` prints and the page draws:
//! each side against the baseline side, system by system, with
//! [`super::judge`], between runs where the run is the unit. Runs of
//! another recipe, load kind or sweep axis are refused
//! ([`check_compatible`]).

/// How verdicts between runs are drawn, printed by `compare` (text and
/// JSON) and on the N-run page.
pub const BETWEEN_RUNS: &str =
    "between runs: the run is the unit. Trials of one run share its boot, placement and \
neighbours, and whole runs on one host drift apart by more than their trials do (±15–25% on a \
2-CPU VM), so each run gives one value per point (its headline) and the verdict is Student's \
t on those values' logs. It needs at least 3 runs a side (`scalelab run --repeat 3`, or runs \
that share a --label); with fewer it is `?`. Systems in one run alternate their trials and are \
judged trial against trial.";

/// Which series are judged against which, printed by `compare` and on the
/// N-run page ([`verdicts`] says why).
pub const PAIRS: &str =
    "pairs: every side is judged against the baseline side (the first), each system against \
the same system of the baseline side, so a change is the side's, not another configuration's \
(two single systems of other names are paired with each other). The baseline's own systems are \
not judged against each other here: `scalelab report RUN` judges them inside their run.";

pub mod background;
pub mod drift;
pub mod environment;
pub mod verdicts;

use super::runs::canonical;
use crate::model::{Coord, Point};
use crate::store::{RunData, Trial};
use std::cmp::Ordering;

/// Why runs cannot share one page.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MultiError {
    /// No run was given.
    #[error("no run given")]
    NoRuns,
    /// Another recipe (its `name`) was run.
    #[error(
        "`{b}` ran another recipe: `{recipe_b}`, where `{a}` ran `{recipe_a}`; \
         runs are compared only under one recipe (rerun with the same file)"
    )]
    Recipe {
        /// The first run's label.
        a: String,
        /// The other run's label.
        b: String,
        /// The first run's recipe name.
        recipe_a: String,
        /// The other run's recipe name.
        recipe_b: String,
    },
    /// Another load kind, so another unit.
    #[error(
        "`{b}` ran {kind_b} load, where `{a}` ran {kind_a} load: their throughputs count \
         different things"
    )]
    LoadKind {
        /// The first run's label.
        a: String,
        /// The other run's label.
        b: String,
        /// The first run's load kind.
        kind_a: String,
        /// The other run's load kind.
        kind_b: String,
    },
    /// A run with no trial: nothing of it can be compared.
    #[error(
        "`{name}` (run {id}) has no trials, so nothing of it can be compared (it stopped \
         before its first trial, or every trial was discarded; `scalelab list` shows its status)"
    )]
    NoTrials {
        /// The run's name on the page.
        name: String,
        /// Its id in its store.
        id: i64,
    },
    /// Another set of sweep axes.
    #[error(
        "`{b}` swept {axes_b}, where `{a}` swept {axes_a}: points on other axes cannot be \
         matched"
    )]
    SweepAxes {
        /// The first run's label.
        a: String,
        /// The other run's label.
        b: String,
        /// The first run's axes (`connections`).
        axes_a: String,
        /// The other run's axes.
        axes_b: String,
    },
}

/// How runs that share a label are taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pooling {
    /// Runs of the recipe that share a label are repeats of one system
    /// (one OS booted and run three times): one side, judged run by run.
    #[default]
    ByLabel,
    /// Every run is its own side, whatever its label (`--each-run`).
    EachRun,
}

/// One side of the comparison: the runs pooled as repeats of one system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Side {
    /// Its name: the runs' label, with the run's source added where
    /// another side has the same label (`--each-run`).
    pub name: String,
    /// The runs' positions among the inputs.
    pub runs: Vec<usize>,
}

/// One curve of the merged page: a system of one side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    /// `Linux 6.1.0-18-amd64`, or `Linux 6.1.0-18-amd64 · 2 workers`;
    /// a name another series has too gets its source added
    /// (`L · s1 (b.sqlite:2)`), so no two series share one.
    pub name: String,
    /// The side's position in [`Merged::sides`] (0: the baseline).
    pub side: usize,
    /// The runs it holds trials of (their positions among the inputs).
    pub runs: Vec<usize>,
    /// The system's label within its runs.
    pub system: String,
}

/// The runs, their sides and series, and their trials merged into one run.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The runs, in the order given (the first is in the baseline side).
    pub runs: Vec<RunData>,
    /// Where each run was read from (`linux.sqlite:1`).
    pub sources: Vec<String>,
    /// Each run's name on the page: its label, with its source added where
    /// another run has the same label.
    pub names: Vec<String>,
    /// The sides, the baseline first.
    pub sides: Vec<Side>,
    /// Every curve, the baseline first.
    pub series: Vec<Series>,
    /// One run holding every series' trials as its systems, on the union of
    /// the points, each trial's `run_id` its run's position; its baseline
    /// is the first series.
    pub data: RunData,
}

/// Each run's label, with its source added (`x (b.sqlite:2)`) where
/// another run has the same label, and its position too where even that
/// repeats (two stores of one file name), so every run has its own name.
pub fn unique_names(runs: &[RunData], sources: &[String]) -> Vec<String> {
    let with_source: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let shared = runs
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && o.run.label == r.run.label);
            if shared {
                format!("{} ({})", r.run.label, source_of(sources, i))
            } else {
                r.run.label.clone()
            }
        })
        .collect();
    with_source
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if with_source.iter().filter(|o| *o == n).count() > 1 {
                format!("{n} #{}", i + 1)
            } else {
                n.clone()
            }
        })
        .collect()
}

fn source_of(sources: &[String], i: usize) -> String {
    sources
        .get(i)
        .cloned()
        .unwrap_or_else(|| format!("run #{}", i + 1))
}

/// The sides: runs grouped by label in order of first appearance
/// ([`Pooling::ByLabel`]), or one per run.
pub fn sides(runs: &[RunData], sources: &[String], pooling: Pooling) -> Vec<Side> {
    let names = unique_names(runs, sources);
    let mut out: Vec<Side> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let joined = match pooling {
            Pooling::ByLabel => out
                .iter_mut()
                .find(|s| runs[s.runs[0]].run.label == r.run.label),
            Pooling::EachRun => None,
        };
        match joined {
            Some(side) => side.runs.push(i),
            None => out.push(Side {
                name: match pooling {
                    Pooling::ByLabel => r.run.label.clone(),
                    Pooling::EachRun => names[i].clone(),
                },
                runs: vec![i],
            }),
        }
    }
    out
}

/// Sides of several runs, as a sentence each: `` `FreeBSD 14`: 3 runs
/// pooled as repeats (a.sqlite:1, a.sqlite:2, b.sqlite:1) ``.
pub fn pooled_lines(m: &Merged) -> Vec<String> {
    m.sides
        .iter()
        .filter(|s| s.runs.len() > 1)
        .map(|s| {
            let from: Vec<String> = s.runs.iter().map(|&i| source_of(&m.sources, i)).collect();
            format!(
                "`{}`: {} runs pooled by label as repeats of one system ({}); each run is one \
                 sample of the verdicts between runs (--each-run keeps them apart)",
                s.name,
                s.runs.len(),
                from.join(", ")
            )
        })
        .collect()
}

/// The sweep axes of a run (`connections`, `server.worker_processes`),
/// sorted.
fn axes(run: &RunData) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in &run.trials {
        for c in &t.point.coords {
            let name = c.target.to_string();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out.sort();
    out
}

/// Refuses runs that cannot be compared with the first: another recipe,
/// load kind or set of sweep axes. `names` are the runs' page names.
pub fn check_compatible(runs: &[RunData], names: &[String]) -> Result<(), MultiError> {
    let Some(first) = runs.first() else {
        return Ok(());
    };
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "no axis".to_string()
        } else {
            v.join(", ")
        }
    };
    if let Some((r, name)) = runs.iter().zip(names).find(|(r, _)| r.trials.is_empty()) {
        return Err(MultiError::NoTrials {
            name: name.clone(),
            id: r.run.id,
        });
    }
    for (r, name) in runs.iter().zip(names).skip(1) {
        let (a, b) = (names[0].clone(), name.clone());
        if r.run.load_kind != first.run.load_kind {
            return Err(MultiError::LoadKind {
                a,
                b,
                kind_a: first.run.load_kind.clone(),
                kind_b: r.run.load_kind.clone(),
            });
        }
        if r.run.name != first.run.name {
            return Err(MultiError::Recipe {
                a,
                b,
                recipe_a: first.run.name.clone(),
                recipe_b: r.run.name.clone(),
            });
        }
        let (axes_a, axes_b) = (axes(first), axes(r));
        if axes_a != axes_b {
            return Err(MultiError::SweepAxes {
                a,
                b,
                axes_a: list(axes_a),
                axes_b: list(axes_b),
            });
        }
    }
    Ok(())
}

/// Merges `runs` (checked with [`check_compatible`]), read from
/// `sources`, into one run whose systems are their series.
pub fn merge(
    runs: Vec<RunData>,
    sources: Vec<String>,
    pooling: Pooling,
) -> Result<Merged, MultiError> {
    let names = unique_names(&runs, &sources);
    check_compatible(&runs, &names)?;
    let sides = sides(&runs, &sources, pooling);
    let series = series_of(&runs, &sources, &sides);
    let points = union_points(&runs);
    let trials: Vec<Trial> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.trials.iter().map(move |t| (i, t)))
        .map(|(i, t)| {
            let mut t = t.clone();
            let key = canonical(&t.point.coords);
            if let Some(p) = points.iter().find(|p| canonical(&p.coords) == key) {
                t.point = p.clone();
            }
            if let Some(s) = series
                .iter()
                .find(|s| s.runs.contains(&i) && s.system == t.system)
            {
                t.system = s.name.clone();
            }
            t.run_id = i as i64;
            t
        })
        .collect();
    let mut run = runs.first().ok_or(MultiError::NoRuns)?.run.clone();
    run.baseline = series.first().map(|s| s.name.clone());
    run.label = sides.first().map(|s| s.name.clone()).unwrap_or_default();
    let data = RunData {
        run,
        trials,
        profiles: Vec::new(),
    };
    Ok(Merged {
        runs,
        sources,
        names,
        sides,
        series,
        data,
    })
}

/// One series per (side, system), named by the side (and the system when
/// the side's runs have several); names that collide get a source.
fn series_of(runs: &[RunData], sources: &[String], sides: &[Side]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for (k, side) in sides.iter().enumerate() {
        let mut systems: Vec<String> = Vec::new();
        for &i in &side.runs {
            for s in runs[i].systems() {
                if !systems.contains(&s) {
                    systems.push(s);
                }
            }
        }
        for s in &systems {
            let name = if systems.len() > 1 {
                format!("{} · {s}", side.name)
            } else {
                side.name.clone()
            };
            out.push(Series {
                name,
                side: k,
                runs: side.runs.clone(),
                system: s.clone(),
            });
        }
    }
    for i in 1..out.len() {
        if out[..i].iter().any(|o| o.name == out[i].name) {
            out[i].name = format!("{} ({})", out[i].name, source_of(sources, out[i].runs[0]));
        }
        if out[..i].iter().any(|o| o.name == out[i].name) {
            out[i].name = format!("{} #{}", out[i].name, out[i].runs[0] + 1);
        }
    }
    out
}

/// Every point of any run, once, re-indexed in coordinate order.
fn union_points(runs: &[RunData]) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for r in runs {
        for p in r.points() {
            if !out
                .iter()
                .any(|q| canonical(&q.coords) == canonical(&p.coords))
            {
                out.push(p);
            }
        }
    }
    out.sort_by(|a, b| by_coords(&a.coords, &b.coords));
    for (i, p) in out.iter_mut().enumerate() {
        p.index = i as u32;
    }
    out
}

/// Coordinates in axis-name order, numbers by value.
fn by_coords(a: &[Coord], b: &[Coord]) -> Ordering {
    let sorted = |c: &[Coord]| {
        let mut v: Vec<(String, toml::Value)> = c
            .iter()
            .map(|c| (c.target.to_string(), c.value.clone()))
            .collect();
        v.sort_by(|x, y| x.0.cmp(&y.0));
        v
    };
    let (a, b) = (sorted(a), sorted(b));
    for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
        let o = ka.cmp(kb).then_with(|| match (number(va), number(vb)) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            _ => va.to_string().cmp(&vb.to_string()),
        });
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    }
}

impl Merged {
    /// The merged run analysed ([`super::analyse::aggregate`]): series of
    /// different runs are judged between runs ([`super::judge`]).
    pub fn aggregate(&self) -> super::rows::Aggregate {
        super::analyse::aggregate(&self.data)
    }

    /// Each series with the points of the merged sweep it has no trial
    /// at (`connections=64`), for series that lack any.
    pub fn missing_points(&self) -> Vec<(String, Vec<String>)> {
        let points = self.data.points();
        self.series
            .iter()
            .filter_map(|s| {
                let lacks: Vec<String> = points
                    .iter()
                    .filter(|p| self.data.trials_at(&s.name, p.index).next().is_none())
                    .map(Point::label)
                    .collect();
                (!lacks.is_empty()).then(|| (s.name.clone(), lacks))
            })
            .collect()
    }
}
