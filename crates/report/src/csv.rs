//! The CSV export, tidy: one row per trial, one column per variable, the
//! unit in every column name that has one (`throughput_requests_per_s`,
//! `p99_ms`, `server_cpu_s`); the columns are listed in `docs/report.md`.
//! RFC 4180 quoting and CRLF line ends. Failed trials have empty
//! measurement columns; absent probe fields are empty. A text cell that a
//! spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a
//! tab or a carriage return) gets a leading `'`, as OWASP's "CSV Injection"
//! advises; numbers stay numbers.
//!
//! Each column has one type ([`ColumnType`]) whatever a run's values, and
//! [`schema`] gives them as a Frictionless Table Schema
//! (`export --format csv-schema`), so a column a run leaves empty still
//! loads with its type.

use crate::judging::probe_view;
use crate::model::Coord;
use crate::record::errors::ErrorKind;
use crate::record::probe::CpuSplit;
use crate::store::{Measurement, RunData, Trial, TrialStatus};
use crate::units::{Micros, RateUnit};

type Getter = fn(&Measurement) -> String;
pub use super::csv_schema::{ColumnType, Field, TableSchema};
use ColumnType::{Boolean, Integer, Number, Text};
/// A column's reader that may capture what it reads (an error kind).
type Reader = Box<dyn Fn(&Measurement) -> String>;

/// Latency columns, in milliseconds (the store keeps microseconds).
const LATENCY: &[(&str, Getter)] = &[
    ("p50_ms", |m| ms(m.latency_us.p50)),
    ("p90_ms", |m| ms(m.latency_us.p90)),
    ("p99_ms", |m| ms(m.latency_us.p99)),
    ("p999_ms", |m| ms(m.latency_us.p999)),
    ("latency_max_ms", |m| ms(m.latency_us.max)),
    ("latency_mean_ms", |m| num(m.latency_us.mean / 1000.0)),
    ("latency_stdev_ms", |m| num(m.latency_us.stdev / 1000.0)),
];

/// Load generator facts after the error counts.
const LOAD_FACTS: &[(&str, ColumnType, Getter)] = &[
    ("retries", Integer, |m| m.retries.to_string()),
    ("client_cpu_s", Number, |m| num(m.client_cpu_s.0)),
    ("connections_opened", Integer, |m| {
        m.connections_opened.to_string()
    }),
    ("notes", Text, |m| m.notes.join("; ")),
];

/// The probe's numbers that are counts (integers in the summary); the
/// others are floats. A test checks this against the stored summary.
const PROBE_COUNTS: &[&str] = &[
    "online_cpus",
    "mem_per_worker_rss_bytes",
    "mem_per_worker_vsz_bytes",
    "server_rss_max_bytes",
    "processes",
    "threads",
    "processes_seen",
    "ctx_voluntary",
    "ctx_involuntary",
    "net_rx_bytes",
    "net_tx_bytes",
    "work.syscalls",
    "work.io_calls.reads",
    "work.io_calls.writes",
    "work.context_switches",
    "work.cpu_migrations",
    "work.minor_faults",
    "work.major_faults",
    "work.hardware.cycles",
    "work.hardware.instructions",
    "work.hardware.llc_misses",
    "work.hardware.branch_misses",
];

/// A column: its name, its type, and how a trial's measurement fills it.
type Column = (String, ColumnType, Reader);

