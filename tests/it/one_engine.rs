//! Issue 46 item 2.3: `compare` and the N-run page (`report A B C`) give
//! one number under one name, one set of pairs and one mark for every
//! point of the same stored runs: three labels of three runs each and one
//! label of one run, two systems a run, one client-bound point.
//!
//! The runs are synthetic (stored through the store's own writer, as
//! tests/it/analysis.rs's are): what is tested is that two views of one
//! store agree, not a server.

use crate::support::{run, stderr, stdout};
use scalelab::model::Point;
use scalelab::probe::{Environment, Fingerprint};
use scalelab::store::{Measurement, NewRun, NewTrial, Store, TrialContext, TrialStatus};
use scalelab::units::{PerSecond, Seconds};
use std::path::Path;

const SYSTEMS: [(&str, f64); 2] = [("1 worker", 10_000.0), ("2 workers", 15_000.0)];
const CONNECTIONS: [i64; 3] = [10, 100, 1000];
/// Whole runs drift apart by a few percent; trials inside a run by 1%.
const DRIFT: [f64; 3] = [1.0, 1.04, 0.97];
const JITTER: [f64; 4] = [1.0, 1.01, 0.99, 1.005];

/// One run of `label`: both systems at every point, throughput `scale`
/// times the system's own; `bound` makes every trial of `1 worker` at
/// connections=1000 client-bound.
fn add_run(store: &mut Store, label: &str, scale: f64, bound: bool) {
    let env = Environment::local(Fingerprint {
        kernel_release: "6.1.0".into(),
        online_cpus: 2,
        ..Fingerprint::default()
    });
    let run_id = store
        .create_run(&NewRun {
            name: "synthetic",
            description: "one engine",
            experiment: "name = \"synthetic\"",
            experiment_path: "synthetic.toml",
            quick: false,
            environment: &env,
            baseline: SYSTEMS[0].0,
            headline: "median",
            load_kind: "http",
            server_kind: "nginx",
            rate_unit: scalelab::catalog().rate_unit_of("http"),
            parallelism: scalelab::catalog().parallelism_of("nginx"),
            noise: 0.02,
            label: Some(label),
            revision: None,
        })
        .unwrap();
    for (index, conns) in CONNECTIONS.into_iter().enumerate() {
        let point = Point::new(index as u32, &[("connections", conns.into())]);
        for (trial, j) in JITTER.iter().enumerate() {
            for (system, base) in SYSTEMS {
                let mut context = TrialContext::default();
                if bound && system == "1 worker" && conns == 1000 {
                    context.set_client_bound(Some("client CPU 99% of its cores".into()));
                }
                let m = Measurement {
                    requests: 10_000,
                    duration_s: Seconds(1.0),
                    rps: PerSecond(base * scale * j * (1.0 + index as f64 * 0.1)),
                    ..Default::default()
                };
                store
                    .insert_trial(&NewTrial {
                        run_id,
                        system,
                        point: &point,
                        trial: trial as u32 + 1,
                        status: TrialStatus::Ok,
                        error: None,
                        failure_cause: None,
                        started_at: 0,
                        context: &context,
                        measurement: Some(&m),
                        timeline: &[],
                        window: &Default::default(),
                        histogram: None,
                        probe_summary: None,
                        probe_timeline: None,
                        probe_refused: None,
                    })
                    .unwrap();
            }
        }
    }
}

/// A (3 runs, the baseline), B (3 runs, 20% slower), C (3 runs, as fast,
/// client-bound at one point), D (1 run, 20% faster): 10 runs.
fn store(dir: &Path) -> String {
    let path = dir.join("s.sqlite");
    let mut s = Store::open(&path, scalelab::catalog()).unwrap();
    for (label, scale, runs, bound) in [
        ("A", 1.0, 3, false),
        ("B", 0.8, 3, false),
        ("C", 1.0, 3, true),
        ("D", 1.2, 1, false),
    ] {
        for d in &DRIFT[..runs] {
            add_run(&mut s, label, scale * d, bound);
        }
    }
    path.display().to_string()
}

