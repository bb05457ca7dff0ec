//! N runs on one page (`scalelab report A B C`, `scalelab compare A B C`):
//! runs from any number of stores, each named by its label, merged into
//! one run whose systems are the runs' series.
//!
//! Each series is a (run, system) pair, named by the run's label, or
//! `label · system` when the run has several systems. Merging renames each
//! trial's system to its series and puts the points of every run on one
//! list (matched by coordinates, not by index), so the ordinary analysis
//! ([`super::analyse::aggregate`]) draws every series on every chart,
//! compares each against the first (the baseline) at the points they share,
//! and ranks them by the geometric mean of their ratios. Runs of another
//! recipe, load kind or sweep axis are refused ([`check_compatible`]).

/// What a verdict between two runs does not cover: the p-values count the
/// spread of trials inside each run, and the runs ran at different times.
/// Two identical quickstart runs on the project's 2-CPU VM, 90 s apart,
/// differed by 18–32% at single points with p = 0.029
/// (docs/guides/comparing-operating-systems.md, "Between runs"). Printed
/// by `compare` (text and JSON) and on the N-run page.
pub const BETWEEN_RUNS: &str =
    "between runs: each p-value counts the spread of trials inside a run, \
not the machine's drift from one run to the next, so a verdict holds for these two runs. For one \
that holds beyond them, put the systems in one run (their trials alternate) or gate with \
`scalelab check` against a baseline set of several runs.";

pub mod background;
pub mod environment;
pub mod page;

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

/// One curve of the merged page: a system of one of the runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    /// `Linux 6.1.0-18-amd64`, or `Linux 6.1.0-18-amd64 · 2 workers`.
    pub name: String,
    /// The run's position in the arguments (0: the baseline run).
    pub run: usize,
    /// The system's label within its run.
    pub system: String,
}

/// The runs, their unique names, and their trials merged into one run.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The runs, in the order given (the first is the baseline).
    pub runs: Vec<RunData>,
    /// Each run's name on the page: its label, made unique.
    pub names: Vec<String>,
    /// Every curve, the baseline first.
    pub series: Vec<Series>,
    /// One run holding every series' trials as its systems, on the union of
    /// the points; its baseline is the first series.
    pub data: RunData,
}

/// Each run's label, with `#N` (its position, from 1) added where two runs
/// share one, so every series has its own name.
pub fn unique_names(runs: &[RunData]) -> Vec<String> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let shared = runs
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && o.run.label == r.run.label);
            if shared {
                format!("{} #{}", r.run.label, i + 1)
            } else {
                r.run.label.clone()
            }
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

/// Merges `runs` (checked with [`check_compatible`]) into one run whose
/// systems are their series.
pub fn merge(runs: Vec<RunData>) -> Result<Merged, MultiError> {
    let names = unique_names(&runs);
    check_compatible(&runs, &names)?;
    let mut series: Vec<Series> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let systems = r.systems();
        for s in &systems {
            let name = if systems.len() > 1 {
                format!("{} · {s}", names[i])
            } else {
                names[i].clone()
            };
            series.push(Series {
                name,
                run: i,
                system: s.clone(),
            });
        }
    }
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
            if let Some(s) = series.iter().find(|s| s.run == i && s.system == t.system) {
                t.system = s.name.clone();
            }
            t
        })
        .collect();
    let mut run = runs.first().ok_or(MultiError::NoRuns)?.run.clone();
    run.baseline = series.first().map(|s| s.name.clone());
    run.label = names.first().cloned().unwrap_or_default();
    let data = RunData {
        run,
        trials,
        profiles: Vec::new(),
    };
    Ok(Merged {
        runs,
        names,
        series,
        data,
    })
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
    /// The merged run analysed: as [`super::analyse::aggregate`], except
    /// that a point with client-bound trials is not comparable (the load
    /// generator, not the system, was the limit there), as `compare` has it.
    pub(crate) fn aggregate(&self) -> super::rows::Aggregate {
        let mut agg = super::rows::collect(&self.data);
        for c in &mut agg.cells {
            if c.not_comparable.is_none() && !c.client_bound.is_empty() {
                c.not_comparable = Some(super::runs::client_bound_reason(
                    c.client_bound.len(),
                    c.trials(),
                ));
            }
        }
        super::analyse::analyse(&mut agg);
        agg
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

#[cfg(test)]
mod tests;
