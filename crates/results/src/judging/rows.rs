//! The per-(system, point) aggregation every format renders. It is built
//! once by [`super::analyse::aggregate`]: [`collect`] here gathers the
//! trials' facts without any statistics, then the analysis pass adds
//! summaries, comparisons against the baseline, fits and the ranking.
//! Renderers only read the result.

use super::context_facts::ContextFacts;
use super::layout::Layout;
use super::probe_view;
use crate::analysis::compare::Comparison;
use crate::analysis::shape::CurveShape;
use crate::analysis::summary::{Headline, Summary};
use crate::analysis::usl::UslFit;
use crate::model::Point;
use crate::record::errors::ErrorCounts;
use crate::record::probe::{CpuSplit, ProbeSummary};
use crate::store::{RunData, Trial, TrialStatus};
use crate::units::RateUnit;

/// Everything the reports show about one run.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// The statistic each cell's trials are summarised by (median or best).
    pub headline: Headline,
    /// The baseline system, when it has trials.
    pub baseline: Option<String>,
    /// The systems, in the run's order.
    pub systems: Vec<String>,
    /// The sweep's points, in sweep order.
    pub points: Vec<Point>,
    /// How the points are laid out on the charts.
    pub layout: Layout,
    /// Whether the x axis counts concurrency or processors, so the USL is
    /// fitted to it ([`super::layout::usl_applies`]).
    pub usl_axis: bool,
    /// One cell per (point, system) that has trials, in sweep then system
    /// order.
    pub cells: Vec<Cell>,
    /// One per (system, group) with at least one headline value.
    pub fits: Vec<SeriesFit>,
    /// Relative throughput against the baseline, best first.
    pub ranking: Vec<Rank>,
    /// What the throughput counts, from the run's load kind.
    pub unit: &'static str,
    /// The run's `[trials] noise`: relative differences below it are never
    /// called a difference.
    pub noise: f64,
    /// The clauses the trials' load kinds add to the verdicts' legend
    /// ([`RunData::kind_legend`]).
    pub kind_legend: String,
    /// Caveats about the run as a whole.
    pub notes: Vec<String>,
    /// The machine's RAM (`environment.mem_total_bytes`): the dataset axis's
    /// yardstick when the server had no memory limit.
    pub ram_bytes: Option<f64>,
    /// The load's unit, the server's CPU count, a nominal CPU frequency and
    /// a forwarding run's directions, for the seed figures.
    pub facts: super::figures::RunFacts,
    /// The order-effect check ([`super::order_effect`]); `None` for a run
    /// stored before trial orders were.
    pub order_effect: Option<super::order_effect::OrderEffect>,
}

/// One system's curve within one group.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SeriesFit {
    /// The system.
    pub system: String,
    /// The layout's group the curve is in.
    pub group: usize,
    /// (x, headline throughput), sorted by x.
    pub points: Vec<(f64, f64)>,
    /// The USL fit; `None` when not attempted (see [`Aggregate::usl_axis`]), the
    /// error text when the fit failed.
    pub usl: Option<Result<UslFit, String>>,
    /// The axis suits the USL but the series has fewer than
    /// [`crate::analysis::usl::FEW_POINTS`] levels: no fit was attempted.
    pub usl_too_short: bool,
    /// The curve's shape (peak, decline, collapse); `None` with too few points.
    pub shape: Option<CurveShape>,
    /// What the shape and the fit rest on, when it is not the server.
    pub caveat: super::caveat::CurveCaveat,
}

