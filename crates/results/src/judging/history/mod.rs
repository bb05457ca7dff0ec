//! `scalelab history`: the runs of one recipe, from any number of stores, in
//! order (by start time or by label), with each sweep point's headline
//! statistic per run and the change points in that series.
//!
//! Change points come from [`crate::analysis::changepoint`] (E-divisive
//! means with a permutation test and a magnitude floor); each one names the
//! runs on either side, its size with a CI, its p-value, and what differs
//! between those two runs ([`changes`]).
//!
//! Layout: this file gathers and computes; [`changes`] diffs two runs;
//! `report::history`'s `text` and `page` draw the result.

pub mod changes;
pub mod shape;

use crate::analysis::changepoint::{change_points_of_repeats, Settings};
use crate::analysis::summary::Headline;
use crate::judging::judge::{self, Rules};
use crate::judging::rows::{self, Aggregate};
use crate::store::{RunData, RunStatus};
use serde::Serialize;

/// A run and the store file it was read from.
#[derive(Clone, Debug)]
pub struct SourcedRun {
    /// The store file, as the user named it.
    pub store: String,
    /// The run with its trials.
    pub data: RunData,
}

/// How the runs of a history are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// By start time (then store and id).
    Time,
    /// By label, numbers in labels compared as numbers (`v9` before `v10`).
    Label,
}

/// One run of the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryRun {
    /// Its id in its store.
    pub run: i64,
    /// The store file it came from.
    pub store: String,
    /// Its label (see [`run_label`]).
    pub label: String,
    /// The revision of the software under test (`run --commit`), if recorded.
    pub revision: Option<String>,
    /// When it started (unix seconds).
    pub started_at: i64,
    /// Its profiles (`run --profile`), for the flame graphs between the
    /// runs on either side of a change point; not in `--json`, which
    /// `export` gives per run.
    #[serde(skip)]
    pub profiles: Vec<crate::store::ProfileRecord>,
}

/// One run's value at a point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunValue {
    /// Position of the run in [`History::runs`].
    pub position: usize,
    /// The headline statistic of its kept trials: the successful ones the
    /// verdicts keep (not client-bound, not unsteady where the run leaves
    /// those out), as `compare` judges the run.
    pub value: f64,
    /// The smallest and largest kept trial.
    pub min: f64,
    /// See `min`.
    pub max: f64,
    /// Kept trials.
    pub trials: usize,
    /// Every kept trial ran beside background load: kept in the series, as
    /// `check` keeps its candidate (a build's only run cannot be dropped
    /// from a history), and marked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
}

/// A run that measured a point but that the verdicts leave out there, so
/// its series and change points go without it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeftOutRun {
    /// Position of the run in [`History::runs`].
    pub position: usize,
    /// Why, in the words every view uses (`client-bound at 4 of 4
    /// trials`, `32948 errors (...)`, `every trial here ran beside
    /// background load ...`).
    pub reason: String,
}

/// A change between two runs at one point.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryChange {
    /// Position of the last run before the change in [`History::runs`].
    pub before_position: usize,
    /// Position of the first run after it (more than one step on when the
    /// runs between lack the point).
    pub after_position: usize,
    /// Id of the last run before the change.
    pub before_run: i64,
    /// Its store file.
    pub before_store: String,
    /// Its label.
    pub before_label: String,
    /// Id of the first run after the change.
    pub after_run: i64,
    /// Its store file.
    pub after_store: String,
    /// Its label.
    pub after_label: String,
    /// median(after) / median(before) over the runs between neighbouring
    /// change points.
    pub ratio: f64,
    /// 95% bootstrap CI of that ratio.
    pub ratio_ci: Option<(f64, f64)>,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// What differs between the two runs on either side.
    pub changed: Vec<changes::Changed>,
    /// The work per request between those two runs, at this point
    /// (`work_change`): which count changed, or that none did ("the
    /// machine, not the code"); `None` where neither run was counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
}

/// One (system, point) across the runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryPoint {
    /// The system label.
    pub system: String,
    /// `connections=4`.
    pub point: String,
    /// The runs that measured it, in history order.
    pub values: Vec<RunValue>,
    /// The runs that measured it but are left out of its series, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOutRun>,
    /// Its change points, in order.
    pub change_points: Vec<HistoryChange>,
}

