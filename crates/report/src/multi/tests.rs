//! Merging runs: series names, the union of points, refusals, the page.

use super::page;
use crate::judging::multi::*;
use crate::judging::test_support::run_data;
use crate::model::Point;
use crate::store::RunData;

fn labelled(label: &str, systems: &[&str], scale: f64) -> RunData {
    let mut d = run_data(systems);
    d.run.label = label.into();
    d.run.id = (scale * 1000.0) as i64;
    d.run.started_at += (scale * 1000.0) as i64;
    for t in &mut d.trials {
        if let Some(m) = &mut t.measurement {
            m.rps.0 *= scale;
        }
    }
    d
}

#[test]
fn series_are_named_by_label_and_system_and_points_are_united() {
    let a = labelled("Linux 6.1", &["nginx"], 1.0);
    let mut b = labelled("FreeBSD 14", &["nginx"], 1.2);
    b.trials.retain(|t| t.point.index != 0); // no connections=1
    let c = labelled("DragonFly 6.4", &["1 worker", "2 workers"], 0.9);
    let m = merged(vec![a, b, c]);
    let names: Vec<&str> = m.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Linux 6.1",
            "FreeBSD 14",
            "DragonFly 6.4 · 1 worker",
            "DragonFly 6.4 · 2 workers"
        ]
    );
    assert_eq!(m.data.systems(), names);
    assert_eq!(m.data.run.baseline.as_deref(), Some("Linux 6.1"));
    assert_eq!(m.data.points().len(), 5);
    assert_eq!(
        m.missing_points(),
        [("FreeBSD 14".to_string(), vec!["connections=1".to_string()])]
    );
    let agg = crate::judging::analyse::aggregate(&m.data);
    let freebsd = agg
        .ranking
        .iter()
        .find(|r| r.system == "FreeBSD 14")
        .unwrap();
    // 1.2× the baseline at its 4 shared points, the geomean over those only.
    assert_eq!(freebsd.points, 4);
    assert!(
        (freebsd.relative - 1.2).abs() < 1e-9,
        "{}",
        freebsd.relative
    );
    // No verdict where the baseline has a point the other series lacks.
    assert!(agg
        .cells
        .iter()
        .filter(|c| c.system == "FreeBSD 14")
        .all(|c| c.point.label() != "connections=1"));
}

/// `a.sqlite:1`, `b.sqlite:1`, … for `n` runs.
fn sources(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("{}.sqlite:1", (b'a' + i as u8) as char))
        .collect()
}

/// The page with the baseline run's own rules, as `report A B C` draws it.
fn page_of(m: &Merged) -> String {
    page::render(m, &verdicts::rules(m, None))
}

fn merged(runs: Vec<RunData>) -> Merged {
    let n = runs.len();
    merge(runs, sources(n), Pooling::ByLabel).unwrap()
}

#[test]
fn equal_labels_are_pooled_as_repeats_and_said_so_or_told_apart_by_source() {
    let runs = vec![
        labelled("Linux 6.1", &["nginx"], 1.0),
        labelled("Linux 6.1", &["nginx"], 1.01),
        labelled("other", &["nginx"], 1.02),
    ];
    assert_eq!(
        unique_names(&runs, &sources(3)),
        ["Linux 6.1 (a.sqlite:1)", "Linux 6.1 (b.sqlite:1)", "other"]
    );
    let m = merged(runs.clone());
    let names: Vec<&str> = m.sides.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Linux 6.1", "other"]);
    assert_eq!(m.sides[0].runs, [0, 1]);
    let lines = pooled_lines(&m);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].starts_with(
            "`Linux 6.1`: 2 runs pooled by label as repeats of one system (a.sqlite:1, b.sqlite:1)"
        ),
        "{}",
        lines[0]
    );
    // --each-run: every run its own series, the equal labels told apart.
    let each = merge(runs, sources(3), Pooling::EachRun).unwrap();
    let names: Vec<&str> = each.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["Linux 6.1 (a.sqlite:1)", "Linux 6.1 (b.sqlite:1)", "other"]
    );
}