/// A system's throughput relative to the baseline.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Rank {
    /// The system ranked.
    pub system: String,
    /// Geometric mean over the comparable points it shares with the
    /// baseline of headline / baseline headline (the headlines the
    /// verdicts used: client-bound trials left out); 0 when every point was
    /// left out (`points` is then 0). The baseline's is 1, or 0 when no
    /// other system was ranked.
    pub relative: f64,
    /// How many points the mean is over; the baseline's, the points at
    /// which some other system was ranked.
    pub points: usize,
    /// Points where the verdict against the baseline is significant
    /// (faster or slower), out of the points with enough trials to test;
    /// `None` for the baseline and when no point could be tested.
    pub significant: Option<usize>,
    /// No point had enough trials to test (never the baseline).
    pub too_few_trials: bool,
    /// Points left out of the mean because the verdict there is "not
    /// comparable": this system or the baseline had errors above the
    /// threshold, a load generator that fell behind, or every trial
    /// client-bound ([`super::judge::excluded`]). The baseline's: its own
    /// points in no verdict.
    pub excluded: usize,
    /// Between runs (this series and the baseline from different runs):
    /// the verdict on the run as a whole ([`super::judge::whole`]), which
    /// alone decides `significant` and `too_few_trials` then.
    pub whole: Option<Comparison>,
}

/// One system at one sweep point, over all its trials.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The system.
    pub system: String,
    /// The sweep point.
    pub point: Point,
    /// The point's value on the x axis; `None` without a numeric axis.
    pub x: Option<f64>,
    /// The layout's group the point is in.
    pub group: usize,
    /// Throughput of each successful trial, in trial order.
    pub throughput: Vec<f64>,
    /// The same trials as the comparison engine reads them
    /// ([`super::judge`]): value, run, and whether the load generator or
    /// other processes limited them.
    pub samples: Vec<Sample>,
    /// The trials that failed, with their reasons.
    pub failed: Vec<TrialNote>,
    /// The trials the load generator limited, with the reason.
    pub client_bound: Vec<TrialNote>,
    /// The probe's caveats, per trial.
    pub probe_warnings: Vec<TrialNote>,
    /// Medians across successful trials.
    pub latency: Latency,
    /// Median line rate over the successful trials, Gbit/s, where the load kind counts bytes.
    pub gbit_s: Option<f64>,
    /// The server's figures from the probe.
    pub server: ServerFigures,
    /// Dataset size, memory limit, line speed, DNS ramp.
    pub facts: ContextFacts,
    /// Summed over successful trials.
    pub errors: ErrorCounts,
    /// Requests (transactions, queries, frames) completed, summed over successful trials.
    pub requests: u64,
    /// Why the cell is in no verdict and no ranking for its own errors, by
    /// the rules of [`super::comparable`] (a cell whose every trial is
    /// client-bound is too: [`super::judge::excluded`] gives either): `32948 errors (31042 timeouts, 1906 connect)`
    /// when the errors exceed [`crate::analysis::compare::MAX_ERROR_RATE`]
    /// of the attempts (a DNS ramp's lost queries are never errors).
    pub not_comparable: Option<String>,
    /// The summary of `throughput` by the run's headline; `None` without a successful trial.
    pub summary: Option<Summary>,
    /// Against the baseline system at the same point.
    pub comparison: Option<Comparison>,
    /// Watts and ops/J; `None` when no trial has an energy figure.
    pub energy: Option<super::energy_cell::CellEnergy>,
    /// What limited the point (`probe::limiter`), from its successful trials.
    pub limiter: Option<super::limiter::PointLimiter>,
}

/// One successful trial as [`super::judge`] reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Its throughput.
    pub value: f64,
    /// The run it belongs to: the trial's `run_id` (on a page of several
    /// runs, the run's position among them, so runs of two stores never
    /// share one).
    pub run: i64,
    /// The load generator, not the server, was the limit.
    pub client_bound: bool,
    /// Its window was unsteady and its run leaves such trials out
    /// (`[trials] unsteady = "exclude"`).
    pub unsteady: bool,
    /// It ran beside background load (the probe's mark,
    /// [`crate::record::probe::background::Background::noisy`]).
    pub background: bool,
}

impl Sample {
    /// Whether verdicts leave it out: client-bound, or unsteady where its
    /// run excludes those ([`crate::store::left_out_of_verdicts`] of its
    /// trial).
    pub fn left_out(&self) -> bool {
        self.client_bound || self.unsteady
    }
}

/// A trial-level remark: a failure or a client-bound flag.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TrialNote {
    /// The trial's number within its cell.
    pub trial: u32,
    /// Why, in words.
    pub reason: String,
}

