//! The CSV export: one row per trial, flat columns (listed in
//! `docs/report.md`), RFC 4180 quoting and CRLF line ends. Failed trials
//! have empty measurement columns; absent probe fields are empty.

use super::probe_view::{self, CpuShares};
use crate::load::result::ErrorKind;
use crate::model::Coord;
use crate::store::{Measurement, RunData, Trial, TrialStatus};

type Getter = fn(&Measurement) -> String;
/// A column's reader that may capture what it reads (an error kind).
type Reader = Box<dyn Fn(&Measurement) -> String>;

/// Measurement columns before the error counts, and how to read them.
const MEASUREMENT_HEAD: &[(&str, Getter)] = &[
    ("requests", |m| m.requests.to_string()),
    ("duration_s", |m| num(m.duration_s)),
    ("rps", |m| num(m.rps)),
    ("bytes", |m| m.bytes.to_string()),
    ("gbit_s", |m| num(m.gbit_s)),
    ("latency_p50_us", |m| m.latency_us.p50.0.to_string()),
    ("latency_p90_us", |m| m.latency_us.p90.0.to_string()),
    ("latency_p99_us", |m| m.latency_us.p99.0.to_string()),
    ("latency_p999_us", |m| m.latency_us.p999.0.to_string()),
    ("latency_max_us", |m| m.latency_us.max.0.to_string()),
    ("latency_mean_us", |m| num(m.latency_us.mean)),
    ("latency_stdev_us", |m| num(m.latency_us.stdev)),
];

/// Measurement columns after the error counts.
const MEASUREMENT_TAIL: &[(&str, Getter)] = &[
    ("retries", |m| m.retries.to_string()),
    ("client_cpu_s", |m| num(m.client_cpu_s)),
    ("target_rate", |m| {
        m.target_rate.map(num).unwrap_or_default()
    }),
    ("connections_opened", |m| m.connections_opened.to_string()),
    ("notes", |m| m.notes.join("; ")),
];

/// Every measurement column with its reader: the head, one
/// `errors_<kind>` column per [`ErrorKind::ALL`], `errors_total`, the tail.
fn measurement_columns() -> Vec<(String, Reader)> {
    let fixed = |cols: &'static [(&str, Getter)]| {
        cols.iter().map(|(n, get)| {
            let reader: Reader = Box::new(*get);
            (n.to_string(), reader)
        })
    };
    let errors = ErrorKind::ALL.into_iter().map(|k| {
        let reader: Reader = Box::new(move |m| m.errors.get(k).to_string());
        (format!("errors_{}", k.name()), reader)
    });
    let total: Reader = Box::new(|m| m.errors.total().to_string());
    fixed(MEASUREMENT_HEAD)
        .chain(errors)
        .chain(std::iter::once(("errors_total".to_string(), total)))
        .chain(fixed(MEASUREMENT_TAIL))
        .collect()
}

const FIRST: &[&str] = &["run_id", "system", "point_index"];
const TRIAL: &[&str] = &["trial", "status", "error", "started_at"];
const TAIL: &[&str] = &["client_bound", "client_bound_reason"];

pub fn export(data: &RunData) -> String {
    let axes = axes(data);
    let header = header(&axes);
    let mut out = String::new();
    push_row(&mut out, &header);
    for t in &data.trials {
        push_row(&mut out, &row(t, &axes));
    }
    out
}

/// The sweep axes in first-seen order: one column each.
fn axes(data: &RunData) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in data.trials.iter().flat_map(|t| &t.point.coords) {
        let axis = c.axis();
        if !out.contains(&axis) {
            out.push(axis);
        }
    }
    out
}

/// Probe columns: the probe's own name, except `client_cpu_s`, which the
/// measurement already has.
fn probe_column(key: &str) -> String {
    if key == "client_cpu_s" {
        "probe_client_cpu_s".into()
    } else {
        key.into()
    }
}

fn header(axes: &[String]) -> Vec<String> {
    let fixed: Vec<String> = fixed_columns();
    let mut h: Vec<String> = FIRST.iter().map(|s| s.to_string()).collect();
    for a in axes {
        // An axis named like a fixed column is prefixed so names stay unique.
        h.push(if fixed.contains(a) {
            format!("point_{a}")
        } else {
            a.clone()
        });
    }
    h.extend(fixed.into_iter().skip(FIRST.len()));
    h
}

fn fixed_columns() -> Vec<String> {
    let mut v: Vec<String> = FIRST.iter().chain(TRIAL).map(|s| s.to_string()).collect();
    v.extend(measurement_columns().into_iter().map(|(n, _)| n));
    v.extend(probe_view::PROBE_NUMBERS.iter().map(|k| probe_column(k)));
    v.extend(probe_view::PROBE_TEXTS.iter().map(|k| k.to_string()));
    v.extend(CpuShares::NAMES.iter().map(|n| format!("cpu_{n}")));
    v.extend(TAIL.iter().map(|s| s.to_string()));
    v
}

fn row(t: &Trial, axes: &[String]) -> Vec<String> {
    let mut r = vec![
        t.run_id.to_string(),
        t.system.clone(),
        t.point.index.to_string(),
    ];
    for a in axes {
        r.push(t.point.coord(a).map(Coord::display).unwrap_or_default());
    }
    let status = match t.status {
        TrialStatus::Ok => "ok",
        TrialStatus::Failed => "failed",
    };
    r.extend([
        t.trial.to_string(),
        status.into(),
        t.error.clone().unwrap_or_default(),
        t.started_at.to_string(),
    ]);
    for (_, get) in measurement_columns() {
        r.push(t.measurement.as_ref().map(&get).unwrap_or_default());
    }
    let probe = t.probe.as_ref();
    for k in probe_view::PROBE_NUMBERS {
        r.push(probe_view::number(probe, k).map(num).unwrap_or_default());
    }
    for k in probe_view::PROBE_TEXTS {
        r.push(probe_view::text(probe, k).unwrap_or_default());
    }
    let shares = probe_view::cpu_shares(probe);
    for i in 0..CpuShares::NAMES.len() {
        r.push(shares.map(|s| num(s.values()[i])).unwrap_or_default());
    }
    let bound = probe_view::client_bound(&t.context, probe);
    r.push(bound.is_some().to_string());
    r.push(bound.unwrap_or_default());
    r
}

/// Shortest round-trip form of a float; empty for non-finite values.
fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

/// Appends one record, quoting fields per RFC 4180 section 2.
fn push_row(out: &mut String, fields: &[String]) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&quote(f));
    }
    out.push_str("\r\n");
}

/// Quotes a field containing a comma, quote, CR or LF; doubles its quotes.
pub fn quote(field: &str) -> String {
    if field.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4180_quoting() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn header_names_are_unique_even_for_clashing_axes() {
        let h = header(&["connections".into(), "rps".into()]);
        assert_eq!(
            &h[..5],
            &[
                "run_id",
                "system",
                "point_index",
                "connections",
                "point_rps"
            ]
        );
        let mut sorted = h.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), h.len());
        assert!(h.contains(&"probe_client_cpu_s".to_string()));
        assert_eq!(h.last().map(String::as_str), Some("client_bound_reason"));
    }
}
