//! The JSON export: the run, every trial, the per-point aggregates with
//! their comparisons and verdicts, the fits and the ranking, in one
//! document. Field names are listed in `docs/report.md`.
//!
//! The document is the `Export` type and the types it holds; its JSON
//! Schema, `docs/export-schema.json`, is generated from them ([`schema`];
//! a test checks the file against it, and `SCALELAB_BLESS=1` rewrites it).

use super::svg::{scale, ScaleKind};
use crate::analysis::compare::Comparison;
use crate::analysis::shape::CurveShape;
use crate::analysis::summary::{Headline, Summary};
use crate::analysis::usl::UslFit;
use crate::judging::analyse::aggregate;
use crate::judging::fits::{ranking_line, Standing};
use crate::judging::rows::{Aggregate, Cell, Latency, Rank, SeriesFit, TrialNote};
use crate::judging::verdict;
use crate::model::Point;
use crate::record::errors::ErrorCounts;
use crate::record::probe::{CpuSplit, ProbeSummary};
use crate::store::{FailureCause, Measurement, Run, RunData, Trial, TrialContext, TrialStatus};
use crate::units::RateUnit;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};

/// The document's `schema` value; bumped when a field changes meaning.
pub const SCHEMA: &str = "scalelab-report/1";

/// The run as one JSON document (see the module doc); its `schema` field
/// is [`SCHEMA`].
pub fn export(data: &RunData) -> Value {
    export_aggregate(&aggregate(data), data)
}

/// As [`export`], from an aggregate already computed from `data`.
pub(crate) fn export_aggregate(agg: &Aggregate, data: &RunData) -> Value {
    serde_json::to_value(document(agg, data)).unwrap_or(Value::Null)
}

/// The export as its typed document.
pub(crate) fn document<'a>(agg: &'a Aggregate, data: &'a RunData) -> Export<'a> {
    Export {
        schema: SCHEMA,
        run: RunDoc::from(&data.run),
        unit: agg.unit,
        headline: agg.headline,
        baseline: agg.baseline.as_deref(),
        systems: &agg.systems,
        layout: LayoutDoc::of(agg),
        trials: data.trials.iter().map(TrialDoc::from).collect(),
        points: agg.cells.iter().map(PointDoc::from).collect(),
        fits: agg.fits.iter().map(|f| FitDoc::of(agg, f)).collect(),
        fit_note: crate::judging::fits::too_short_sentence(agg),
        ranking: RankingDoc {
            method: "geometric mean over the comparable points both share of headline / baseline headline (client-bound trials left out; points not comparable counted in excluded)",
            text: ranking_line(&agg.ranking, agg.noise),
            order: &agg.ranking,
            standing: crate::judging::fits::standing(agg),
        },
        notes: &agg.notes,
        order_effect: agg.order_effect.as_ref(),
        quick: data.run.quick,
    }
}

/// scalelab JSON export (`scalelab export RUN --format json`).
///
/// Version scalelab-report/1, the value of the document's `schema` field.
/// The version changes when a field changes meaning or goes away; new
/// fields may appear within a version, so readers should ignore fields they
/// do not know. Numbers that cannot be formed (NaN, infinity) are null. The
/// figures are described in docs/report.md.
#[derive(Serialize, JsonSchema)]
pub(crate) struct Export<'a> {
    /// The schema version of this document.
    #[schemars(schema_with = "version_schema")]
    pub schema: &'static str,
    pub run: RunDoc<'a>,
    /// What the throughput counts.
    #[schemars(schema_with = "unit_schema")]
    pub unit: &'static str,
    /// Which statistic of the successful trials the tables show.
    pub headline: Headline,
    pub baseline: Option<&'a str>,
    pub systems: &'a [String],
    pub layout: LayoutDoc<'a>,
    /// Every trial, failed ones included, in the order they ran.
    pub trials: Vec<TrialDoc<'a>>,
    /// One entry per (sweep point, system) with trials.
    pub points: Vec<PointDoc<'a>>,
    /// One entry per (system, group) curve.
    pub fits: Vec<FitDoc<'a>>,
    /// Set when some curve has too few levels (fewer than 6) for a USL fit.
    pub fit_note: Option<String>,
    pub ranking: RankingDoc<'a>,
    pub notes: &'a [String],
    /// The order-effect check: the first trial of each round against the
    /// rest, and each cell's trend in start order; absent for a run stored
    /// before trial orders were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_effect: Option<&'a crate::judging::order_effect::OrderEffect>,
    /// The run was made with --quick.
    pub quick: bool,
}