/// Every measurement column with its reader: throughput and volume (named
/// with the run's throughput `unit`), latency, one `errors_<kind>` column
/// per [`ErrorKind::ALL`], `errors_total`, the load generator's facts.
fn measurement_columns(unit: RateUnit) -> Vec<Column> {
    let boxed = |name: String, ty: ColumnType, get: Getter| -> Column { (name, ty, Box::new(get)) };
    let volume = [
        boxed(format!("throughput_{}", unit.column()), Number, |m| {
            num(m.rps.0)
        }),
        boxed("requests".into(), Integer, |m| m.requests.to_string()),
        boxed("duration_s".into(), Number, |m| num(m.duration_s.0)),
        boxed("bytes".into(), Integer, |m| m.bytes.to_string()),
        boxed("gbit_per_s".into(), Number, |m| num(m.gbit_s)),
    ];
    let latency = LATENCY
        .iter()
        .map(|(n, get)| boxed(n.to_string(), Number, *get));
    let errors = ErrorKind::ALL.into_iter().map(|k| {
        let reader: Reader = Box::new(move |m| m.errors.get(k).to_string());
        (format!("errors_{}", k.name()), Integer, reader)
    });
    let total = boxed("errors_total".into(), Integer, |m| {
        m.errors.total().to_string()
    });
    let target = boxed(format!("target_rate_{}", unit.column()), Number, |m| {
        m.target_rate.map(|r| num(r.0)).unwrap_or_default()
    });
    let facts = LOAD_FACTS
        .iter()
        .map(|(n, ty, get)| boxed(n.to_string(), *ty, *get));
    volume
        .into_iter()
        .chain(latency)
        .chain(errors)
        .chain([total, target])
        .chain(facts)
        .collect()
}

const FIRST: &[(&str, ColumnType)] = &[
    ("run_id", Integer),
    ("system", Text),
    ("point_index", Integer),
];
const TRIAL: &[(&str, ColumnType)] = &[
    ("trial", Integer),
    ("status", Text),
    ("error", Text),
    ("started_at_unix_s", Integer),
    ("round_position", Integer),
    ("start_seq", Integer),
    ("seed", Integer),
];
const TAIL: &[(&str, ColumnType)] = &[
    ("steadiness", Text),
    ("warmup_s", Number),
    ("client_bound", Boolean),
    ("client_bound_reason", Text),
];

/// The probe number `name`'s column type.
fn probe_type(name: &str) -> ColumnType {
    if PROBE_COUNTS.contains(&name) {
        Integer
    } else {
        Number
    }
}

/// One row per trial (every trial, failed ones included with their error),
/// columns: the run, system and point, one column per sweep axis, the
/// trial's status, the measurement in the run's throughput unit, and the
/// client-bound flag. The column names are listed in `docs/report.md`.
pub fn export(data: &RunData) -> String {
    let unit = crate::judging::rows::throughput_unit(data, &mut Vec::new());
    let axes = axes(data);
    let columns = measurement_columns(unit);
    let energy = crate::energy::csv_columns(data);
    let header: Vec<String> = typed_header(data).into_iter().map(|(n, _)| n).collect();
    let mut out = String::new();
    push_row(&mut out, &header);
    for t in &data.trials {
        let mut r = row(t, &axes, &columns, data.run.order.as_ref().map(|o| o.seed));
        r.extend(energy.iter().map(|(_, _, read)| read(t, num)));
        push_row(&mut out, &r);
    }
    out
}

/// Every column's name and type, in order: [`header`], then the energy
/// columns, last and only when some trial measured energy.
fn typed_header(data: &RunData) -> Vec<(String, ColumnType)> {
    let unit = crate::judging::rows::throughput_unit(data, &mut Vec::new());
    let axes = axes(data);
    let types = axes.iter().map(|a| axis_type(data, a));
    let mut h: Vec<(String, ColumnType)> = header(&axes, unit)
        .into_iter()
        .zip(
            FIRST.iter().map(|(_, t)| *t).chain(types).chain(
                fixed_columns(unit)
                    .into_iter()
                    .skip(FIRST.len())
                    .map(|(_, t)| t),
            ),
        )
        .collect();
    let energy = crate::energy::csv_columns(data);
    h.extend(energy.iter().map(|(name, ty, _)| (name.to_string(), *ty)));
    h
}

/// An axis's type over every trial: integers, numbers (any float),
/// booleans, or text (anything else, or a mix).
fn axis_type(data: &RunData, axis: &str) -> ColumnType {
    let values = data.trials.iter().filter_map(|t| t.point.coord(axis));
    values
        .fold(None, |ty, c| {
            let this = match &c.value {
                toml::Value::Integer(_) => Integer,
                toml::Value::Float(_) => Number,
                toml::Value::Boolean(_) => Boolean,
                _ => Text,
            };
            Some(match (ty, this) {
                (None, t) => t,
                (Some(a), b) if a == b => a,
                (Some(Integer | Number), Integer | Number) => Number,
                _ => Text,
            })
        })
        .unwrap_or(Text)
}