#[test]
fn a_label_that_looks_like_another_series_never_merges_with_it() {
    // Issue 36: `x`, `x` and `x #2` gave one series once the page added
    // its own `#2`; `L` with two systems met a run labelled `L · s1`.
    let runs = vec![
        labelled("x", &["nginx"], 1.0),
        labelled("x", &["nginx"], 1.01),
        labelled("x #2", &["nginx"], 1.02),
    ];
    let m = merged(runs);
    let names: Vec<&str> = m.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["x", "x #2"]);
    assert_eq!(m.series[1].runs, [2]);
    let runs = vec![
        labelled("L", &["s1", "s2"], 1.0),
        labelled("L · s1", &["nginx"], 1.1),
    ];
    let m = merged(runs);
    let names: Vec<&str> = m.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["L · s1", "L · s2", "L · s1 (b.sqlite:1)"]);
    // Each series' trials are its own run's.
    let agg = m.aggregate();
    for c in agg
        .cells
        .iter()
        .filter(|c| c.system == "L · s1 (b.sqlite:1)")
    {
        assert!(c.samples.iter().all(|s| s.run == 1), "{:?}", c.samples);
    }
}

#[test]
fn another_load_kind_recipe_or_axis_is_refused_by_name() {
    let a = labelled("A", &["nginx"], 1.0);
    let mut b = labelled("B", &["nginx"], 1.0);
    b.run.load_kind = "pg".into();
    b.run.rate_unit = scalelab_lab::catalog().rate_unit_of("pg");
    let e = merge(vec![a.clone(), b], sources(2), Pooling::ByLabel).unwrap_err();
    assert!(
        e.to_string()
            .contains("`B` ran pg load, where `A` ran http load"),
        "{e}"
    );
    let mut b = labelled("B", &["nginx"], 1.0);
    b.run.name = "pgbench".into();
    let e = merge(vec![a.clone(), b], sources(2), Pooling::ByLabel).unwrap_err();
    assert!(e.to_string().contains("another recipe: `pgbench`"), "{e}");
    let mut b = labelled("B", &["nginx"], 1.0);
    for t in &mut b.trials {
        t.point = Point::new(t.point.index, &[("server.worker_processes", 2.into())]);
    }
    let e = merge(vec![a, b], sources(2), Pooling::ByLabel).unwrap_err();
    assert!(
        e.to_string()
            .contains("`B` swept server.worker_processes, where `A` swept connections"),
        "{e}"
    );
}