/// The whole history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct History {
    /// The recipe's name.
    pub recipe: String,
    /// The throughput unit (`requests/s`, `TPS`, ...).
    pub unit: String,
    /// The statistic per run: the newest run's headline.
    pub statistic: Headline,
    /// How the runs are ordered.
    pub order: Order,
    /// The search's settings: significance level.
    pub alpha: f64,
    /// Permutations per test.
    pub permutations: usize,
    /// Smallest change reported (0.05 = 5%).
    pub min_magnitude: f64,
    /// The runs, in order.
    pub runs: Vec<HistoryRun>,
    /// The points, in first-seen sweep order.
    pub points: Vec<HistoryPoint>,
    /// Each system's scaling curve across the runs (N*, σ, κ, the peak
    /// and its x, the collapse, the limiter at the peak) with the change
    /// points of each property ([`shape`]).
    pub curves: Vec<shape::CurveHistory>,
}

/// Why there is no history to show.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HistoryError {
    /// No finished run of the recipe in the sources.
    #[error(
        "no finished run of recipe `{recipe}` in {sources}; `scalelab --store FILE list` shows \
         the runs a store holds"
    )]
    NoRuns {
        /// The recipe asked for.
        recipe: String,
        /// The stores searched.
        sources: String,
    },
    /// Runs of the recipe with different load kinds cannot share a chart.
    #[error(
        "runs of `{recipe}` measure different things: run {a} is `{kind_a}` load, run {b} is \
         `{kind_b}`; give the runs of one load kind"
    )]
    MixedKinds {
        /// The recipe.
        recipe: String,
        /// A run of the first kind.
        a: String,
        /// Its kind.
        kind_a: String,
        /// A run of the other kind.
        b: String,
        /// Its kind.
        kind_b: String,
    },
}

/// Which build each measured run repeats: consecutive runs with one label
/// and revision are repeats of one build, and no change falls between them
/// (`run --repeat`). When every run has the same label and revision (runs
/// without `--label` or `--commit` on one machine) the labels tell no
/// builds apart, and every run is its own.
fn repeats(runs: &[SourcedRun], measured: &[usize]) -> Vec<usize> {
    let key = |i: usize| (run_label(&runs[i].data), runs[i].data.run.revision.clone());
    let first = measured.first().map(|i| key(*i));
    if measured.iter().all(|i| Some(key(*i)) == first) {
        return (0..measured.len()).collect();
    }
    let mut out: Vec<usize> = Vec::new();
    for (k, position) in measured.iter().enumerate() {
        let same = k > 0 && key(measured[k - 1]) == key(*position);
        out.push(if same { out[k - 1] } else { k });
    }
    out
}

/// The label a run is shown by: the one given at run time, else the
/// server's OS and kernel release from the fingerprint.
pub fn run_label(data: &RunData) -> String {
    if !data.run.label.is_empty() {
        return data.run.label.clone();
    }
    data.run.environment.as_ref().map_or_else(
        || format!("run {}", data.run.id),
        |e| format!("Linux {}", e.machine.kernel_release),
    )
}

