//! Issue 46's done-when for the single-run views: for one point of one
//! stored run, the ranking, the rows and the seed bars give the same mark
//! and the same number in the terminal, the HTML report and the JSON
//! export. Three stored fixtures: a client-bound point (one trial of three
//! client-bound at c=100, every trial at c=4000), a run with nothing
//! comparable (the baseline client-bound everywhere), and one run a side
//! on the N-run page.

use crate::support::stored::{trials, write_run, Stored};
use crate::support::{self, stderr, stdout};
use std::path::Path;

const BASE: &str = "seed 003 config";
const CAND: &str = "nginx defaults";

/// The three views of the store's latest run: terminal, HTML, JSON.
fn views(db: &Path) -> (String, String, serde_json::Value) {
    let data = scalelab::store::Store::open(db, scalelab::catalog())
        .expect("store")
        .load_run("latest")
        .expect("run");
    let text = scalelab::report::terminal::render(&data, false);
    let page = db.with_extension("html");
    let store = db.to_str().unwrap();
    let out = support::run(
        &["--store", store, "report", "latest", "-o"]
            .into_iter()
            .chain([page.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).expect("page");
    let out = support::run(&["--store", store, "export", "latest", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    (
        text,
        html,
        serde_json::from_str(&stdout(&out)).expect("json"),
    )
}

fn ranking_line(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("Ranking: "))
        .unwrap_or_else(|| panic!("no ranking in\n{text}"))
}

fn point<'a>(json: &'a serde_json::Value, system: &str, index: u64) -> &'a serde_json::Value {
    (json["points"].as_array().unwrap().iter())
        .find(|p| p["system"] == system && p["point_index"] == index)
        .unwrap_or_else(|| panic!("no point {system} {index}"))
}

fn rank<'a>(json: &'a serde_json::Value, system: &str) -> &'a serde_json::Value {
    (json["ranking"]["order"].as_array().unwrap().iter())
        .find(|r| r["system"] == system)
        .unwrap_or_else(|| panic!("no rank for {system}"))
}

/// The one terminal row of `system` at `label` (a row holds the point's
/// label only on its first system).
fn row<'a>(text: &'a str, system: &str, median: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(&format!(" {system} ")) && l.contains(median))
        .unwrap_or_else(|| panic!("no {system} row with {median} in\n{text}"))
}

#[test]
fn a_client_bound_point_has_one_mark_and_one_number_in_every_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bound.sqlite");
    let mut run: Vec<Stored> = Vec::new();
    run.extend(trials(BASE, 100, 3, 10_000.0, |_| false));
    // The third trial client-bound, at a quarter of the others' rate.
    let mut cand = trials(CAND, 100, 3, 12_000.0, |t| t == 3);
    cand[2].rps = 3_000.0;
    run.extend(cand);
    run.extend(trials(BASE, 4000, 3, 5_000.0, |_| false));
    run.extend(trials(CAND, 4000, 3, 4_000.0, |_| true));
    write_run(&db, "quiet", BASE, &run);
    let (text, html, json) = views(&db);
    // c=100: the median of the 2 trials the verdict used (11.88k and
    // 12.00k), not of all 3 (11.88k), and 1 left out.
    let median = 12_000.0 * (0.99 + 1.00) / 2.0;
    let r = row(&text, CAND, "11.94k");
    assert!(r.contains(" 2+1! "), "{r}");
    assert!(r.contains("? +19.4%"), "{r}");
    let p = point(&json, CAND, 0);
    assert_eq!(p["summary"]["median"].as_f64(), Some(median));
    assert_eq!(p["left_out"], 1);
    assert!(p["verdict_text"].as_str().unwrap().starts_with("? +19.4%"));
    assert!(html.contains("11.94k (119% ?)"), "the relative table");
    assert!(html.contains("2 (+1 client-bound, left out)"));
    // c=4000: every trial of the candidate client-bound: ✗ everywhere.
    let r = row(&text, CAND, "4.00k");
    assert!(
        r.contains("✗ not comparable: client-bound at 3 of 3 trials in nginx defaults"),
        "{r}"
    );
    let p = point(&json, CAND, 1);
    assert_eq!(p["not_comparable"], "client-bound at 3 of 3 trials");
    assert!(html.contains("4.00k ✗"), "the relative table");
    assert!(html.contains(">80% ✗</text>"), "the seed bar at c=4000");
    // The ranking: over the one comparable point, 119%, `?`, the other
    // point counted as left out, alike in all three.
    let line = ranking_line(&text);
    assert!(
        line.starts_with("nginx defaults (119%, ?), seed 003 config (100%)"),
        "{line}"
    );
    assert!(
        line.contains("[1 point left out as not comparable"),
        "{line}"
    );
    assert_eq!(json["ranking"]["text"], line);
    assert!(
        html.contains(&line.replace('>', "&gt;")),
        "the HTML headline"
    );
    let r = rank(&json, CAND);
    assert_eq!(
        (r["points"].as_u64(), r["excluded"].as_u64()),
        (Some(1), Some(1))
    );
    assert!((r["relative"].as_f64().unwrap() - median / 10_000.0).abs() < 1e-12);
    assert!(html.contains(">119% ?</td>"), "the geometric mean cell");
}