/// Latency percentiles in microseconds: the median across trials of each
/// trial's percentile.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Latency {
    /// The median latency.
    pub p50_us: Option<f64>,
    /// The 90th percentile.
    pub p90_us: Option<f64>,
    /// The 99th percentile.
    pub p99_us: Option<f64>,
    /// The 99.9th percentile.
    pub p999_us: Option<f64>,
    /// The slowest request.
    pub max_us: Option<f64>,
}

/// Server-side figures from the probe: medians across successful trials.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ServerFigures {
    /// Server CPU in CPUs (1.0 = one CPU busy).
    pub cpu_util: Option<f64>,
    /// Machine-wide busy fraction of all CPUs.
    pub cpu_busy: Option<f64>,
    /// How the machine's CPU time was spent (user, system, irq, steal, ...).
    pub cpu_shares: Option<CpuSplit>,
    /// Mean CPU frequency, MHz, where the machine tells it.
    pub freq_mhz: Option<f64>,
    /// Σ over CPUs of busy share × MHz: the work done, frequency-weighted.
    pub load_x_freq: Option<f64>,
    /// Resident memory per worker process, bytes.
    pub rss_per_worker: Option<f64>,
    /// Virtual memory per worker process, bytes.
    pub vsz_per_worker: Option<f64>,
    /// Processes in the server's tree.
    pub processes: Option<f64>,
    /// Threads in the server's tree.
    pub threads: Option<f64>,
    /// Server CPU microseconds per completed request (transaction).
    pub cpu_us_per_request: Option<f64>,
    /// Server context switches (voluntary + involuntary) per request.
    pub ctx_per_request: Option<f64>,
    /// The kernel's counts of the server's work per request (system
    /// calls, context switches, faults, CPU by mode): `None` where no
    /// trial was counted (and then absent from the export).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work: Option<super::work::WorkPerOp>,
}

impl Cell {
    /// The headline throughput (median or best of the successful trials).
    pub fn headline(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.headline)
    }

    /// Trials run at the cell, successful or failed.
    pub fn trials(&self) -> usize {
        self.throughput.len() + self.failed.len()
    }
}

impl Aggregate {
    /// The cell of `system` at the point of index `point`.
    pub fn cell(&self, system: &str, point: u32) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.system == system && c.point.index == point)
    }

    /// Every cell in the layout's group `group`.
    pub fn cells_in_group(&self, group: usize) -> impl Iterator<Item = &Cell> {
        self.cells.iter().filter(move |c| c.group == group)
    }

    /// The curve of `system` in group `group`.
    pub fn fit(&self, system: &str, group: usize) -> Option<&SeriesFit> {
        self.fits
            .iter()
            .find(|f| f.system == system && f.group == group)
    }

    /// All client-bound flags, with the cell they belong to.
    pub fn client_bound(&self) -> impl Iterator<Item = (&Cell, &TrialNote)> {
        self.cells
            .iter()
            .flat_map(|c| c.client_bound.iter().map(move |n| (c, n)))
    }

    /// All probe warnings, with the cell they belong to.
    pub fn probe_warnings(&self) -> impl Iterator<Item = (&Cell, &TrialNote)> {
        self.cells
            .iter()
            .flat_map(|c| c.probe_warnings.iter().map(move |n| (c, n)))
    }

    /// `median` or `best`: what the headline throughput is.
    pub fn headline_word(&self) -> &'static str {
        self.headline.as_str()
    }

    /// What actually ran: `2 points (connections=4, connections=64), 2
    /// trials per point and system` (a quick run's sweep, not the file's).
    pub fn ran(&self) -> String {
        let mut labels: Vec<String> = self.points.iter().take(8).map(|p| p.label()).collect();
        if self.points.len() > 8 {
            labels.push("…".into());
        }
        let counts: Vec<usize> = self.cells.iter().map(Cell::trials).collect();
        let (lo, hi) = (
            counts.iter().min().copied().unwrap_or(0),
            counts.iter().max().copied().unwrap_or(0),
        );
        let trials = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}–{hi}")
        };
        format!(
            "{} point{} ({}), {trials} trial{} per point and system",
            self.points.len(),
            if self.points.len() == 1 { "" } else { "s" },
            labels.join(", "),
            if hi == 1 { "" } else { "s" }
        )
    }

    /// All failed trials, with the cell they belong to.
    pub fn failures(&self) -> impl Iterator<Item = (&Cell, &TrialNote)> {
        self.cells
            .iter()
            .flat_map(|c| c.failed.iter().map(move |n| (c, n)))
    }
}