/// The run's own record.
#[derive(Serialize, JsonSchema)]
pub(crate) struct RunDoc<'a> {
    pub id: i64,
    pub name: &'a str,
    pub description: &'a str,
    /// Unix seconds.
    pub started_at: i64,
    /// Unix seconds; null while running or when interrupted.
    pub finished_at: Option<i64>,
    /// running, finished or interrupted.
    pub status: &'a str,
    pub experiment_path: &'a str,
    /// The experiment file's text.
    pub experiment: &'a str,
    /// The environment fingerprint (kernel, sysctls, CPU, virtualization);
    /// see docs/probe-metrics.md.
    #[schemars(schema_with = "object_schema")]
    pub environment: Value,
    pub scalelab_version: &'a str,
    pub server_version: Option<&'a str>,
    pub baseline: Option<&'a str>,
    /// median or best.
    #[schemars(with = "Headline")]
    pub headline: &'a str,
    /// What legends and verdicts call the run: `run --label`, else the
    /// server host's OS and kernel release.
    pub label: &'a str,
    /// The revision of the software under test (`run --commit`); null
    /// when none was given.
    pub revision: Option<&'a str>,
    /// The seed the trial order was drawn from (`run --seed` repeats it);
    /// absent for a run stored before orders were (it ran in sweep order),
    /// so an older run exports as it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `random` or `sweep` (`[trials] order`); absent as `seed` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<&'a str>,
}

impl<'a> From<&'a Run> for RunDoc<'a> {
    fn from(r: &'a Run) -> Self {
        RunDoc {
            id: r.id,
            name: &r.name,
            description: &r.description,
            started_at: r.started_at,
            finished_at: r.finished_at,
            status: r.status.as_str(),
            experiment_path: &r.experiment_path,
            experiment: &r.experiment,
            environment: r.environment_facts(),
            scalelab_version: &r.scalelab_version,
            server_version: r.server_version.as_deref(),
            baseline: r.baseline.as_deref(),
            headline: &r.headline,
            label: &r.label,
            revision: r.revision.as_deref(),
            seed: r.order.as_ref().map(|o| o.seed),
            order: r.order.as_ref().map(|o| o.order.as_str()),
        }
    }
}

/// How the points are laid out: the x axis and the groups.
#[derive(Serialize, JsonSchema)]
pub(crate) struct LayoutDoc<'a> {
    /// The sweep axis drawn as x; null when no axis is numeric.
    pub x_axis: Option<&'a str>,
    pub x_scale: Option<ScaleKind>,
    pub group_axes: &'a [String],
    pub groups: Vec<GroupDoc<'a>>,
}

/// One group of points (one combination of the other axes' values).
#[derive(Serialize, JsonSchema)]
pub(crate) struct GroupDoc<'a> {
    pub label: &'a str,
    /// Point indices in sweep order.
    pub points: &'a [u32],
}

impl<'a> LayoutDoc<'a> {
    fn of(agg: &'a Aggregate) -> Self {
        let xs: Vec<f64> = agg.cells.iter().filter_map(|c| c.x).collect();
        LayoutDoc {
            x_axis: agg.layout.x_axis.as_deref(),
            x_scale: agg.layout.x_axis.as_ref().map(|_| scale::choose_kind(&xs)),
            group_axes: &agg.layout.group_axes,
            groups: agg
                .layout
                .groups
                .iter()
                .map(|g| GroupDoc {
                    label: &g.label,
                    points: &g.points,
                })
                .collect(),
        }
    }
}

/// `{"connections": 100, "load.script": "select-only"}`
pub fn coords(p: &Point) -> Value {
    let map: Map<String, Value> = p.coords.iter().map(|c| (c.axis(), c.json())).collect();
    Value::Object(map)
}

