//! Reports rendered from hand-built runs (two systems, a six-point
//! concurrency sweep, three trials each, one failed and one client-bound
//! trial): HTML, terminal, CSV and JSON, through the library and through
//! `scalelab report` / `scalelab export` on a real store.

use crate::support::{self, stderr, stdout};
use scalelab::judging::format;
use scalelab::load::result::LatencySummary;
use scalelab::model::Point;
use scalelab::probe::{CpuSplit, Environment, Fingerprint, ProbeSummary};
use scalelab::report::{csv, html, json, terminal};
use scalelab::store::{Measurement, Run, RunData, Trial, TrialStatus};
use scalelab::units::{CpuSeconds, Micros, PerSecond, Seconds};
use serde_json::{json, Value};

const LINUX: &str = "linux";
const EVIL: &str = "bsd <script>alert(1)</script>";
/// Six levels: the fewest a USL fit is shown for.
const CONNECTIONS: [u32; 6] = [1, 10, 100, 1000, 2000, 4000];
/// Irregular per-trial factors, so medians, minima and maxima differ.
const WOBBLE: [f64; 7] = [0.97, 1.03, 1.0, 0.985, 1.045, 0.99, 1.02];

fn measurement(rps: f64, p50: u64) -> Measurement {
    Measurement {
        requests: (rps * 5.0) as u64,
        duration_s: Seconds(5.0),
        rps: PerSecond(rps),
        bytes: (rps * 5.0 * 200.0) as u64,
        gbit_s: rps * 200.0 * 8.0 / 1e9,
        latency_us: LatencySummary {
            p50: Micros(p50),
            p75: None,
            p90: Micros(p50 * 2),
            p99: Micros(p50 * 5),
            p999: Micros(p50 * 9),
            max: Micros(p50 * 20),
            mean: p50 as f64 * 1.2,
            stdev: p50 as f64 * 0.5,
        },
        client_cpu_s: CpuSeconds(3.5),
        ..Default::default()
    }
}

fn trial(system: &str, p: &Point, n: u32, rps: f64, id: i64) -> Trial {
    Trial {
        id,
        run_id: 3,
        system: system.into(),
        point: p.clone(),
        trial: n,
        status: TrialStatus::Ok,
        error: None,
        failure_cause: None,
        started_at: 1_700_000_000 + id * 7,
        measurement: Some(measurement(rps, 50 + (rps as u64 % 997))),
        probe_unreadable: None,
        probe: Some(ProbeSummary {
            server_cpu_util: Some(rps / 50_000.0),
            cpu_busy: 0.4,
            cpu: CpuSplit {
                user: 0.25,
                system: 0.1,
                softirq: 0.05,
                ..CpuSplit::default()
            },
            mem_per_worker_rss_bytes: Some(5_000_000),
            freq_source: "cpufreq".into(),
            ..ProbeSummary::default()
        }),
        timeline: vec![],
        window: Default::default(),
        context: Default::default(),
        place: None,
    }
}

fn run(name: &str, baseline: &str, headline: &str) -> Run {
    Run {
        id: 3,
        name: name.into(),
        description: "nginx on two kernels".into(),
        started_at: 1_700_000_000,
        finished_at: Some(1_700_000_900),
        status: scalelab::store::RunStatus::Finished,
        experiment: "name = \"sweep\"\n[load]\nconnections = [1, 10, 100, 1000, 2000, 4000]\n"
            .into(),
        experiment_path: "recipes/sweep.toml".into(),
        environment: Some(Environment::local(Fingerprint {
            kernel_release: "6.1.0-18-amd64".into(),
            cpu_model: "EPYC".into(),
            online_cpus: 2,
            ..Fingerprint::default()
        })),
        scalelab_version: "0.1.0".into(),
        server_version: Some("nginx/1.22.1".into()),
        baseline: Some(baseline.into()),
        headline: headline.into(),
        load_kind: "http".into(),
        server_kind: "nginx".into(),
        rate_unit: Some(scalelab::units::RateUnit::Requests),
        parallelism: scalelab::catalog()
            .parallelism_of("nginx")
            .map(|p| p.iter().map(|s| s.to_string()).collect()),
        noise: 0.02,
        quick: false,
        label: "Linux 6.1.0".into(),
        revision: None,
        order: None,
    }
}