/// The schema of [`export`]`(data)`: the same columns in the same order.
pub fn schema(data: &RunData) -> TableSchema {
    TableSchema {
        fields: typed_header(data)
            .into_iter()
            .map(|(name, ty)| Field { name, ty })
            .collect(),
        missing_values: vec![String::new()],
    }
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

/// Probe columns: the probe's own name (see `docs/probe-metrics.md`), with
/// the unit added where the name has none, and `client_cpu_s`, which the
/// measurement already has, as `probe_client_cpu_s`.
fn probe_column(key: &str) -> String {
    let renamed = match key {
        "client_cpu_s" => "probe_client_cpu_s",
        "server_cpu_util" => "server_cpu_util_cpus",
        "sampler_cpu_util" => "sampler_cpu_util_cpus",
        "cpu_busy" => "cpu_busy_fraction",
        "load_x_freq" => "load_x_freq_mhz",
        // Counts, and names that end in their unit already.
        other => other,
    };
    renamed.into()
}

fn header(axes: &[String], unit: RateUnit) -> Vec<String> {
    let fixed: Vec<String> = fixed_columns(unit).into_iter().map(|(n, _)| n).collect();
    let mut h: Vec<String> = FIRST.iter().map(|(s, _)| s.to_string()).collect();
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

fn fixed_columns(unit: RateUnit) -> Vec<(String, ColumnType)> {
    let named = |cols: &[(&str, ColumnType)]| -> Vec<(String, ColumnType)> {
        cols.iter().map(|(n, t)| (n.to_string(), *t)).collect()
    };
    let mut v = named(FIRST);
    v.extend(named(TRIAL));
    v.extend(
        measurement_columns(unit)
            .into_iter()
            .map(|(n, t, _)| (n, t)),
    );
    v.extend(
        probe_view::PROBE_NUMBERS
            .iter()
            .map(|(k, _)| (probe_column(k), probe_type(k))),
    );
    v.extend(
        probe_view::PROBE_TEXTS
            .iter()
            .map(|(k, _)| (k.to_string(), Text)),
    );
    v.extend(
        CpuSplit::SHARES
            .iter()
            .map(|n| (format!("cpu_{n}_fraction"), Number)),
    );
    v.extend(named(TAIL));
    v
}

/// One trial's cells; `seed` is its run's (the same on every row, as
/// `run_id` is).
fn row(t: &Trial, axes: &[String], columns: &[Column], seed: Option<u64>) -> Vec<String> {
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
        t.place
            .map(|p| p.round_position.to_string())
            .unwrap_or_default(),
        t.place.map(|p| p.start_seq.to_string()).unwrap_or_default(),
        seed.map(|s| s.to_string()).unwrap_or_default(),
    ]);
    for (_, _, get) in columns {
        r.push(t.measurement.as_ref().map(get).unwrap_or_default());
    }
    let probe = t.probe.as_ref();
    for (name, read) in probe_view::PROBE_NUMBERS {
        // The readers give f64; a count is written as the integer it is
        // (exact below 2^53).
        let cell = probe_view::number(probe, *read).map(|v| match probe_type(name) {
            Integer => format!("{}", v as i64),
            _ => num(v),
        });
        r.push(cell.unwrap_or_default());
    }
    for (_, read) in probe_view::PROBE_TEXTS {
        r.push(probe.map(read).unwrap_or_default());
    }
    let shares = probe.map(|p| p.cpu.shares());
    for i in 0..CpuSplit::SHARES.len() {
        r.push(shares.map(|s| num(s[i])).unwrap_or_default());
    }
    r.push(t.window.steadiness.map_or("", |s| s.as_str()).to_string());
    r.push(t.window.warmup_s.map(num).unwrap_or_default());
    let bound = t.context.client_bound_why();
    r.push(bound.is_some().to_string());
    r.push(bound.unwrap_or_default());
    r
}

/// Microseconds as milliseconds.
fn ms(v: Micros) -> String {
    num(v.0 as f64 / 1000.0)
}

/// Shortest round-trip form of a float, always with a decimal point (`1.0`,
/// not `1`), so a float column reads as floats in every run whatever its
/// values; empty for non-finite values.
pub(super) fn num(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let text = v.to_string();
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

/// Appends one record, quoting fields per RFC 4180 section 2, each text
/// cell neutralised ([`neutralise`]).
fn push_row(out: &mut String, fields: &[String]) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&quote(&neutralise(f)));
    }
    out.push_str("\r\n");
}