/// The history of `recipe` among `sources`, ordered by `order`;
/// `min_magnitude` overrides the newest run's `[trials] noise` as the
/// smallest change reported.
pub fn history(
    recipe: &str,
    sources: Vec<SourcedRun>,
    order: Order,
    min_magnitude: Option<f64>,
) -> Result<History, HistoryError> {
    let mut runs: Vec<SourcedRun> = sources
        .into_iter()
        .filter(|r| r.data.run.name == recipe && r.data.run.status == RunStatus::Finished)
        .collect();
    drop_repeats(&mut runs);
    sort_runs(&mut runs, order);
    let Some(newest) = runs.iter().max_by_key(|r| r.data.run.started_at) else {
        return Err(HistoryError::NoRuns {
            recipe: recipe.into(),
            sources: "the given stores".into(),
        });
    };
    check_one_kind(recipe, &runs)?;
    let statistic = Headline::parse(&newest.data.run.headline).unwrap_or_default();
    let settings = Settings {
        min_magnitude: min_magnitude.unwrap_or(newest.data.run.noise),
        headline: statistic,
        ..Settings::default()
    };
    // Each run's cells as the one engine reads them (rows, judge).
    let cells: Vec<Aggregate> = runs.iter().map(|r| rows::collect(&r.data)).collect();
    // Disturbed runs stay in the series, marked (BackgroundRule's doc).
    let rules = Rules {
        background: judge::BackgroundRule::CannotBlameADisturbedCandidate {
            max_share: judge::MAX_DISTURBED_SHARE,
        },
        ..Rules::symmetric(statistic, settings.min_magnitude)
    };
    let points = point_keys(&runs)
        .into_iter()
        .map(|key| history_point((&runs, &cells), key, &rules, &settings))
        .collect();
    let labels: Vec<String> = runs.iter().map(|r| run_label(&r.data)).collect();
    let kept = |c: &rows::Cell| judge::one_runs_values(c, &rules).unwrap_or_default();
    let analysed: Vec<Aggregate> = (runs.iter())
        .map(|r| crate::judging::analyse::aggregate(&r.data))
        .collect();
    let curves = shape::curves(
        &analysed,
        &labels,
        (|p: &[usize]| repeats(&runs, p), &kept),
        &settings,
    );
    Ok(History {
        recipe: recipe.into(),
        unit: crate::judging::rows::throughput_unit(&newest.data, &mut Vec::new())
            .as_str()
            .to_string(),
        statistic,
        order,
        alpha: settings.alpha,
        permutations: settings.permutations,
        min_magnitude: settings.min_magnitude,
        runs: runs.iter().map(history_run).collect(),
        points,
        curves,
    })
}

fn history_run(r: &SourcedRun) -> HistoryRun {
    HistoryRun {
        run: r.data.run.id,
        store: r.store.clone(),
        label: run_label(&r.data),
        revision: r.data.run.revision.clone(),
        started_at: r.data.run.started_at,
        profiles: r.data.profiles.clone(),
    }
}

/// Keeps the first of runs read twice: from one store file (named twice,
/// by two spellings of its path, or as `STORE` and `STORE:RUN`) or from a
/// store and its copy. A run is known by its identity, as `check` knows it
/// ([`crate::judging::check::is_same_run`]: id, start time and recipe), not
/// by the file it was read from; the same run twice would be two points of
/// the series. Runs of other stores with the same id stay.
fn drop_repeats(runs: &mut Vec<SourcedRun>) {
    let mut kept: Vec<SourcedRun> = Vec::with_capacity(runs.len());
    for r in runs.drain(..) {
        if !kept
            .iter()
            .any(|k| crate::judging::check::is_same_run(&k.data, &r.data))
        {
            kept.push(r);
        }
    }
    *runs = kept;
}

fn sort_runs(runs: &mut [SourcedRun], order: Order) {
    match order {
        Order::Time => runs.sort_by(|a, b| {
            (a.data.run.started_at, &a.store, a.data.run.id).cmp(&(
                b.data.run.started_at,
                &b.store,
                b.data.run.id,
            ))
        }),
        Order::Label => runs.sort_by(|a, b| {
            natural_key(&run_label(&a.data))
                .cmp(&natural_key(&run_label(&b.data)))
                .then(a.data.run.started_at.cmp(&b.data.run.started_at))
        }),
    }
}

/// A sort key that compares runs of digits as numbers: `v9` < `v10`.
fn natural_key(label: &str) -> Vec<(bool, u128, String)> {
    let mut out = Vec::new();
    let mut chars = label.chars().peekable();
    while let Some(&c) = chars.peek() {
        let digits = c.is_ascii_digit();
        let mut part = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() != digits {
                break;
            }
            part.push(d);
            chars.next();
        }
        let number = if digits {
            part.parse().unwrap_or(u128::MAX)
        } else {
            0
        };
        out.push((digits, number, part));
    }
    out
}

