//! History on stored-run shapes built in memory (the integration tests in
//! tests/it/history.rs run real servers).

use super::*;
use crate::report::test_support::run_data;

/// Run `i` of a history: the test run's trials scaled by `factor`, with
/// revision `r{i}`.
fn run(i: i64, factor: f64) -> SourcedRun {
    let mut data = run_data(&["nginx"]);
    data.run.id = i;
    data.run.started_at = 1_800_000_000 + i * 600;
    data.run.revision = Some(format!("r{i}"));
    for t in &mut data.trials {
        if let Some(m) = &mut t.measurement {
            m.rps *= factor;
        }
    }
    SourcedRun {
        store: "h.sqlite".into(),
        data,
    }
}

#[test]
fn a_slowdown_from_the_fifth_run_is_one_change_per_point_naming_the_revisions() {
    let runs: Vec<SourcedRun> = (1..=7)
        .map(|i| run(i, if i >= 5 { 0.7 } else { 1.0 }))
        .rev()
        .collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let order: Vec<i64> = h.runs.iter().map(|r| r.run).collect();
    assert_eq!(order, [1, 2, 3, 4, 5, 6, 7], "ordered by start time");
    assert!(!h.points.is_empty());
    for p in &h.points {
        assert_eq!(p.change_points.len(), 1, "{} {}", p.system, p.point);
        let c = &p.change_points[0];
        assert_eq!((c.before_run, c.after_run), (4, 5));
        assert!((c.ratio - 0.7).abs() < 0.01, "{c:?}");
        let rev = c.changed.iter().find(|d| d.key == "revision").unwrap();
        assert_eq!(
            (rev.before.as_deref(), rev.after.as_deref()),
            (Some("r4"), Some("r5"))
        );
    }
}

#[test]
fn five_unchanged_runs_have_no_change_point() {
    let runs: Vec<SourcedRun> = (1..=5).map(|i| run(i, 1.0)).collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    assert!(h.points.iter().all(|p| p.change_points.is_empty()));
}

#[test]
fn labels_order_numbers_as_numbers_and_other_recipes_are_left_out() {
    let mut runs: Vec<SourcedRun> = (1..=3).map(|i| run(i, 1.0)).collect();
    for (r, label) in runs.iter_mut().zip(["v10", "v9", "v1"]) {
        r.data.run.label = Some(label.into());
    }
    let mut other = run(4, 1.0);
    other.data.run.name = "another".into();
    runs.push(other);
    let h = history("nginx <scaling>", runs, Order::Label, None).unwrap();
    let labels: Vec<&str> = h.runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["v1", "v9", "v10"]);
}

#[test]
fn no_run_of_the_recipe_is_an_error_that_says_how_to_list_runs() {
    let e = history("nope", vec![run(1, 1.0)], Order::Time, None).unwrap_err();
    assert!(e.to_string().contains("scalelab --store FILE list"), "{e}");
}

#[test]
fn the_page_marks_the_change_and_escapes_labels() {
    let mut runs: Vec<SourcedRun> = (1..=6)
        .map(|i| run(i, if i >= 4 { 0.6 } else { 1.0 }))
        .collect();
    runs[0].data.run.label = Some("<script>x</script>".into());
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let page = page::render(&h, "0");
    assert!(!page.contains("<script>x"), "a label opened a tag");
    assert!(page.contains("-40.0%"), "the change is marked on the chart");
    assert!(page.contains("what changed"), "the hover says what changed");
    let text = text::render(&h);
    assert!(text.contains("change: -40.0%"), "{text}");
}