/// One trial as it ran.
#[derive(Serialize, JsonSchema)]
pub(crate) struct TrialDoc<'a> {
    pub id: i64,
    pub system: &'a str,
    pub point_index: u32,
    /// The point's value on each sweep axis, by axis name.
    #[schemars(schema_with = "object_schema")]
    pub coords: Value,
    #[schemars(range(min = 1))]
    pub trial: u32,
    pub status: TrialStatus,
    /// Why the trial failed.
    pub error: Option<&'a str>,
    /// The environmental cause of a failure, which `--resume` retries;
    /// null for a good trial and for a failure of the server under test.
    pub failure_cause: Option<FailureCause>,
    /// Unix seconds.
    pub started_at: i64,
    /// Its place among its round's trials at its point (0: it ran first);
    /// absent in runs stored before orders were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_position: Option<u32>,
    /// Its place in the run's start order (0: the run's first trial);
    /// absent as `round_position` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_seq: Option<u32>,
    /// Null for a failed trial.
    pub throughput: Option<f64>,
    pub measurement: Option<&'a Measurement>,
    /// The probe's summary of the server and the machine; see
    /// docs/probe-metrics.md.
    #[schemars(schema_with = "nullable_object_schema")]
    pub probe: Option<&'a ProbeSummary>,
    /// Why the stored probe summary could not be read (then `probe` is
    /// null); null when it was read or none was stored.
    pub probe_unreadable: Option<&'a str>,
    pub cpu_shares: Option<CpuSplit>,
    pub client_bound: bool,
    pub client_bound_reason: Option<String>,
    /// What limited the trial, with the figures behind the verdict; null for a failed trial
    /// and in runs stored before limiters (see docs/limiter.md).
    pub limiter: Option<&'a crate::record::probe::limiter::Limiter>,
    /// Requests completed in each bucket of the measured window
    /// (`timeline_bucket_ms` wide; whole seconds in stores before schema 11).
    pub timeline: &'a [u64],
    /// The width of a timeline bucket, in milliseconds.
    pub timeline_bucket_ms: u32,
    /// The run ended inside the last bucket, which covers less time; null
    /// when not known (stores before schema 11).
    pub timeline_last_partial: Option<bool>,
    /// The window's class (docs/trusting-the-numbers.md, "Steady windows"):
    /// steady, warming, drifting, stepped or too_short; null for a failed
    /// trial and before schema 11.
    pub steadiness: Option<crate::analysis::steady::Steadiness>,
    /// What decided the class (the levels or the trend found).
    pub steadiness_detail: Option<&'a str>,
    /// The warm-up the trial ran, in seconds (an automatic one's chosen
    /// length); null before schema 11.
    pub warmup_s: Option<f64>,
    /// What the trial ran with: placement, load, server settings and version.
    #[schemars(schema_with = "object_schema")]
    pub context: &'a TrialContext,
}

impl<'a> From<&'a Trial> for TrialDoc<'a> {
    fn from(t: &'a Trial) -> Self {
        let bound = t.context.client_bound_why();
        TrialDoc {
            id: t.id,
            system: &t.system,
            point_index: t.point.index,
            coords: coords(&t.point),
            trial: t.trial,
            status: t.status,
            error: t.error.as_deref(),
            failure_cause: t.failure_cause,
            started_at: t.started_at,
            round_position: t.place.map(|p| p.round_position),
            start_seq: t.place.map(|p| p.start_seq),
            throughput: t.throughput(),
            measurement: t.measurement.as_ref(),
            probe: t.probe.as_ref(),
            probe_unreadable: t.probe_unreadable.as_deref(),
            cpu_shares: t.probe.as_ref().map(|p| p.cpu),
            client_bound: bound.is_some(),
            client_bound_reason: bound,
            limiter: t.context.limiter.as_ref(),
            timeline: &t.timeline,
            timeline_bucket_ms: t.window.bucket_ms,
            timeline_last_partial: t.window.last_partial,
            steadiness: t.window.steadiness,
            steadiness_detail: t.window.steadiness_detail.as_deref(),
            warmup_s: t.window.warmup_s,
            context: &t.context,
        }
    }
}

/// One (sweep point, system): its trials' statistics and its comparison
/// with the baseline.
#[derive(Serialize, JsonSchema)]
pub(crate) struct PointDoc<'a> {
    pub system: &'a str,
    pub point_index: u32,
    /// The point's value on each sweep axis, by axis name.
    #[schemars(schema_with = "object_schema")]
    pub coords: Value,
    pub x: Option<f64>,
    pub group: usize,
    pub trials: usize,
    pub ok: usize,
    pub throughput: &'a [f64],
    /// Over the trials the verdict used: the client-bound ones are left
    /// out while others remain (`left_out`), so every view shows the
    /// number its percentage was drawn from.
    pub summary: Option<&'a Summary>,
    /// Client-bound trials left out of `summary` and of the verdict; 0
    /// when every trial was client-bound (the summary is then of them
    /// all, and the point is `not_comparable`).
    pub left_out: usize,
    pub failed: &'a [TrialNote],
    pub client_bound: &'a [TrialNote],
    pub latency_us: Latency,
    pub gbit_s: Option<f64>,
    pub requests: u64,
    pub errors: ErrorCounts,
    pub errors_total: u64,
    /// Medians across successful trials of the probe's figures.
    #[schemars(schema_with = "object_schema")]
    pub server: &'a crate::judging::rows::ServerFigures,
    pub comparison: Option<&'a Comparison>,
    /// Set when errors exceed 0.1% of attempts, the load kind's own rule
    /// says so, or every trial was client-bound: the point is in no
    /// verdict or ranking.
    pub not_comparable: Option<String>,
    pub verdict_text: Option<String>,
    pub ratio_ci_text: Option<String>,
    /// Watts and operations per joule with their summary and verdict
    /// against the baseline; present only when the run measured energy
    /// (see docs/energy.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<&'a crate::judging::energy_cell::CellEnergy>,
    /// What limited the point: the verdict most of its successful trials give, with the
    /// figures of the median-throughput one (see docs/limiter.md); null when none was judged.
    pub limiter: Option<&'a crate::judging::limiter::PointLimiter>,
}

