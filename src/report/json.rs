//! The JSON export: the run, every trial, the per-point aggregates with
//! their comparisons and verdicts, the fits and the ranking, in one
//! document. Field names are listed in `docs/report.md`.

use super::analyse::aggregate;
use super::fits::ranking_line;
use super::rows::{Aggregate, Cell, SeriesFit};
use super::svg::scale;
use super::verdict;
use crate::model::Point;
use crate::store::{Run, RunData, Trial};
use serde_json::{json, Map, Value};

/// The document's `schema` value; bumped when a field changes meaning.
pub const SCHEMA: &str = "scalelab-report/1";

/// The run as one JSON document (see the module doc); its `schema` field
/// is [`SCHEMA`].
pub fn export(data: &RunData) -> Value {
    export_aggregate(&aggregate(data), data)
}

/// As [`export`], from an aggregate already computed from `data`.
pub(crate) fn export_aggregate(agg: &Aggregate, data: &RunData) -> Value {
    json!({
        "schema": SCHEMA,
        "run": run(&data.run),
        "unit": agg.unit,
        "headline": agg.headline,
        "baseline": agg.baseline,
        "systems": agg.systems,
        "layout": layout(agg),
        "trials": data.trials.iter().map(trial).collect::<Vec<_>>(),
        "points": agg.cells.iter().map(cell).collect::<Vec<_>>(),
        "fits": agg.fits.iter().map(|f| fit(agg, f)).collect::<Vec<_>>(),
        "fit_note": super::fits::too_short_sentence(agg),
        "ranking": {
            "method": "geometric mean over shared points of headline / baseline headline",
            "text": ranking_line(&agg.ranking, agg.noise),
            "order": agg.ranking,
            "standing": super::fits::standing(agg),
        },
        "notes": agg.notes,
        "quick": data.run.quick,
    })
}

fn run(r: &Run) -> Value {
    json!({
        "id": r.id,
        "name": r.name,
        "description": r.description,
        "started_at": r.started_at,
        "finished_at": r.finished_at,
        "status": r.status,
        "experiment_path": r.experiment_path,
        "experiment": r.experiment,
        "environment": r.environment,
        "scalelab_version": r.scalelab_version,
        "server_version": r.server_version,
        "baseline": r.baseline,
        "headline": r.headline,
    })
}

fn layout(agg: &Aggregate) -> Value {
    let xs: Vec<f64> = agg.cells.iter().filter_map(|c| c.x).collect();
    let groups: Vec<Value> = agg
        .layout
        .groups
        .iter()
        .map(|g| json!({"label": g.label, "points": g.points}))
        .collect();
    json!({
        "x_axis": agg.layout.x_axis,
        "x_scale": agg.layout.x_axis.as_ref().map(|_| scale::choose_kind(&xs)),
        "group_axes": agg.layout.group_axes,
        "groups": groups,
    })
}

/// `{"connections": 100, "load.script": "select-only"}`
pub fn coords(p: &Point) -> Value {
    let map: Map<String, Value> = p.coords.iter().map(|c| (c.axis(), c.json())).collect();
    Value::Object(map)
}

fn trial(t: &Trial) -> Value {
    let bound = t.context.client_bound_why();
    json!({
        "id": t.id,
        "system": t.system,
        "point_index": t.point.index,
        "coords": coords(&t.point),
        "trial": t.trial,
        "status": t.status,
        "error": t.error,
        "started_at": t.started_at,
        "throughput": t.throughput(),
        "measurement": t.measurement,
        "probe": t.probe,
        "cpu_shares": t.probe.as_ref().map(|p| p.cpu),
        "client_bound": bound.is_some(),
        "client_bound_reason": bound,
        "timeline": t.timeline,
        "context": t.context,
    })
}

fn cell(c: &Cell) -> Value {
    let short = c.comparison.as_ref().map(|cmp| verdict::short(cmp).0);
    json!({
        "system": c.system,
        "point_index": c.point.index,
        "coords": coords(&c.point),
        "x": c.x,
        "group": c.group,
        "trials": c.trials(),
        "ok": c.throughput.len(),
        "throughput": c.throughput,
        "summary": c.summary,
        "failed": c.failed,
        "client_bound": c.client_bound,
        "latency_us": c.latency,
        "gbit_s": c.gbit_s,
        "requests": c.requests,
        "errors": c.errors,
        "errors_total": c.errors.total(),
        "server": c.server,
        "comparison": c.comparison,
        "not_comparable": c.not_comparable,
        "verdict_text": short,
        "ratio_ci_text": c.comparison.as_ref().and_then(verdict::ci),
    })
}

fn fit(agg: &Aggregate, f: &SeriesFit) -> Value {
    let (usl, usl_error) = match &f.usl {
        Some(Ok(u)) => (json!(u), Value::Null),
        Some(Err(e)) => (Value::Null, json!(e)),
        None => (Value::Null, Value::Null),
    };
    json!({
        "system": f.system,
        "group": f.group,
        "group_label": agg.layout.groups.get(f.group).map(|g| g.label.clone()),
        "axis": agg.layout.x_axis,
        "points": f.points,
        "usl": usl,
        "usl_error": usl_error,
        "usl_too_short": f.usl_too_short,
        "shape": f.shape,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_support::aggregate;

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
}