/// Gathers every cell's facts from the trials; no statistics yet.
pub fn collect(data: &RunData) -> Aggregate {
    let systems = data.systems();
    let points = data.points();
    let layout = Layout::new(&points);
    let mut notes = Vec::new();
    let headline = match Headline::parse(&data.run.headline) {
        Some(h) => h,
        None if data.run.headline.is_empty() => Headline::Median,
        None => {
            let other = &data.run.headline;
            notes.push(format!(
                "unknown headline statistic `{other}`; the median is shown"
            ));
            Headline::Median
        }
    };
    let baseline = pick_baseline(data, &systems, &mut notes);
    let parallelism = data.run.parallelism.as_deref().unwrap_or_default();
    let usl_axis = layout
        .x_axis
        .as_deref()
        .and_then(|a| points.iter().find_map(|p| p.coord(a)))
        .is_some_and(|c| super::layout::usl_applies(&c.target, parallelism));
    let mut cells = Vec::new();
    for p in &points {
        for s in &systems {
            let trials: Vec<&Trial> = data.trials_at(s, p.index).collect();
            if !trials.is_empty() {
                cells.push(cell(s, p, &layout, &trials));
            }
        }
    }
    Aggregate {
        headline,
        baseline,
        systems,
        points,
        layout,
        usl_axis,
        cells,
        fits: Vec::new(),
        ranking: Vec::new(),
        unit: throughput_unit(data, &mut notes).as_str(),
        noise: data.run.noise,
        kind_legend: data.kind_legend(),
        notes,
        ram_bytes: (data.run.environment.as_ref())
            .and_then(|e| e.machine.mem_total_bytes)
            .map(|b| b as f64)
            .filter(|b| *b > 0.0),
        facts: super::figures::RunFacts::of(data),
        order_effect: super::order_effect::of(data, data.run.noise),
    }
}

fn pick_baseline(data: &RunData, systems: &[String], notes: &mut Vec<String>) -> Option<String> {
    match &data.run.baseline {
        Some(b) if systems.contains(b) => Some(b.clone()),
        Some(b) => {
            notes.push(format!(
                "baseline `{b}` has no trials; comparing against `{}` instead",
                systems.first().map(String::as_str).unwrap_or("-")
            ));
            systems.first().cloned()
        }
        None => systems.first().cloned(),
    }
}

fn cell(system: &str, point: &Point, layout: &Layout, trials: &[&Trial]) -> Cell {
    let ok: Vec<&Trial> = trials
        .iter()
        .copied()
        .filter(|t| t.throughput().is_some())
        .collect();
    let failed = trials
        .iter()
        .filter(|t| t.throughput().is_none())
        .map(|t| TrialNote {
            trial: t.trial,
            reason: failure_reason(t),
        })
        .collect();
    let client_bound = trials
        .iter()
        .filter_map(|t| {
            t.context.client_bound_why().map(|reason| TrialNote {
                trial: t.trial,
                reason,
            })
        })
        .collect();
    let probe_warnings = trials
        .iter()
        .flat_map(|t| {
            t.probe
                .iter()
                .flat_map(|p| p.warnings.iter().cloned())
                .chain(t.probe_unreadable.iter().cloned())
                .map(|reason| TrialNote {
                    trial: t.trial,
                    reason,
                })
        })
        .collect();
    let mut errors = ErrorCounts::default();
    let mut requests = 0;
    for m in ok.iter().filter_map(|t| t.measurement.as_ref()) {
        errors.merge(&m.errors);
        requests += m.requests;
    }
    Cell {
        system: system.to_string(),
        point: point.clone(),
        x: layout.x_of(point),
        group: layout.group_of(point.index),
        throughput: ok.iter().filter_map(|t| t.throughput()).collect(),
        samples: ok.iter().filter_map(|t| sample(t)).collect(),
        failed,
        client_bound,
        probe_warnings,
        latency: latency(&ok),
        gbit_s: median_of(&ok, |t| t.measurement.as_ref().map(|m| m.gbit_s)),
        server: server(&ok),
        facts: ContextFacts::of(&ok),
        not_comparable: super::comparable::reason(&ok, &errors, requests),
        errors,
        requests,
        summary: None,
        comparison: None,
        energy: super::energy_cell::of_trials(&ok),
        limiter: super::limiter::of_trials(&ok),
    }
}