impl<'a> From<&'a Cell> for PointDoc<'a> {
    fn from(c: &'a Cell) -> Self {
        PointDoc {
            system: &c.system,
            point_index: c.point.index,
            coords: coords(&c.point),
            x: c.x,
            group: c.group,
            trials: c.trials(),
            ok: c.throughput.len(),
            throughput: &c.throughput,
            summary: c.summary.as_ref(),
            left_out: crate::judging::judge::left_out(c),
            failed: &c.failed,
            client_bound: &c.client_bound,
            latency_us: c.latency,
            gbit_s: c.gbit_s,
            requests: c.requests,
            errors: c.errors,
            errors_total: c.errors.total(),
            server: &c.server,
            comparison: c.comparison.as_ref(),
            not_comparable: crate::judging::judge::excluded(c),
            verdict_text: c.comparison.as_ref().map(|cmp| verdict::short(cmp).0),
            ratio_ci_text: c.comparison.as_ref().and_then(verdict::ci),
            energy: c.energy.as_ref(),
            limiter: c.limiter.as_ref(),
        }
    }
}

/// One (system, group) curve: its points, the USL fit and its shape.
#[derive(Serialize, JsonSchema)]
pub(crate) struct FitDoc<'a> {
    pub system: &'a str,
    pub group: usize,
    pub group_label: Option<&'a str>,
    pub axis: Option<&'a str>,
    /// [x, headline throughput], sorted by x.
    pub points: &'a [(f64, f64)],
    /// Null when the axis does not count concurrency, the curve is too
    /// short, or the fit failed.
    pub usl: Option<&'a UslFit>,
    /// Why the fit failed.
    pub usl_error: Option<&'a str>,
    /// The axis suits the USL but the curve has fewer than 6 levels: no fit
    /// was attempted.
    pub usl_too_short: bool,
    pub shape: Option<&'a CurveShape>,
    /// What the shape and the fit rest on when it is not the server: the load generator
    /// or background load (see docs/limiter.md).
    pub caveat: &'a crate::judging::caveat::CurveCaveat,
}

impl<'a> FitDoc<'a> {
    fn of(agg: &'a Aggregate, f: &'a SeriesFit) -> Self {
        let (usl, usl_error) = match &f.usl {
            Some(Ok(u)) => (Some(u), None),
            Some(Err(e)) => (None, Some(e.as_str())),
            None => (None, None),
        };
        FitDoc {
            system: &f.system,
            group: f.group,
            group_label: agg.layout.groups.get(f.group).map(|g| g.label.as_str()),
            axis: agg.layout.x_axis.as_deref(),
            points: &f.points,
            usl,
            usl_error,
            usl_too_short: f.usl_too_short,
            shape: f.shape.as_ref(),
            caveat: &f.caveat,
        }
    }
}

/// The systems ranked against the baseline.
#[derive(Serialize, JsonSchema)]
pub(crate) struct RankingDoc<'a> {
    pub method: &'static str,
    pub text: String,
    pub order: &'a [Rank],
    pub standing: Option<Standing>,
}