/// USL-shaped throughput: linux peaks early, the other system scales further.
fn sweep() -> RunData {
    sweep_over(&CONNECTIONS)
}

/// As [`sweep`], over the given connection levels.
fn sweep_over(connections: &[u32]) -> RunData {
    let mut trials = Vec::new();
    for (pi, c) in connections.iter().enumerate() {
        let p = Point::new(pi as u32, &[("connections", i64::from(*c).into())]);
        let n = f64::from(*c);
        for t in 1..=3u32 {
            for (si, s) in [LINUX, EVIL].iter().enumerate() {
                let (l, sg, k) = [(20_000.0, 0.05, 0.0001), (18_000.0, 0.02, 0.00002)][si];
                let x = l * n / (1.0 + sg * (n - 1.0) + k * n * (n - 1.0));
                let w = WOBBLE[(pi * 3 + t as usize + si * 2) % WOBBLE.len()];
                let id = trials.len() as i64 + 1;
                let mut tr = trial(s, &p, t, x * w, id);
                if si == 1 && pi == 2 && t == 2 {
                    tr.status = TrialStatus::Failed;
                    tr.error = Some("server died: exit status 1, \"bind\" failed".into());
                    tr.measurement = None;
                }
                if si == 0 && pi == 0 && t == 1 {
                    tr.probe.as_mut().expect("probe").warnings =
                        vec!["frequency from /proc/cpuinfo <estimate>".into()];
                }
                if si == 0 && pi == 4 && t == 3 {
                    tr.context
                        .set_client_bound(Some("client CPU at 98%".into()));
                }
                trials.push(tr);
            }
        }
    }
    RunData {
        run: run("kernel <sweep>", LINUX, "median"),
        trials,
        profiles: Vec::new(),
    }
}