fn sample(t: &Trial) -> Option<Sample> {
    Some(Sample {
        value: t.throughput()?,
        run: t.run_id,
        client_bound: t.context.client_bound_why().is_some(),
        unsteady: t.window.left_out,
        background: (t.probe.as_ref())
            .and_then(|p| p.background)
            .is_some_and(|b| b.noisy),
    })
}

fn failure_reason(t: &Trial) -> String {
    match (&t.status, &t.error) {
        (_, Some(e)) if !e.trim().is_empty() => e.clone(),
        (TrialStatus::Ok, _) => "no measurement recorded".into(),
        (TrialStatus::Failed, _) => "failed without an error message".into(),
    }
}

fn latency(ok: &[&Trial]) -> Latency {
    let pct = |f: fn(&crate::record::measurement::LatencySummary) -> u64| {
        median_of(ok, move |t| {
            t.measurement
                .as_ref()
                .map(|m| f(&m.latency_us) as f64)
                .filter(|v| *v > 0.0)
        })
    };
    Latency {
        p50_us: pct(|l| l.p50.0),
        p90_us: pct(|l| l.p90.0),
        p99_us: pct(|l| l.p99.0),
        p999_us: pct(|l| l.p999.0),
        max_us: pct(|l| l.max.0),
    }
}

fn server(ok: &[&Trial]) -> ServerFigures {
    let num = |read: probe_view::Read| median_of(ok, move |t| t.probe.as_ref().and_then(read));
    let shares: Vec<CpuSplit> = ok
        .iter()
        .filter_map(|t| Some(t.probe.as_ref()?.cpu))
        .collect();
    ServerFigures {
        cpu_util: num(|p| p.server_cpu_util),
        cpu_busy: num(|p| Some(p.cpu_busy)),
        cpu_shares: CpuSplit::mean(&shares),
        freq_mhz: num(|p| p.freq_mhz_mean),
        load_x_freq: num(|p| p.load_x_freq),
        rss_per_worker: num(|p| p.mem_per_worker_rss_bytes.map(|v| v as f64)),
        vsz_per_worker: num(|p| p.mem_per_worker_vsz_bytes.map(|v| v as f64)),
        processes: num(|p| p.processes.map(f64::from)),
        threads: num(|p| p.threads.map(f64::from)),
        cpu_us_per_request: per_request(ok, |p| p.server_cpu_s, 1e6),
        ctx_per_request: per_request(
            ok,
            |p| Some((p.ctx_voluntary? + p.ctx_involuntary?) as f64),
            1.0,
        ),
        work: super::work::of_point(ok),
    }
}

/// The median over trials of a probe figure divided by the trial's
/// completed requests, times `scale`.
fn per_request(ok: &[&Trial], read: fn(&ProbeSummary) -> Option<f64>, scale: f64) -> Option<f64> {
    median_of(ok, |t| {
        let requests = t.measurement.as_ref()?.requests;
        let total = probe_view::number(t.probe.as_ref(), read)?;
        (requests > 0).then(|| total / requests as f64 * scale)
    })
}