/// The JSON Schema of `Export`, as `docs/export-schema.json` holds it.
/// Every number may be null (NaN and infinity serialize as null).
pub fn schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut root = generator.into_root_schema_for::<Export>().to_value();
    if let Value::Object(o) = &mut root {
        o.insert(
            "$id".into(),
            "https://scalelab.invalid/export-schema/scalelab-report-1.json".into(),
        );
    }
    as_written(&mut root);
    optional(&mut root, "PointDoc", "energy");
    optional(&mut root, "LatencySummary", "p75");
    // The seeded order (schema 12), absent from runs stored before it.
    optional(&mut root, "", "order_effect");
    optional(&mut root, "RunDoc", "seed");
    optional(&mut root, "RunDoc", "order");
    optional(&mut root, "TrialDoc", "round_position");
    optional(&mut root, "TrialDoc", "start_seq");
    // Issue 37's figures, absent from contexts stored before them.
    for field in [
        "lock_woken_share",
        "schema_pool_waiting",
        "schema_synch_waiting",
        "schema_lock_waiting",
        "row_lock_waiting",
        "worker_requests",
    ] {
        optional(&mut root, "LimiterNumbers", field);
    }
    root
}

/// Takes `field` out of `def`'s required list: a field written only when
/// it has a value (a point's `energy`, so that a run without an energy
/// source exports exactly what it did before there were any; a trial's
/// latency `p75`, which stores older than schema 9 lack; the limiter's
/// figures that contexts stored before issue 37 lack).
/// An empty `def` is the document itself.
fn optional(root: &mut Value, def: &str, field: &str) {
    let at = match def {
        "" => "/required".to_string(),
        _ => format!("/$defs/{def}/required"),
    };
    if let Some(Value::Array(required)) = root.pointer_mut(&at) {
        required.retain(|f| f != field);
    }
}

/// Lets every `number` be null, turns "this or null" `anyOf`s into
/// `oneOf`s (the branches exclude each other), and requires every property:
/// the export writes each field, `null` when it has no value.
fn as_written(v: &mut Value) {
    match v {
        Value::Object(o) => {
            match o.get_mut("type") {
                Some(t @ Value::String(_)) if t == "number" => {
                    *t = serde_json::json!(["number", "null"])
                }
                Some(Value::Array(a))
                    if a.contains(&"number".into()) && !a.contains(&"null".into()) =>
                {
                    a.push("null".into())
                }
                _ => {}
            }
            let or_null = |a: &Value| {
                a.as_array().is_some_and(|a| {
                    a.len() == 2 && a.contains(&serde_json::json!({"type": "null"}))
                })
            };
            if o.get("anyOf").is_some_and(or_null) {
                let branches = o.remove("anyOf").unwrap_or_default();
                o.insert("oneOf".into(), branches);
            }
            if let Some(Value::Object(props)) = o.get("properties") {
                let all: Vec<Value> = props.keys().map(|k| k.as_str().into()).collect();
                o.insert("required".into(), Value::Array(all));
            }
            o.values_mut().for_each(as_written);
        }
        Value::Array(a) => a.iter_mut().for_each(as_written),
        _ => {}
    }
}

fn version_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"const": SCHEMA, "description": "The schema version of this document."})
}

fn unit_schema(_: &mut SchemaGenerator) -> Schema {
    let units: Vec<&str> = RateUnit::ALL.iter().map(|u| u.as_str()).collect();
    json_schema!({"type": "string", "enum": units})
}

fn object_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object"})
}

fn nullable_object_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["object", "null"]})
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::aggregate;

    #[test]
    fn documents_trials_points_and_fits() {
        let (data, agg) = aggregate(&["linux", "freebsd"]);
        let v = export_aggregate(&agg, &data);
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["trials"].as_array().unwrap().len(), data.trials.len());
        assert_eq!(v["points"].as_array().unwrap().len(), 10);
        assert_eq!(v["fits"].as_array().unwrap().len(), 2);
        let p = &v["points"][1];
        assert_eq!(p["system"], "freebsd");
        assert_eq!(p["coords"]["connections"], 1);
        assert!(p["summary"]["median"].is_number());
        assert!(p["verdict_text"].is_string());
        assert_eq!(v["layout"]["x_axis"], "connections");
        assert_eq!(v["layout"]["x_scale"], "log2");
        let failed = v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["status"] == "failed")
            .unwrap();
        assert!(failed["measurement"].is_null() && failed["error"].is_string());
    }

    #[test]
    fn a_trials_failure_cause_is_exported() {
        let mut data = crate::judging::test_support::run_data(&["a"]);
        data.trials[0].failure_cause = Some(crate::store::FailureCause::LostHost);
        data.trials[1].failure_cause = None;
        let export = export(&data);
        assert_eq!(export["trials"][0]["failure_cause"], "lost_host");
        assert!(export["trials"][1]["failure_cause"].is_null());
    }
}