/// The successful trials' values a cell's summary is over: the ones its
/// verdict uses, client-bound trials left out while others remain.
fn ok_values(data: &RunData, system: &str, index: u32) -> Vec<f64> {
    let ok: Vec<&Trial> = (data.trials_at(system, index))
        .filter(|t| t.throughput().is_some())
        .collect();
    let kept = |t: &&&Trial| t.context.client_bound_why().is_none();
    let all_bound = !ok.iter().any(|t| kept(&t));
    let mut v: Vec<f64> = (ok.iter())
        .filter(|t| all_bound || kept(t))
        .filter_map(|t| t.throughput())
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The first `<svg>...</svg>` after `<section id="{id}">`.
fn first_svg<'a>(html: &'a str, section: &str) -> &'a str {
    let start = html
        .find(&format!(r#"<section id="{section}">"#))
        .unwrap_or_else(|| panic!("no {section} section"));
    let rest = &html[start..];
    let svg = rest.find("<svg").expect("an svg in the section");
    let end = rest.find("</svg>").expect("the svg ends");
    &rest[svg..end + 6]
}

#[test]
fn html_is_self_contained_with_a_line_and_a_fit_per_system() {
    let html = html::render(&sweep());
    assert!(html.starts_with("<!DOCTYPE html>"));
    let without_ns = html.replace(r#"xmlns="http://www.w3.org/2000/svg""#, "");
    assert!(!without_ns.contains("http://"), "no network references");
    assert!(!without_ns.contains("https://"), "no network references");
    assert!(!html.contains("<link") && !html.contains("<script"));

    let chart = first_svg(&html, "throughput");
    assert!(chart.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#));
    assert_eq!(
        chart.matches(r#"class="series""#).count(),
        2,
        "one line per system"
    );
    assert_eq!(
        chart.matches(r#"class="fit""#).count(),
        2,
        "one USL curve per system"
    );
    assert!(chart.contains(">linux</text>"), "legend has linux");
    assert!(chart.contains(">bsd &lt;script&gt;alert(1)&lt;/script&gt;</text>"));
    assert_eq!(chart.matches("USL fit: σ=").count(), 2);
    assert!(chart.contains("N*="));
    assert!(chart.contains("client-bound"), "hollow-marker legend");
    assert!(
        chart.contains(">4000</text>"),
        "x ticks at the sweep points"
    );

    let latency = first_svg(&html, "latency");
    assert_eq!(
        latency.matches(r#"class="series""#).count(),
        4,
        "p50 and p99 per system"
    );
    for section in [
        "efficiency",
        "relative",
        "server",
        "warnings",
        "environment",
        "experiment",
    ] {
        assert!(
            html.contains(&format!(r#"<section id="{section}">"#)),
            "{section}"
        );
    }
}

#[test]
fn html_escapes_every_label_and_shows_failures() {
    let html = html::render(&sweep());
    assert!(!html.contains("<script>alert(1)"));
    assert!(html.contains("bsd &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("kernel &lt;sweep&gt;") && !html.contains("kernel <sweep>"));
    assert!(html.contains("server died: exit status 1, &quot;bind&quot; failed"));
    assert!(html.contains("client CPU at 98%"));
    assert!(html.contains("frequency from /proc/cpuinfo &lt;estimate&gt;"));
    assert!(html.contains("6.1.0-18-amd64"), "environment fingerprint");
    assert!(
        html.contains("connections = [1, 10, 100, 1000, 2000, 4000]"),
        "experiment text"
    );
}

#[test]
fn terminal_has_a_row_per_point_with_median_and_range() {
    let data = sweep();
    let out = terminal::render_width(&data, false, usize::MAX);
    assert!(!out.contains('\x1b'), "no colour codes when not asked");
    for (pi, _) in CONNECTIONS.iter().enumerate() {
        for system in [LINUX, EVIL] {
            let v = ok_values(&data, system, pi as u32);
            let med = format::rate(median(&v));
            let range = format!("{}–{}", format::rate(v[0]), format::rate(v[v.len() - 1]));
            let row = out
                .lines()
                .find(|l| l.contains(system) && l.contains(&med) && l.contains(&range));
            assert!(
                row.is_some(),
                "no row for {system} at point {pi} with {med} and {range}:\n{out}"
            );
        }
    }
    assert!(out.contains("vs linux"));
    assert!(out.contains("Failed trials (1)"));
    assert!(out.contains("connections=100 trial 2: server died"));
    assert!(out.contains("client CPU at 98%"));
    assert!(out.contains("Ranking:"));
    assert!(out.contains("USL σ="));
}

#[test]
fn terminal_colour_and_width_are_respected() {
    let data = sweep();
    assert!(terminal::render(&data, true).contains("\x1b[1m"));
    let narrow = terminal::render_width(&data, false, 70);
    let widest = narrow
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains("linux"))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    assert!(
        widest <= 90,
        "table rows fit a narrow terminal: {widest}\n{narrow}"
    );
    assert!(narrow.contains("median"));
}

/// RFC 4180 records: quoted fields may hold commas, quotes and newlines.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

#[test]
fn csv_parses_back_one_row_per_trial() {
    let data = sweep();
    let text = csv::export(&data);
    assert!(text.ends_with("\r\n"));
    let rows = parse_csv(&text);
    assert_eq!(rows.len(), data.trials.len() + 1);
    let header = &rows[0];
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    for r in &rows {
        assert_eq!(r.len(), header.len(), "every record has every column");
    }
    for (t, r) in data.trials.iter().zip(&rows[1..]) {
        assert_eq!(r[col("system")], t.system);
        assert_eq!(r[col("connections")], t.point.coords[0].value.to_string());
        assert_eq!(r[col("trial")], t.trial.to_string());
        let throughput = col("throughput_requests_per_s");
        match t.throughput() {
            Some(x) => {
                assert_eq!(r[throughput].parse::<f64>().ok(), Some(x));
                let p99_us = t.measurement.as_ref().expect("measured").latency_us.p99.0;
                assert_eq!(
                    r[col("p99_ms")].parse::<f64>().ok(),
                    Some(p99_us as f64 / 1e3)
                );
            }
            None => {
                assert_eq!(r[col("status")], "failed");
                assert_eq!(r[throughput], "");
                assert_eq!(Some(r[col("error")].as_str()), t.error.as_deref());
            }
        }
    }
    let bound: Vec<_> = rows[1..]
        .iter()
        .filter(|r| r[col("client_bound")] == "true")
        .collect();
    assert_eq!(bound.len(), 1);
    assert_eq!(bound[0][col("client_bound_reason")], "client CPU at 98%");
    for name in [
        "run_id",
        "p50_ms",
        "p99_ms",
        "errors_timeout",
        "client_cpu_s",
        "server_cpu_s",
        "server_cpu_util_cpus",
        "mem_per_worker_rss_bytes",
        "cpu_softirq_fraction",
        "gbit_per_s",
    ] {
        col(name);
    }
    // Tidy: every column that measures something names its unit, or is a
    // count, an identity, a coordinate or text.
    let counts_and_text = [
        "run_id",
        "system",
        "point_index",
        "connections",
        "trial",
        "status",
        "error",
        "requests",
        "bytes",
        "retries",
        "connections_opened",
        "notes",
        "online_cpus",
        "procs_running_mean",
        "loadavg_1",
        "processes",
        "threads",
        "processes_seen",
        "ctx_voluntary",
        "ctx_involuntary",
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
        "freq_source",
        "steadiness",
        "client_bound",
        "client_bound_reason",
        "round_position",
        "start_seq",
        "seed",
    ];
    let units = [
        "_s",
        "_ms",
        "_bytes",
        "_per_s",
        "_cpus",
        "_fraction",
        "_mhz",
        "_mhz_mean",
    ];
    for h in header {
        let named = units.iter().any(|u| h.ends_with(u)) || h.starts_with("errors_");
        assert!(
            named || counts_and_text.contains(&h.as_str()),
            "no unit in `{h}`"
        );
    }
    assert_eq!(rows[1][col("mem_per_worker_rss_bytes")], "5000000");
}

#[test]
fn json_has_the_documented_fields() {
    let data = sweep();
    let v = json::export(&data);
    assert_eq!(v["schema"], json::SCHEMA);
    assert_eq!(v["run"]["name"], "kernel <sweep>");
    assert_eq!(v["baseline"], LINUX);
    assert_eq!(v["layout"]["x_axis"], "connections");
    assert_eq!(
        v["trials"].as_array().map(Vec::len),
        Some(data.trials.len())
    );
    let points = v["points"].as_array().expect("points");
    assert_eq!(points.len(), 12);
    for p in points {
        let system = p["system"].as_str().expect("system");
        let index = p["point_index"].as_u64().expect("index") as u32;
        let values = ok_values(&data, system, index);
        assert_eq!(p["summary"]["median"].as_f64(), Some(median(&values)));
        assert_eq!(p["summary"]["min"].as_f64(), Some(values[0]));
        assert!(p["latency_us"]["p99_us"].is_number());
        if system == LINUX {
            assert!(p["comparison"].is_null());
        } else {
            assert!(p["comparison"]["ratio"].is_number());
            assert!(p["comparison"]["verdict"]["verdict"].is_string());
            assert!(p["verdict_text"].is_string());
        }
    }
    let failed = points
        .iter()
        .find(|p| !p["failed"].as_array().map(Vec::is_empty).unwrap_or(true))
        .expect("a point with a failure");
    assert_eq!(failed["ok"], 2);
    assert_eq!(failed["trials"], 3);
    let fits = v["fits"].as_array().expect("fits");
    assert_eq!(fits.len(), 2);
    for f in fits {
        assert!(f["usl"]["sigma"].is_number(), "{f}");
        assert!(f["shape"]["peak_n"].is_number());
    }
    assert!(v["ranking"]["text"]
        .as_str()
        .unwrap_or("")
        .contains("linux (100%)"));
}

/// The JSON export follows `docs/export-schema.json`: a real run's export
/// (the fixture store, written by `scalelab run`) and the hand-built one,
/// and the schema names the version the export writes.
#[test]
fn the_json_export_follows_its_documented_schema() {
    let schema = support::export_schema();
    assert_eq!(schema["properties"]["schema"]["const"], json::SCHEMA);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = dir.path().join("real.sqlite");
    std::fs::copy(support::fixture("stores/quickstart-v1.sqlite"), &store).expect("copy");
    let store = store.to_string_lossy();
    let out = support::run(&["--store", &store, "export", "1", "--format", "json"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let real: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(!real["trials"].as_array().expect("trials").is_empty());
    for doc in [real, json::export(&sweep())] {
        let bad = support::json_schema::violations(&schema, &doc);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}

/// `docs/export-schema.json` is the schema generated from the export's
/// types, byte for byte. `SCALELAB_BLESS=1` rewrites the file instead (see
/// CONTRIBUTING.md), after a change to the export's types.
#[test]
fn the_schema_file_is_generated_from_the_export_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/export-schema.json");
    let generated = serde_json::to_string_pretty(&json::schema()).expect("schema") + "\n";
    if std::env::var_os("SCALELAB_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write docs/export-schema.json");
    }
    let file = std::fs::read_to_string(&path).expect("docs/export-schema.json");
    assert!(
        file == generated,
        "docs/export-schema.json is not the schema of the export's types; \
         rewrite it with SCALELAB_BLESS=1 cargo test --test it the_schema_file"
    );
}

/// The checker can fail: a broken export is caught where it is broken.
#[test]
fn the_schema_check_catches_a_broken_export() {
    let schema = support::export_schema();
    let mut doc = json::export(&sweep());
    doc.as_object_mut().expect("object").remove("unit");
    doc["trials"][0]["status"] = json!("maybe");
    doc["points"][0]["errors"]["gremlins"] = json!(1);
    doc["fits"][0]["usl"] = json!("fitted");
    let bad = support::json_schema::violations(&schema, &doc).join("\n");
    assert!(bad.contains("$: no `unit`"), "{bad}");
    assert!(bad.contains("$.trials[0].status: \"maybe\""), "{bad}");
    assert!(
        bad.contains("$.points[0].errors: unexpected `gremlins`"),
        "{bad}"
    );
    assert!(
        bad.contains("$.fits[0].usl: matches 0 of the oneOf branches"),
        "{bad}"
    );
}

/// A point with errors names their kinds, in the terminal and the report,
/// not just their count.
#[test]
fn errors_are_shown_by_kind() {
    let mut data = sweep();
    let t = data
        .trials
        .iter_mut()
        .find(|t| t.system == LINUX && t.point.index == 3)
        .expect("a linux trial at connections=1000");
    let m = t.measurement.as_mut().expect("measured");
    m.errors.timeout = 7;
    m.errors.connect = 2;
    let out = terminal::render_width(&data, false, usize::MAX);
    let row = out
        .lines()
        .find(|l| l.starts_with("  1000 "))
        .unwrap_or_else(|| panic!("no row at 1000:\n{out}"));
    assert!(row.contains("9: 7 timeouts, 2 connect"), "{row}");
    let html = html::render(&data);
    assert!(html.contains("9: 7 timeouts, 2 connect"));
}

/// Fewer than 6 levels: no USL coefficients anywhere, one sentence saying
/// why, and still the measured peak and what follows it.
#[test]
fn a_three_level_sweep_prints_no_usl_coefficients() {
    let data = sweep_over(&[1, 100, 4000]);
    let out = terminal::render_width(&data, false, usize::MAX);
    for coefficient in ["USL σ", "σ=", "κ=", "λ=", "N*=", "R²"] {
        assert!(!out.contains(coefficient), "{coefficient} in {out}");
    }
    assert_eq!(out.matches("too short for a USL fit").count(), 1, "{out}");
    assert!(
        out.contains("3 connections levels, a fit needs at least 6"),
        "{out}"
    );
    assert_eq!(
        out.matches("; past the peak: ").count(),
        2,
        "a peak and its decline per system: {out}"
    );
    for fit_warning in [
        "may not be accurate",
        "explains the data poorly",
        "degrees of freedom",
    ] {
        assert!(!out.contains(fit_warning), "{out}");
    }

    let v = json::export(&data);
    for f in v["fits"].as_array().expect("fits") {
        assert!(f["usl"].is_null() && f["usl_error"].is_null(), "{f}");
        assert_eq!(f["usl_too_short"], true);
        assert!(f["shape"]["peak_n"].is_number());
    }
    assert!(v["fit_note"].as_str().unwrap_or("").contains("too short"));

    let html = html::render(&data);
    assert!(!html.contains("USL fit: σ=") && !html.contains("κ (coherency)"));
    assert!(html.contains("too short for a USL fit"));
}

/// Six levels: the coefficients are printed in the terminal, the JSON and
/// the report, and nothing says the sweep is too short.
#[test]
fn a_six_level_sweep_prints_usl_coefficients() {
    let data = sweep();
    let out = terminal::render_width(&data, false, usize::MAX);
    assert_eq!(out.matches("USL σ=").count(), 2, "{out}");
    assert!(out.contains("R²="), "{out}");
    assert!(!out.contains("too short"), "{out}");
    let v = json::export(&data);
    for f in v["fits"].as_array().expect("fits") {
        assert!(f["usl"]["sigma"].is_number() && f["usl"]["kappa"].is_number());
        assert_eq!(f["usl_too_short"], false);
    }
    assert!(v["fit_note"].is_null());
    let html = html::render(&data);
    assert!(html.contains("κ (coherency)") && !html.contains("too short"));
}

/// Seed 003: one point, three systems, best of three; the ranking reads
/// "FreeBSD (128%) > DragonflyBSD (110%) > Debian (100%)".
#[test]
fn single_point_best_of_three_ranks_like_seed_003() {
    let p = Point::new(0, &[("connections", 4000.into())]);
    let best = [
        ("Debian", 63_936.47),
        ("FreeBSD", 82_122.38),
        ("DragonflyBSD", 70_510.98),
    ];
    let mut trials = Vec::new();
    for (s, top) in best {
        for (t, f) in [0.93, 1.0, 0.97].iter().enumerate() {
            let id = trials.len() as i64 + 1;
            trials.push(trial(s, &p, t as u32 + 1, top * f, id));
        }
    }
    let data = RunData {
        run: run("nginx return 200", "Debian", "best"),
        trials,
        profiles: Vec::new(),
    };
    let pct = |x: f64| format::percent(x / best[0].1);
    // Three trials a side are too few for the rank test (its smallest p is
    // 0.1), so best of three is judged by Welch's t on all trials. Both are
    // significant, but a claim needs its interval beyond the 2% floor
    // (issue 47): FreeBSD's 28% clears it; DragonflyBSD's 10% at a 3.5%
    // spread has Fieller's CI +1.5..+19.8%, which reaches inside it, so it
    // is `~` with that interval, and the ranking claims only FreeBSD.
    let expected = format!(
        "FreeBSD ({}) ≈ DragonflyBSD ({}, n.s.) ≈ Debian (100%)",
        pct(best[1].1),
        pct(best[2].1)
    );
    assert_eq!(
        expected,
        "FreeBSD (128%) ≈ DragonflyBSD (110%, n.s.) ≈ Debian (100%)"
    );
    let out = terminal::render_width(&data, false, usize::MAX);
    assert!(out.contains(&expected), "{out}");
    assert!(
        out.contains("significant: a difference at 1 of 2 points"),
        "{out}"
    );
    assert!(
        out.contains("~ (Welch p=0.031; cannot tell apart under ±8.7%; within the floor: CI +1.5% .. +19.8%)"),
        "{out}"
    );
    assert!(out.contains("+28.4% (Welch p=0.001)"), "{out}");
    assert!(out.contains("(Welch p"), "{out}");
    assert!(!out.contains("needs ≥4 trials"), "{out}");
    // The relative column uses the statistic shown: the bests.
    assert!(
        out.contains(&format::change(best[1].1 / best[0].1)),
        "{out}"
    );
    assert!(
        out.contains(&format::rate(82_122.38)),
        "best of three is the headline"
    );
    let html = html::render(&data);
    assert!(html.contains(&expected.replace('>', "&gt;")));
    let chart = first_svg(&html, "throughput");
    assert_eq!(
        chart.matches(r#"class="bar""#).count(),
        3,
        "a bar per system"
    );
    assert!(!chart.contains(r#"class="series""#));
}

/// A rate sweep per script: x is `rate`, one chart per script, no USL.
#[test]
fn other_axes_get_their_own_charts() {
    let mut trials = Vec::new();
    let mut index = 0;
    for script in ["select-only", "tpcb-like"] {
        for rate in [1000, 2000, 4000] {
            let p = Point::new(
                index,
                &[("load.script", script.into()), ("rate", rate.into())],
            );
            index += 1;
            for s in ["a", "b"] {
                for t in 1..=3 {
                    let id = trials.len() as i64 + 1;
                    trials.push(trial(
                        s,
                        &p,
                        t,
                        f64::from(rate) * (0.9 + 0.01 * f64::from(t)),
                        id,
                    ));
                }
            }
        }
    }
    let data = RunData {
        run: run("rates", "a", "median"),
        trials,
        profiles: Vec::new(),
    };
    let html = html::render(&data);
    let section = &html[html.find(r#"<section id="throughput">"#).expect("section")..];
    let section = &section[..section.find("</section>").expect("end")];
    assert_eq!(
        section.matches("<svg").count(),
        2,
        "one throughput chart per script"
    );
    assert!(section.contains("Throughput (load.script=select-only)"));
    assert!(section.contains("Throughput (load.script=tpcb-like)"));
    assert!(section.contains(">rate</text>"), "x axis is the rate");
    assert!(
        !section.contains(r#"class="fit""#),
        "no USL fit on a rate axis"
    );
    let v = json::export(&data);
    assert_eq!(v["layout"]["x_axis"], "rate");
    assert_eq!(v["layout"]["group_axes"], json!(["load.script"]));
    assert!(v["fits"][0]["usl"].is_null());
}

#[test]
fn report_and_export_commands_read_a_stored_run() {
    use scalelab::store::{NewRun, NewTrial, Store};
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("s.sqlite");
    let data = sweep();
    {
        let mut store = Store::open(&db, scalelab::catalog()).expect("store");
        let r = &data.run;
        let run_id = store
            .create_run(&NewRun {
                name: &r.name,
                description: &r.description,
                experiment: &r.experiment,
                experiment_path: &r.experiment_path,
                quick: false,
                environment: r.environment.as_ref().expect("a fingerprint"),
                baseline: LINUX,
                headline: "median",
                load_kind: "http",
                server_kind: "nginx",
                rate_unit: scalelab::catalog().rate_unit_of("http"),
                parallelism: scalelab::catalog().parallelism_of("nginx"),
                noise: 0.02,
                label: None,
                revision: None,
            })
            .expect("run");
        for t in &data.trials {
            store
                .insert_trial(&NewTrial {
                    run_id,
                    system: &t.system,
                    point: &t.point,
                    trial: t.trial,
                    status: t.status,
                    error: t.error.as_deref(),
                    failure_cause: None,
                    started_at: t.started_at,
                    context: &t.context,
                    measurement: t.measurement.as_ref(),
                    timeline: &t.timeline,
                    window: &t.window,
                    histogram: None,
                    probe_summary: t.probe.as_ref(),
                    probe_timeline: None,
                    probe_refused: None,
                })
                .expect("trial");
        }
        store
            .set_run_status(run_id, scalelab::store::RunStatus::Finished)
            .expect("status");
    }
    let db = db.to_string_lossy().into_owned();
    let html_path = dir.path().join("r.html").to_string_lossy().into_owned();
    let out = support::run(&["--store", &db, "report", "latest", "-o", &html_path]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let html = std::fs::read_to_string(&html_path).expect("report written");
    assert_eq!(
        first_svg(&html, "throughput")
            .matches(r#"class="series""#)
            .count(),
        2
    );

    let out = support::run(&["--store", &db, "export", "latest", "--format", "csv"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let rows = parse_csv(&support::stdout(&out));
    assert_eq!(rows.len(), data.trials.len() + 1);

    let out = support::run(&["--store", &db, "export", "latest", "--format", "json"]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["points"].as_array().map(Vec::len), Some(12));
}

/// An empty run, a run whose every trial failed and one with non-finite
/// numbers all render in every format without panicking.
#[test]
fn degenerate_runs_still_render() {
    let empty = RunData {
        run: run("empty", LINUX, "median"),
        trials: vec![],
        profiles: Vec::new(),
    };
    let mut failed = sweep();
    for t in &mut failed.trials {
        t.status = TrialStatus::Failed;
        t.error = Some("connection refused".into());
        t.measurement = None;
    }
    let mut odd = sweep();
    for t in odd.trials.iter_mut().step_by(2) {
        if let Some(m) = t.measurement.as_mut() {
            m.rps = PerSecond(f64::NAN);
            m.gbit_s = f64::INFINITY;
        }
        t.probe = Some(ProbeSummary {
            server_cpu_util: Some(f64::NAN),
            cpu_busy: f64::INFINITY,
            ..ProbeSummary::default()
        });
    }
    for data in [&empty, &failed, &odd] {
        let html = html::render(data);
        assert!(html.ends_with("</html>\n"));
        for bad in ["NaN", "\"inf", "inf\"", ",inf", "inf,", "-inf"] {
            if let Some(i) = html.find(bad) {
                panic!("{bad} in {}", &html[i.saturating_sub(300)..i + 50]);
            }
        }
        let text = terminal::render_width(data, false, 80);
        assert!(text.contains(&data.run.name));
        assert_eq!(parse_csv(&csv::export(data)).len(), data.trials.len() + 1);
        assert_eq!(json::export(data)["schema"], json::SCHEMA);
    }
    let text = terminal::render_width(&failed, false, usize::MAX);
    assert!(text.contains(&format!("Failed trials ({})", failed.trials.len())));
}

#[test]
fn an_unreadable_probe_summary_is_named_in_export_and_report_not_a_silent_null() {
    // Issue 36: `echo 1e308 W` stored `"joules": null`; the trial's whole
    // probe summary then no longer loaded and `export` showed `probe: null`
    // with no message. The stored text here is that summary.
    let lab = crate::support::run::Lab::new(
        "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    let out = lab.run().output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let broken = rusqlite::Connection::open(&lab.store)
        .unwrap()
        .execute(
            "UPDATE probes SET summary = json_set(summary, '$.energy', json('{\"source\":\"command\",\
             \"domains\":[\"command: echo 1e308 W\"],\"joules\":null,\"measured_s\":2.0,\"wraps\":0}'))",
            [],
        )
        .unwrap();
    assert_eq!(broken, 1);
    let store = lab.store.to_string_lossy().to_string();
    let export = support::run(&["--store", &store, "export", "latest", "--format", "json"]);
    assert!(export.status.success(), "{}", stderr(&export));
    assert!(
        stderr(&export).contains("trial 1: the stored probe summary cannot be read"),
        "{}",
        stderr(&export)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&export)).unwrap();
    let why = doc["trials"][0]["probe_unreadable"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("cannot be read"), "{}", doc["trials"][0]);
    let html = lab.dir.path().join("r.html");
    let report = support::run(&[
        "--store",
        &store,
        "report",
        "latest",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert!(
        stderr(&report).contains("trial 1: the stored probe summary cannot be read"),
        "{}",
        stderr(&report)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("cannot be read"), "the page does not name it");
}

#[test]
fn escape_sequences_in_labels_never_reach_the_terminal_raw() {
    // Issue 36: `compare` and `history` printed labels' escape sequences raw.
    let lab = crate::support::run::Lab::new(
        "[sweep]\nconnections = [2]\n[trials]\nduration = \"300ms\"\nwarmup = \"0s\"\nmin = 1\nmax = 1\n",
    );
    // `run` refuses such a label now (issue 46), naming the flag; a label
    // stored before that, or written by another tool, is still shown
    // escaped: the two runs are stored plain and their labels set in SQL.
    let refused = lab.run().args(["--label", "a\u{1b}[2J"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--label holds a control character"));
    for (id, label) in [(1, "a\u{1b}[2J\u{1b}]0;pwned\u{7}"), (2, "b\u{1b}[31m")] {
        let out = lab
            .run()
            .args(["--label", &format!("l{id}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let db = rusqlite::Connection::open(&lab.store).unwrap();
        let set = db
            .execute("UPDATE runs SET label = ?1 WHERE id = ?2", (label, id))
            .unwrap();
        assert_eq!(set, 1, "run {id} stored");
    }
    let store = lab.store.to_string_lossy().to_string();
    for args in [
        vec!["--store", &store, "compare", "1", "2"],
        vec!["--store", &store, "history", "it"],
    ] {
        let out = support::run(&args);
        let text = stdout(&out);
        assert!(
            out.status.code().is_some_and(|c| c != 2),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{args:?}: {text:?}"
        );
        assert!(text.contains("\\u{1b}[2J"), "{args:?}: {text}");
    }
}
