//! Issue 47 item 1: a claim needs its interval beyond the noise floor, in
//! `compare` and `check` alike, on stored runs (written through the
//! store's own writer, `support::stored`: what is tested is the verdict
//! engine on real stores, not a server).
//!
//! The runs' levels are the A/A case: three runs a side whose run
//! medians are 2.1% apart with 0.9% of drift, so Student's t on the runs
//! gives p < 0.05 and the point estimate clears the 2% floor, but the 95%
//! interval reaches inside it.

use crate::support::stored::{trials, write_run, Stored};
use crate::support::{run, stderr, stdout};
use std::path::Path;

const BASE: [f64; 3] = [100_000.0, 100_900.0, 99_200.0];
const CLOSE: [f64; 3] = [102_500.0, 101_400.0, 103_300.0];

fn runs_of(db: &Path, label: &str, levels: &[f64]) -> Vec<i64> {
    levels
        .iter()
        .map(|level| {
            let t: Vec<Stored> = trials("default", 64, 4, *level, |_| false);
            write_run(db, label, "default", &t)
        })
        .collect()
}

/// `scalelab --store DB compare [--json] IDS…`'s output (it must succeed).
fn compare(db: &Path, ids: &[i64], json: bool) -> String {
    let store = db.display().to_string();
    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
    let mut args = vec!["--store", &store, "compare"];
    args.extend(json.then_some("--json"));
    args.extend(ids.iter().map(String::as_str));
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

/// A store at `db` of three runs "A" at [`BASE`] and three "B" at
/// `levels`: their ids and `compare --json`'s one point's comparison.
fn a_against_b(db: &Path, levels: &[f64]) -> (Vec<i64>, serde_json::Value) {
    let mut ids = runs_of(db, "A", &BASE);
    ids.extend(runs_of(db, "B", levels));
    let doc: serde_json::Value =
        serde_json::from_str(&compare(db, &ids, true)).expect("compare --json");
    let point = doc["comparisons"][0]["points"][0]["comparison"].clone();
    (ids, point)
}

#[test]
fn compare_calls_a_change_only_when_its_interval_clears_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.sqlite");
    let (ids, point) = a_against_b(&db, &CLOSE);
    assert_eq!(point["verdict"]["verdict"], "no_difference", "{point}");
    assert_eq!(point["within_floor"], true, "{point}");
    assert!(point["p_value"].as_f64().unwrap() < 0.05, "{point}");
    assert!(point["ratio"].as_f64().unwrap() > 1.02, "{point}");
    let lo = point["ratio_ci"][0].as_f64().unwrap();
    assert!(
        lo > 1.0 && lo < 1.02,
        "the interval reaches inside: {point}"
    );
    let sentence = point["sentence"].as_str().unwrap();
    assert!(
        sentence.starts_with("within the 2% floor: CI "),
        "{sentence}"
    );

    // The terminal says the same, with the interval.
    let text = compare(&db, &ids, false);
    assert!(text.contains("within the floor: CI +"), "{text}");
    assert!(
        text.contains("the 95% interval of the change reaches inside the 2% noise floor"),
        "the legend: {text}"
    );

    // A 10% change at the same drift is claimed, its interval beyond.
    let far: Vec<f64> = BASE.iter().map(|v| v * 1.1).collect();
    let (_, point) = a_against_b(&dir.path().join("far.sqlite"), &far);
    assert_eq!(point["verdict"]["verdict"], "faster", "{point}");
    assert_eq!(point["within_floor"], false, "{point}");
    assert!(point["ratio_ci"][0].as_f64().unwrap() > 1.02, "{point}");
}

fn check(baseline: &Path, candidate: &Path) -> (i32, String) {
    let out = run(&[
        "check",
        baseline.to_str().unwrap(),
        &format!("{}:latest", candidate.display()),
    ]);
    (
        out.status.code().unwrap_or(-1),
        stdout(&out) + &stderr(&out),
    )
}

#[test]
fn check_calls_a_regression_only_when_the_slowdown_s_interval_clears_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.sqlite");
    runs_of(&base, "base", &BASE);
    // 7% slower: beyond the baseline's prediction interval, but that
    // interval, from 3 runs, is wide enough to reach inside 5%.
    let near = dir.path().join("near.sqlite");
    runs_of(&near, "cand", &[BASE[0] * 0.93]);
    let (code, text) = check(&base, &near);
    assert_eq!(
        code, 0,
        "a slowdown whose interval reaches inside 5%: {text}"
    );
    assert!(
        text.contains("slower, but not beyond the threshold: all points geomean: -7.0%, within the 5.0% threshold: CI -"),
        "{text}"
    );
    // 25% slower: the whole interval is beyond it.
    let far = dir.path().join("far.sqlite");
    runs_of(&far, "cand", &[BASE[0] * 0.75]);
    let (code, text) = check(&base, &far);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("regression:"), "{text}");
}