fn check_one_kind(recipe: &str, runs: &[SourcedRun]) -> Result<(), HistoryError> {
    let first = &runs[0].data.run;
    match runs
        .iter()
        .find(|r| r.data.run.load_kind != first.load_kind)
    {
        None => Ok(()),
        Some(other) => Err(HistoryError::MixedKinds {
            recipe: recipe.into(),
            a: format!("{}:{}", runs[0].store, first.id),
            kind_a: first.load_kind.clone(),
            b: format!("{}:{}", other.store, other.data.run.id),
            kind_b: other.data.run.load_kind.clone(),
        }),
    }
}

/// Every (system, point label) in first-seen order.
fn point_keys(runs: &[SourcedRun]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in runs {
        for system in r.data.systems() {
            for p in r.data.points() {
                let key = (system.clone(), p.label());
                if !out.contains(&key) && r.data.trials_at(&system, p.index).next().is_some() {
                    out.push(key);
                }
            }
        }
    }
    out
}

/// A run's position, its kept trials' values at a point, and whether
/// every one of them ran beside background load.
type MeasuredRun = (usize, Vec<f64>, bool);

/// What each run holds at one point, by the engine's rules
/// (`judge::one_runs_values`): its kept trials' values and whether every
/// one ran beside background load, or why it is left out there.
fn measured_at(
    cells: &[Aggregate],
    (system, point): (&str, &str),
    rules: &Rules,
) -> (Vec<MeasuredRun>, Vec<LeftOutRun>) {
    let mut measured = Vec::new();
    let mut left_out = Vec::new();
    for (position, agg) in cells.iter().enumerate() {
        let found = (agg.cells.iter()).find(|c| c.system == system && c.point.label() == point);
        let Some(cell) = found.filter(|c| !c.samples.is_empty() || c.not_comparable.is_some())
        else {
            continue;
        };
        match judge::one_runs_values(cell, rules) {
            Ok(values) if !values.is_empty() => {
                measured.push((position, values, judge::every_kept_trial_disturbed(cell)))
            }
            Ok(_) => {}
            Err(reason) => left_out.push(LeftOutRun { position, reason }),
        }
    }
    (measured, left_out)
}

fn history_point(
    (runs, cells): (&[SourcedRun], &[Aggregate]),
    (system, point): (String, String),
    rules: &Rules,
    settings: &Settings,
) -> HistoryPoint {
    let (measured, left_out) = measured_at(cells, (&system, &point), rules);
    let values = measured
        .iter()
        .map(|(position, v, disturbed)| RunValue {
            disturbed: *disturbed,
            ..run_value(*position, v, rules.headline)
        })
        .collect();
    let series: Vec<Vec<f64>> = measured.iter().map(|(_, v, _)| v.clone()).collect();
    let measured: Vec<(usize, Vec<f64>)> = measured.into_iter().map(|(p, v, _)| (p, v)).collect();
    let positions: Vec<usize> = measured.iter().map(|(p, _)| *p).collect();
    let repeat_of = repeats(runs, &positions);
    let change_points = change_points_of_repeats(&series, &repeat_of, settings)
        .into_iter()
        .map(|c| {
            let (before_position, after_position) = (measured[c.after - 1].0, measured[c.after].0);
            let (before, after) = (&runs[before_position], &runs[after_position]);
            HistoryChange {
                before_position,
                after_position,
                before_run: before.data.run.id,
                before_store: before.store.clone(),
                before_label: run_label(&before.data),
                after_run: after.data.run.id,
                after_store: after.store.clone(),
                after_label: run_label(&after.data),
                ratio: c.ratio,
                ratio_ci: c.ratio_ci,
                p_value: c.p_value,
                changed: changes::between(&before.data, &after.data),
                work: crate::judging::work_change::between_runs(
                    (&before.data, &after.data),
                    (&system, &point),
                ),
            }
        })
        .collect();
    HistoryPoint {
        system,
        point,
        values,
        left_out,
        change_points,
    }
}

fn run_value(position: usize, values: &[f64], statistic: Headline) -> RunValue {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    RunValue {
        position,
        value: statistic.of(values).unwrap_or(f64::NAN),
        min,
        max,
        trials: values.len(),
        disturbed: false,
    }
}