/// The cells of every table row of an HTML page, tags stripped.
fn html_rows(html: &str) -> Vec<Vec<String>> {
    html.split("<tr")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap_or(row.len())];
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let inner = &cell[cell.find('>').map_or(0, |i| i + 1)..];
                    let inner = &inner[..inner.find("</td>").unwrap_or(inner.len())];
                    strip_tags(inner)
                        .replace("&gt;", ">")
                        .replace("&lt;", "<")
                        .replace("&amp;", "&")
                        .trim()
                        .to_string()
                })
                .collect()
        })
        .collect()
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in s.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// compare's table rows under each `X (…) against A` heading: the side,
/// then the row's cells (split at two or more spaces).
fn compare_rows(text: &str) -> Vec<(String, Vec<String>)> {
    let mut side = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some((name, _)) = line.split_once(" (synthetic, ") {
            if line.contains(" against ") {
                side = name.to_string();
                continue;
            }
        }
        let starts = SYSTEMS
            .iter()
            .any(|(s, _)| line.starts_with(&format!("{s} ")));
        if !side.is_empty() && (starts || line.starts_with("geomean")) {
            let cells: Vec<String> = line
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            out.push((side.clone(), cells));
        }
    }
    out
}

#[test]
fn compare_and_the_n_run_page_give_one_number_one_pair_and_one_mark_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let runs: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
    let mut args = vec!["--store", &store, "compare"];
    args.extend(runs.iter().map(String::as_str));
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let page_path = dir.path().join("page.html");
    let mut report = vec!["--store", &store, "report"];
    report.extend(runs.iter().map(String::as_str));
    report.extend(["-o", page_path.to_str().unwrap()]);
    let out = run(&report);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(&page_path).unwrap();
    let rows = html_rows(&page);

    // compare names its value columns by what they hold.
    assert!(
        text.contains("A geomean of 3 runs' medians") && text.contains("D median"),
        "{text}"
    );
    assert!(
        page.contains("A geomean of 3 runs' medians"),
        "the page's column"
    );

    let table = compare_rows(&text);
    // 3 sides × (2 systems × 3 points + geomean)
    assert_eq!(table.len(), 3 * 7, "{text}");
    let mut seen = (false, false, false);
    for (side, cells) in &table {
        let found = if cells[0] == "geomean" {
            // The run as a whole: the same cell on the page.
            let delta = cells.last().unwrap();
            rows.iter()
                .any(|r| r.first().is_some_and(|c| c == "geomean") && r.contains(delta))
        } else {
            // system, point, A's value, the side's value, the change: one
            // page row holds the same five.
            let [system, point, a, b, delta] = &cells[..] else {
                panic!("{cells:?}\n{text}");
            };
            seen.0 |= delta.starts_with('?') && delta.contains("1 run");
            seen.1 |= delta.contains("client-bound at 12 of 12 trials");
            seen.2 |= delta.contains("3 v 3 runs, p=");
            rows.iter().any(|r| {
                r.iter()
                    .any(|c| c == system || c.ends_with(&format!("· {system}")))
                    && [point, a, b, delta].iter().all(|want| r.contains(want))
            })
        };
        assert!(
            found,
            "compare's `{side}` row {cells:?} is on no row of the page:\n{:#?}",
            rows.iter().filter(|r| r.len() > 3).collect::<Vec<_>>()
        );
    }
    assert_eq!(
        seen,
        (true, true, true),
        "a one-run-a-side `?`, a client-bound point and a judged point\n{text}"
    );
    // The ranking holds compare's geomean ratios, side by side.
    let b_geomean = table
        .iter()
        .find(|(s, c)| s == "B" && c[0] == "geomean")
        .map(|(_, c)| c.last().unwrap().clone())
        .unwrap();
    let pct = b_geomean.split('%').next().unwrap();
    let pct: f64 = pct
        .trim_start_matches(|c: char| !c.is_ascii_digit() && c != '-' && c != '+')
        .parse()
        .unwrap();
    let ranked = format!("B ({:.0}%", 100.0 + pct);
    assert!(
        page.contains(&ranked),
        "{ranked} in the ranking: {b_geomean}"
    );
}