#[test]
fn a_run_with_nothing_comparable_ranks_nothing_in_every_view() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.sqlite");
    // nginx-return200 --quick on a busy 2-CPU VM: the baseline
    // client-bound at every trial.
    let mut run: Vec<Stored> = Vec::new();
    for (c, base, cand) in [(100, 10_600.0, 9_590.0), (4000, 4_910.0, 4_980.0)] {
        run.extend(trials(BASE, c, 2, base, |_| true));
        run.extend(trials(CAND, c, 2, cand, |_| false));
    }
    write_run(&db, "quiet", BASE, &run);
    let (text, html, json) = views(&db);
    let line = ranking_line(&text);
    assert!(
        line.starts_with("no ranking: no comparable point  [2 points left out"),
        "{line}"
    );
    assert!(!text.contains("geometric mean over"), "{text}");
    assert_eq!(json["ranking"]["text"], line);
    assert!(html.contains(r#"<p class="ranking bad-text">no ranking: no comparable point"#));
    let r = rank(&json, CAND);
    assert_eq!(
        (r["points"].as_u64(), r["excluded"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(rank(&json, BASE)["excluded"], 2);
    // Each point: ✗ on the baseline's row, the candidate's verdict, the
    // relative table, the export and the seed bar.
    let r = row(&text, BASE, "10.60k");
    assert!(
        r.contains("baseline, ✗ client-bound at 2 of 2 trials"),
        "{r}"
    );
    let r = row(&text, CAND, "9.59k");
    assert!(
        r.contains("✗ not comparable: client-bound at 2 of 2 trials in seed 003 config"),
        "{r}"
    );
    assert_eq!(
        point(&json, BASE, 0)["not_comparable"],
        "client-bound at 2 of 2 trials"
    );
    assert!(
        html.contains(">100% ✗</text>") && html.contains(">101% ✗</text>"),
        "seed bars"
    );
    assert!(html.contains(">– ✗</td>"), "the geometric mean cell");
    // And `run` exits 5 for it.
    let data = scalelab::store::Store::open(&db, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    assert!(scalelab::judging::analyse::nothing_comparable(&data).is_some());
}

/// The ranking line of the N-run page of two runs, `quiet` (the
/// baseline) and `again` at 166% of it, 2 trials a point, the baseline
/// client-bound at the points `bound` lists.
fn two_run_page(dir: &Path, bound: &[i64]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let (a, b) = (dir.join("quiet.sqlite"), dir.join("again.sqlite"));
    let mut quiet = Vec::new();
    let mut again = Vec::new();
    for (c, rps) in [(100, 10_000.0), (4000, 5_000.0)] {
        quiet.extend(trials("nginx", c, 2, rps, |_| bound.contains(&c)));
        again.extend(trials("nginx", c, 2, rps * 1.66, |_| false));
    }
    write_run(&a, "quiet", "nginx", &quiet);
    write_run(&b, "again", "nginx", &again);
    let page = dir.join("two.html");
    let out = support::run(&[
        "report",
        &format!("{}:1", a.display()),
        &format!("{}:1", b.display()),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    html.split(r#"<p class="ranking"#)
        .nth(1)
        .and_then(|s| s.split("</p>").next())
        .unwrap_or_else(|| panic!("no ranking on the page"))
        .to_string()
}

/// The guide's three-run page printed `nginx defaults (166%)` and a `>`
/// from one run a side with 2 trials, where the baseline was client-bound
/// at every point.
#[test]
fn one_run_a_side_is_marked_and_never_ordered_on_the_n_run_page() {
    let dir = tempfile::tempdir().unwrap();
    let all = two_run_page(&dir.path().join("all"), &[100, 4000]);
    assert!(!all.contains("&gt;") && !all.contains("(166%)"), "{all}");
    assert!(
        all.contains("Nothing comparable") || all.contains("no ranking"),
        "{all}"
    );
    let one = two_run_page(&dir.path().join("one"), &[4000]);
    assert!(one.contains("again (166%, ?), quiet (100%)"), "{one}");
    assert!(!one.contains("&gt;"), "no `>` from one run a side: {one}");
    assert!(one.contains("[1 point left out as not comparable"), "{one}");
}