/// The median of a per-trial quantity over the trials that have it.
fn median_of(trials: &[&Trial], f: impl Fn(&Trial) -> Option<f64>) -> Option<f64> {
    let mut v: Vec<f64> = trials
        .iter()
        .filter_map(|t| f(t))
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The throughput unit: the one the run's load kind declared, stored with
/// the run (`runs.rate_unit`). A kind this scalelab does not know (a store
/// written by a newer version) gets `requests/s` and a note saying so.
pub fn throughput_unit(data: &RunData, notes: &mut Vec<String>) -> RateUnit {
    data.run.rate_unit.unwrap_or_else(|| {
        notes.push(format!(
            "unknown load kind `{}`; throughput is shown as requests/s",
            data.run.load_kind
        ));
        RateUnit::Requests
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::PerSecond;

    #[test]
    fn median_of_odd_and_even() {
        let mk = |v: f64| Trial {
            id: 0,
            run_id: 0,
            system: "a".into(),
            point: Point {
                index: 0,
                coords: vec![],
            },
            trial: 1,
            status: TrialStatus::Ok,
            error: None,
            failure_cause: None,
            started_at: 0,
            measurement: Some(crate::store::Measurement {
                rps: PerSecond(v),
                ..Default::default()
            }),
            probe: None,
            probe_unreadable: None,
            timeline: vec![],
            window: Default::default(),
            context: Default::default(),
            place: None,
        };
        let ts = [mk(3.0), mk(1.0), mk(2.0)];
        let refs: Vec<&Trial> = ts.iter().collect();
        assert_eq!(median_of(&refs, |t| t.throughput()), Some(2.0));
        assert_eq!(median_of(&refs[..2], |t| t.throughput()), Some(2.0));
        assert_eq!(median_of(&[], |t| t.throughput()), None);
    }

    #[test]
    fn a_sample_is_left_out_as_the_stopping_rule_leaves_its_trial_out() {
        let mut trial = crate::judging::test_support::run_data(&["a"]).trials[0].clone();
        for (bound, unsteady) in [(false, false), (true, false), (false, true), (true, true)] {
            (trial.context).set_client_bound(bound.then(|| "client CPU 99%".into()));
            trial.window.left_out = unsteady;
            let s = sample(&trial).expect("an ok trial with a throughput");
            assert_eq!(s.left_out(), bound || unsteady, "{bound} {unsteady}");
            let stored = crate::store::left_out_of_verdicts(&trial.context, &trial.window);
            assert_eq!(s.left_out(), stored, "{bound} {unsteady}");
        }
    }

    #[test]
    fn the_unit_follows_the_load_kind() {
        let mut data = crate::judging::test_support::run_data(&["a", "b"]);
        let unit = |data: &RunData| {
            let mut notes = Vec::new();
            (throughput_unit(data, &mut notes).as_str(), notes.len())
        };
        assert_eq!(unit(&data), ("requests/s", 0));
        data.run.load_kind = "pg".into();
        data.run.rate_unit = scalelab_lab::catalog().rate_unit_of("pg");
        assert_eq!(unit(&data), ("transactions/s", 0));
        data.run.load_kind = "fake".into();
        data.run.rate_unit = scalelab_lab::catalog().rate_unit_of("fake");
        assert_eq!(unit(&data), ("frames/s", 0));
        data.run.load_kind = "carrier-pigeon".into();
        data.run.rate_unit = scalelab_lab::catalog().rate_unit_of("carrier-pigeon");
        assert_eq!(unit(&data), ("requests/s", 1));
    }

    #[test]
    fn server_cost_is_per_completed_request() {
        let data = crate::judging::test_support::run_data(&["a"]);
        let trial = data
            .trials
            .iter()
            .find(|t| t.measurement.is_some())
            .unwrap();
        let requests = trial.measurement.as_ref().unwrap().requests as f64;
        let cpu_s = trial.probe.as_ref().unwrap().server_cpu_s.unwrap();
        let ok = [trial];
        let cost = server(&ok);
        assert_eq!(cost.cpu_us_per_request, Some(cpu_s / requests * 1e6));
        assert_eq!(cost.ctx_per_request, Some(1500.0 / requests));
        let mut bare = trial.clone();
        bare.probe = None;
        assert_eq!(
            server(&[&bare]).ctx_per_request,
            None,
            "no probe, no figure"
        );
    }
}