#[test]
fn the_page_has_every_series_the_table_and_the_environment_columns() {
    let a_run = || labelled("Linux 6.1", &["nginx"], 1.0);
    let b_run = || {
        let mut b = labelled("Linux 6.12", &["nginx"], 1.2);
        let env = b.run.environment.as_mut().unwrap();
        env.machine
            .sysctls
            .insert("net.core.somaxconn".into(), "128".into());
        b
    };
    let c_run = || labelled("Linux 6.18", &["nginx"], 0.8);
    let page = page_of(&merged(vec![a_run(), b_run(), c_run()]));
    // One run a side: between runs nothing is claimed, whatever the
    // trials say: the % is shown with `?`, never joined by `>`.
    assert!(
        page.contains("Linux 6.12 (120%, ?), Linux 6.1 (100%), Linux 6.18 (80%, ?)"),
        "the ranking with relative %: {}",
        &page[page.find("Linux 6.12 (").unwrap_or(0)..][..200]
    );
    assert!(page.contains("1 run a side"), "the verdicts say why");
    assert!(
        page.contains("not enough runs to judge between runs"),
        "the status line says runs, not trials, are missing"
    );
    assert!(!page.contains("(p="), "no p-value from trials between runs");
    assert!(page.contains("Verdicts of Linux 6.12 against Linux 6.1"));
    assert!(page.contains("between runs: the run is the unit"));
    let first_diff = page.find(r#"<tr class="diff">"#).expect("a differing row");
    assert!(page[first_diff..].starts_with(
        r#"<tr class="diff"><td><b>sysctls.net.core.somaxconn</b></td><td>(absent)</td><td>128</td><td>(absent)</td>"#
    ));
    assert!(!page.contains("<script"));
}

/// Three repeats of one label that drift by a few percent as whole runs.
fn repeats(label: &str, scale: f64) -> Vec<RunData> {
    [1.0, 1.05, 0.96]
        .iter()
        .map(|f| labelled(label, &["nginx"], scale * f))
        .collect()
}

#[test]
fn repeats_are_one_series_with_a_between_run_band_and_a_ranking_between_runs() {
    let mut runs = repeats("FreeBSD 14", 1.0);
    runs.extend(repeats("Linux 6.1", 1.5));
    let m = merged(runs);
    assert_eq!(m.series.len(), 2);
    let agg = m.aggregate();
    let linux = agg
        .ranking
        .iter()
        .find(|r| r.system == "Linux 6.1")
        .unwrap();
    let whole = linux.whole.as_ref().unwrap();
    assert_eq!(
        whole.verdict,
        crate::analysis::compare::Verdict::Faster,
        "{whole:?}"
    );
    assert_eq!(whole.runs, Some((3, 3)));
    let page = page_of(&m);
    assert!(
        page.contains("Linux 6.1 (150%) &gt; FreeBSD 14 (100%)"),
        "{}",
        &page[page.find("Linux 6.1 (").unwrap_or(0)..][..200]
    );
    assert!(page.contains("3 v 3 runs, p"), "the test is named");
    assert!(
        page.contains("the drift between runs"),
        "the band is explained"
    );
    assert!(page.contains("Drift between runs"));
    assert!(page.contains("runs a side (median drift"));
}

#[test]
fn identical_repeats_are_never_ranked_apart() {
    let mut runs = repeats("A", 1.0);
    runs.extend(repeats("B", 1.0).into_iter().rev().map(|mut r| {
        r.run.id += 7;
        r.run.started_at += 7;
        r
    }));
    let m = merged(runs);
    let agg = m.aggregate();
    let line = crate::judging::fits::ranking_line(&agg.ranking, agg.noise);
    assert!(!line.contains('>'), "{line}");
    assert!(line.contains('≈'), "{line}");
}

#[test]
fn a_client_bound_point_is_judged_alike_on_the_page_and_in_compare() {
    // The fixture's first system has a client-bound trial at
    // connections=4000: left out. Make all of A's trials there
    // client-bound: not comparable, on the page as in compare.
    let mut a = labelled("A", &["nginx"], 1.0);
    for t in a
        .trials
        .iter_mut()
        .filter(|t| t.point.label() == "connections=4000")
    {
        t.context.set_client_bound(Some("starved".into()));
    }
    let mut b = labelled("B", &["nginx"], 1.3);
    for t in &mut b.trials {
        t.context = Default::default(); // B was never client-bound
    }
    let m = merged(vec![a.clone(), b.clone()]);
    let agg = m.aggregate();
    let at_4000 = |c: &&crate::judging::rows::Cell| c.point.label() == "connections=4000";
    let cell = agg
        .cells
        .iter()
        .filter(|c| c.system == "B")
        .find(at_4000)
        .unwrap();
    let verdict = &cell.comparison.as_ref().unwrap().verdict;
    assert_eq!(
        verdict,
        &crate::analysis::compare::Verdict::NotComparable {
            reason: "client-bound at 3 of 3 trials in A".into()
        }
    );
    let c = crate::judging::runs::compare_runs(&a, &b, 0.02);
    let p = c
        .points
        .iter()
        .find(|p| p.point == "connections=4000")
        .unwrap();
    assert!(
        p.comparison
            .sentence
            .contains("client-bound at 3 of 3 trials in run A"),
        "{}",
        p.comparison.sentence
    );
}

#[test]
fn a_run_with_no_trials_is_named_as_such() {
    // Issue 36: a run with 0 trials in `report A B` or `compare` gave
    // "`zero` swept no axis".
    let a = labelled("A", &["nginx"], 1.0);
    let mut zero = labelled("zero", &["nginx"], 1.0);
    zero.trials.clear();
    let named = format!("`zero` (run {}) has no trials", zero.run.id);
    for runs in [vec![a.clone(), zero.clone()], vec![zero, a]] {
        let e = merge(runs, sources(2), Pooling::ByLabel)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&named), "{e}");
        assert!(!e.contains("no axis"), "{e}");
    }
}
