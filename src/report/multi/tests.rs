//! Merging runs: series names, the union of points, refusals, the page.

use super::*;
use crate::report::test_support::run_data;

fn labelled(label: &str, systems: &[&str], scale: f64) -> RunData {
    let mut d = run_data(systems);
    d.run.label = label.into();
    for t in &mut d.trials {
        if let Some(m) = &mut t.measurement {
            m.rps *= scale;
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
    let m = merge(vec![a, b, c]).unwrap();
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
    let agg = crate::report::analyse::aggregate(&m.data);
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

#[test]
fn equal_labels_get_their_position() {
    let runs = vec![
        labelled("Linux 6.1", &["nginx"], 1.0),
        labelled("Linux 6.1", &["nginx"], 1.0),
        labelled("other", &["nginx"], 1.0),
    ];
    assert_eq!(
        unique_names(&runs),
        ["Linux 6.1 #1", "Linux 6.1 #2", "other"]
    );
}

#[test]
fn another_load_kind_recipe_or_axis_is_refused_by_name() {
    let a = labelled("A", &["nginx"], 1.0);
    let mut b = labelled("B", &["nginx"], 1.0);
    b.run.load_kind = "pg".into();
    let e = merge(vec![a.clone(), b]).unwrap_err();
    assert!(
        e.to_string()
            .contains("`B` ran pg load, where `A` ran http load"),
        "{e}"
    );
    let mut b = labelled("B", &["nginx"], 1.0);
    b.run.name = "pgbench".into();
    let e = merge(vec![a.clone(), b]).unwrap_err();
    assert!(e.to_string().contains("another recipe: `pgbench`"), "{e}");
    let mut b = labelled("B", &["nginx"], 1.0);
    for t in &mut b.trials {
        t.point = Point::new(t.point.index, &[("server.worker_processes", 2.into())]);
    }
    let e = merge(vec![a, b]).unwrap_err();
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
    let m = merge(vec![a_run(), b_run(), c_run()]).unwrap();
    let sources = [
        "a.sqlite:1".to_string(),
        "b.sqlite:1".into(),
        "c.sqlite:1".into(),
    ];
    let page = page::render(&m, &sources);
    // Three trials a side: Welch's t tells ±20% apart at this spread.
    assert!(
        page.contains("Linux 6.12 (120%) &gt; Linux 6.1 (100%) &gt; Linux 6.18 (80%)"),
        "the ranking with relative %: {}",
        &page[page.find("Linux 6.12 (").unwrap_or(0)..][..200]
    );
    // Two a side: the % is shown, marked as too few to judge, and no ">"
    // is claimed between series that cannot be told apart.
    let two = |mut d: RunData| {
        d.trials.retain(|t| t.trial <= 2);
        d
    };
    let few = merge(vec![two(a_run()), two(b_run()), two(c_run())]).unwrap();
    let few_page = page::render(&few, &sources);
    assert!(
        few_page.contains("Linux 6.12 (120%, ?), Linux 6.1 (100%), Linux 6.18 (80%, ?)"),
        "{}",
        &few_page[few_page.find("Linux 6.12 (").unwrap_or(0)..][..200]
    );
    assert!(page.contains("Verdicts against Linux 6.1"));
    assert!(page.contains("between runs: each p-value counts the spread of trials inside a run"));
    let first_diff = page.find(r#"<tr class="diff">"#).expect("a differing row");
    assert!(page[first_diff..].starts_with(
        r#"<tr class="diff"><td><b>sysctls.net.core.somaxconn</b></td><td>(absent)</td><td>128</td><td>(absent)</td>"#
    ));
    assert!(!page.contains("<script"));
}

#[test]
fn a_client_bound_point_is_not_comparable_on_the_page_and_in_compare() {
    // The fixture's first system has a client-bound trial at connections=4000.
    let a = labelled("A", &["nginx"], 1.0);
    let mut b = labelled("B", &["nginx"], 1.3);
    for t in &mut b.trials {
        t.context = Default::default(); // B was never client-bound
    }
    let m = merge(vec![a.clone(), b.clone()]).unwrap();
    let agg = m.aggregate();
    let at_4000 = |c: &&crate::report::rows::Cell| c.point.label() == "connections=4000";
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
            reason: "client-bound at 1 of 3 trials in A".into()
        }
    );
    let c = crate::report::runs::compare_runs(&a, &b, 0.02);
    let p = c
        .points
        .iter()
        .find(|p| p.point == "connections=4000")
        .unwrap();
    assert!(
        p.comparison
            .sentence
            .contains("client-bound at 1 of 3 trials in run A"),
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
    for runs in [vec![a.clone(), zero.clone()], vec![zero, a]] {
        let e = merge(runs).unwrap_err().to_string();
        assert!(e.contains("`zero` (run 7) has no trials"), "{e}");
        assert!(!e.contains("no axis"), "{e}");
    }
}