/// A text cell that starts like a formula (`=`, `+`, `-`, `@`, tab, CR)
/// with a `'` before it, so a spreadsheet shows it as text (OWASP, "CSV
/// Injection"); a finite number (`-5.0`, `1e-3`) is left as it is.
pub fn neutralise(cell: &str) -> std::borrow::Cow<'_, str> {
    let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let number = cell.parse::<f64>().is_ok_and(f64::is_finite);
    if formula && !number {
        format!("'{cell}").into()
    } else {
        cell.into()
    }
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
    use crate::units::PerSecond;

    #[test]
    fn rfc4180_quoting() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn formula_like_text_is_neutralised_and_numbers_stay_numbers() {
        // Issue 36: a label starting with `=` was written raw.
        for (cell, out) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("-5.0", "-5.0"),
            ("+3", "+3"),
            ("1e-3", "1e-3"),
            ("-inf", "'-inf"),
            ("nginx", "nginx"),
            ("", ""),
        ] {
            assert_eq!(neutralise(cell), out, "{cell:?}");
        }
        let mut data = crate::judging::test_support::run_data(&["=1+1"]);
        data.trials[0].error = Some("@evil".into());
        let text = export(&data);
        assert!(text.contains(",'=1+1,"), "{text}");
        assert!(text.contains(",'@evil,"), "{text}");
        assert!(!text.contains(",=1+1,"), "{text}");
    }

    #[test]
    fn header_names_are_unique_even_for_clashing_axes() {
        let h = header(
            &["connections".into(), "requests".into()],
            RateUnit::Transactions,
        );
        assert_eq!(
            &h[..5],
            &[
                "run_id",
                "system",
                "point_index",
                "connections",
                "point_requests"
            ]
        );
        let mut sorted = h.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), h.len());
        for unit in [
            "probe_client_cpu_s",
            "throughput_transactions_per_s",
            "target_rate_transactions_per_s",
            "p99_ms",
            "cpu_user_fraction",
        ] {
            assert!(h.contains(&unit.to_string()), "{unit}");
        }
        assert_eq!(h.last().map(String::as_str), Some("client_bound_reason"));
    }

    /// How a reader such as pandas types a cell: integer, float or text.
    fn inferred(cell: &str) -> &'static str {
        if cell.parse::<i64>().is_ok() {
            "int"
        } else if cell.parse::<f64>().is_ok() {
            "float"
        } else {
            "text"
        }
    }

    /// Sets every number in a serialized value: floats to `float`,
    /// integers to `int` (so the test reaches every field by its type).
    fn set_numbers(v: &mut serde_json::Value, float: f64, int: u64) {
        match v {
            serde_json::Value::Number(n) if n.is_f64() => *v = float.into(),
            serde_json::Value::Number(_) => *v = int.into(),
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|x| set_numbers(x, float, int))
            }
            serde_json::Value::Object(map) => {
                map.values_mut().for_each(|x| set_numbers(x, float, int))
            }
            serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::String(_) => {
            }
        }
    }

    fn with_numbers<T: serde::Serialize + serde::de::DeserializeOwned>(
        x: &T,
        float: f64,
        int: u64,
    ) -> T {
        let mut v = serde_json::to_value(x).unwrap();
        set_numbers(&mut v, float, int);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn every_column_keeps_one_type_whatever_the_values() {
        let mut data = crate::judging::test_support::run_data(&["a"]);
        data.trials.truncate(2);
        for t in &mut data.trials {
            let m = t.measurement.as_mut().unwrap();
            m.target_rate = Some(PerSecond(1.0));
            let p = t.probe.as_mut().unwrap();
            (p.freq_mhz_mean, p.load_x_freq) = (Some(1.0), Some(1.0));
            (p.processes, p.threads, p.processes_seen) = (Some(1), Some(1), Some(1));
            (p.server_rss_max_bytes, p.mem_per_worker_vsz_bytes) = (Some(1), Some(1));
        }
        // One trial whose every float is a whole number, one whose floats
        // have fractions; integers differ by a non-multiple of 1000 (the
        // store's microseconds become milliseconds).
        for (t, (float, int)) in data.trials.iter_mut().zip([(2.0, 1000), (2.5, 1500)]) {
            let m = t.measurement.as_ref().unwrap();
            t.measurement = Some(with_numbers(m, float, int));
            let p = t.probe.as_ref().unwrap();
            t.probe = Some(with_numbers(p, float, int));
        }
        let csv = export(&data);
        let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 3, "{csv}");
        let (whole, fraction) = (&rows[1], &rows[2]);
        let (mut floats, mut ints) = (0, Vec::new());
        for (i, name) in rows[0].iter().enumerate() {
            if whole[i].is_empty() || fraction[i].is_empty() {
                assert_eq!(whole[i].is_empty(), fraction[i].is_empty(), "{name}");
                continue;
            }
            let (a, b) = (inferred(whole[i]), inferred(fraction[i]));
            assert_eq!(a, b, "{name}: `{}` against `{}`", whole[i], fraction[i]);
            floats += usize::from(a == "float");
            if a == "int" {
                ints.push(*name);
            }
        }
        assert!(floats > 20, "{floats} float columns\n{csv}");
        // Counts stay integers, the probe's too (their readers give f64).
        for count in ["requests", "errors_timeout", "net_rx_bytes", "processes"] {
            assert!(ints.contains(&count), "{count}: {ints:?}");
        }
        // The schema names each filled column's type as a reader infers it.
        let table = schema(&data);
        let names: Vec<&str> = table.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, rows[0]);
        for (i, f) in table.fields.iter().enumerate() {
            let cell = fraction[i];
            let want = match inferred(cell) {
                _ if cell.is_empty() => continue,
                "int" => Integer,
                "float" => Number,
                _ if cell == "true" || cell == "false" => Boolean,
                _ => Text,
            };
            assert_eq!(f.ty, want, "{}: `{cell}`", f.name);
        }
        // Issue 36: a run that leaves columns empty keeps their types.
        let mut empty = data.clone();
        for t in &mut empty.trials {
            (t.measurement, t.probe, t.status) = (None, None, TrialStatus::Failed);
        }
        let empty_csv = export(&empty);
        assert!(empty_csv.lines().nth(1).unwrap().contains(",,,,"));
        assert_eq!(schema(&empty), table);
    }

    #[test]
    fn the_probe_counts_are_the_summarys_integers() {
        let p = crate::judging::test_support::run_data(&["a"]).trials[0]
            .probe
            .clone()
            .unwrap();
        // Every optional figure filled, so each field shows its JSON type.
        let full = crate::record::probe::ProbeSummary {
            server_cpu_s: Some(1.5),
            server_cpu_util: Some(0.5),
            freq_mhz_mean: Some(2000.5),
            load_x_freq: Some(1.5),
            mem_per_worker_rss_bytes: Some(1),
            mem_per_worker_vsz_bytes: Some(1),
            server_rss_max_bytes: Some(1),
            processes: Some(1),
            threads: Some(1),
            processes_seen: Some(1),
            ctx_voluntary: Some(1),
            ctx_involuntary: Some(1),
            work: Some(crate::record::probe::work::WorkCounts {
                syscalls: Some(1),
                io_calls: Some(crate::record::probe::work::IoCalls {
                    reads: 1,
                    writes: 1,
                }),
                context_switches: Some(1),
                cpu_migrations: Some(1),
                minor_faults: Some(1),
                major_faults: Some(1),
                user_s: Some(0.5),
                system_s: Some(0.5),
                hardware: Some(crate::record::probe::work::HardwareCounts {
                    cycles: Some(1),
                    instructions: Some(1),
                    llc_misses: Some(1),
                    branch_misses: Some(1),
                }),
                ..Default::default()
            }),
            ..p
        };
        let stored = serde_json::to_value(&full).unwrap();
        for (name, _) in probe_view::PROBE_NUMBERS {
            let n = name.split('.').fold(&stored, |v, key| &v[key]);
            assert!(n.is_number(), "{name}: {n}");
            assert_eq!(n.is_u64(), probe_type(name) == Integer, "{name}: {n}");
        }
    }
}
