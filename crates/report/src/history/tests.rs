//! History on stored-run shapes built in memory (the integration tests in
//! tests/it/history.rs run real servers).

use super::{page, text};
use crate::judging::history::*;
use crate::judging::test_support::run_data;

/// Run `i` of a history: the test run's trials scaled by `factor`, with
/// revision `r{i}`.
fn run(i: i64, factor: f64) -> SourcedRun {
    let mut data = run_data(&["nginx"]);
    data.run.id = i;
    data.run.started_at = 1_800_000_000 + i * 600;
    data.run.revision = Some(format!("r{i}"));
    for t in &mut data.trials {
        if let Some(m) = &mut t.measurement {
            m.rps.0 *= factor;
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
        r.data.run.label = label.into();
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
    runs[0].data.run.label = "<script>x</script>".into();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let page = page::render(&h, "0");
    assert!(!page.contains("<script>x"), "a label opened a tag");
    assert!(
        page.contains(">-40.0% (3→4)</text>"),
        "the change is marked on the chart, between runs 3 and 4"
    );
    assert!(!page.contains("(3.5)"), "no half-run position in the mark");
    assert!(page.contains("what changed"), "the hover says what changed");
    let text = text::render(&h);
    assert!(text.contains("change: -40.0%"), "{text}");
}

/// Run `i` of `store`, scaled by `factor`, started `i` ten minutes after
/// `t0`.
fn run_in(store: &str, i: i64, t0: i64, factor: f64) -> SourcedRun {
    let mut r = run(i, factor);
    r.store = store.into();
    r.data.run.started_at = t0 + i * 600;
    r
}

#[test]
fn a_run_lacking_the_point_before_the_change_leaves_the_change_shown_between_its_runs() {
    // Three runs on each side of the change once run 5 drops out.
    let mut runs: Vec<SourcedRun> = (1..=8)
        .map(|i| run(i, if i >= 5 { 0.6 } else { 1.0 }))
        .collect();
    // Run 5 measured nothing at the first point.
    let first = runs[4].data.trials[0].point.label();
    runs[4].data.trials.retain(|t| t.point.label() != first);
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let p = h.points.iter().find(|p| p.point == first).unwrap();
    assert_eq!(p.values.len(), 7, "run 5 lacks the point");
    let c = &p.change_points[0];
    assert_eq!((c.before_run, c.after_run), (4, 6));
    assert_eq!((c.before_position, c.after_position), (3, 5));
    let text = text::render(&h);
    let changes = text.matches("change: -40.0%").count();
    assert_eq!(changes, h.points.len(), "one change line per point: {text}");
    let page = page::render(&h, "0");
    assert_eq!(page.matches("change -40.0% here").count(), h.points.len());
    assert!(
        page.contains(">-40.0% (4→6)</text>"),
        "marked between runs 4 and 6"
    );
}

#[test]
fn runs_of_two_stores_with_equal_ids_are_distinct_runs() {
    // Store a: runs 1-4; store b, started later: runs 1-3, slower.
    let mut runs: Vec<SourcedRun> = (1..=4)
        .map(|i| run_in("a.sqlite", i, 1_800_000_000, 1.0))
        .collect();
    runs.extend((1..=3).map(|i| run_in("b.sqlite", i, 1_900_000_000, 0.6)));
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    assert_eq!(h.runs.len(), 7);
    for p in &h.points {
        assert_eq!(p.change_points.len(), 1, "{p:?}");
        let c = &p.change_points[0];
        assert_eq!(
            (
                c.before_store.as_str(),
                c.before_run,
                c.after_store.as_str(),
                c.after_run
            ),
            ("a.sqlite", 4, "b.sqlite", 1)
        );
        assert_eq!((c.before_position, c.after_position), (3, 4));
    }
    let text = text::render(&h);
    assert_eq!(
        text.matches("change: -40.0%").count(),
        h.points.len(),
        "{text}"
    );
}

#[test]
fn a_store_named_twice_counts_its_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("h.sqlite");
    std::fs::write(&store, "").unwrap();
    let again = dir.path().join(".").join("h.sqlite");
    let mut runs: Vec<SourcedRun> = (1..=5)
        .map(|i| run_in(store.to_str().unwrap(), i, 1_800_000_000, 1.0))
        .collect();
    // The same five runs by another spelling, and run 3 once more.
    runs.extend((1..=5).map(|i| run_in(again.to_str().unwrap(), i, 1_800_000_000, 1.0)));
    runs.push(run_in(store.to_str().unwrap(), 3, 1_800_000_000, 1.0));
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let ids: Vec<i64> = h.runs.iter().map(|r| r.run).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
}

#[test]
fn repeats_of_one_build_are_never_split_and_one_label_everywhere_groups_nothing() {
    // Builds v1 (runs 1-3) and v2 (runs 4-7, `run --repeat`): the slowdown
    // starts at run 5, inside v2's repeats, so no change can be named
    // there; at run 4 it is not big enough on v2's side to be one.
    let labelled = |i: i64, label: &str, factor: f64| {
        let mut r = run(i, factor);
        r.data.run.label = label.into();
        r.data.run.revision = None;
        r
    };
    let runs: Vec<SourcedRun> = (1..=7)
        .map(|i| {
            let label = if i <= 3 { "v1" } else { "v2" };
            labelled(i, label, if i >= 5 { 0.7 } else { 1.0 })
        })
        .collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    for p in &h.points {
        assert!(
            p.change_points.iter().all(|c| c.after_run != 5),
            "a change inside v2's repeats: {p:?}"
        );
    }
    // The same runs all labelled alike (no --label on one machine): every
    // run is its own, and the step at run 5 is found.
    let same: Vec<SourcedRun> = (1..=7)
        .map(|i| labelled(i, "Linux 6.1", if i >= 5 { 0.7 } else { 1.0 }))
        .collect();
    let h = history("nginx <scaling>", same, Order::Time, None).unwrap();
    for p in &h.points {
        assert_eq!(p.change_points.len(), 1, "{p:?}");
        assert_eq!(p.change_points[0].after_run, 5);
    }
}

#[test]
fn a_store_and_its_copy_count_their_runs_once() {
    // Issue 36: `history` given a store and its copy counted every run twice
    // (`check` already treats a copy as the same run).
    let mut runs: Vec<SourcedRun> = (1..=5)
        .map(|i| run_in("a.sqlite", i, 1_800_000_000, 1.0))
        .collect();
    runs.extend((1..=5).map(|i| run_in("copy-of-a.sqlite", i, 1_800_000_000, 1.0)));
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let ids: Vec<(i64, &str)> = h.runs.iter().map(|r| (r.run, r.store.as_str())).collect();
    assert_eq!(ids, (1..=5).map(|i| (i, "a.sqlite")).collect::<Vec<_>>());
}

/// The engine's rules, not history's own: runs 5 to 7 are slower (0.7),
/// but their trials were client-bound, so every verdict leaves them out,
/// and so does the history: they are listed as left out with the reason
/// every view gives, and no change point rests on them.
#[test]
fn client_bound_runs_are_left_out_of_the_series_as_every_verdict_leaves_them() {
    let runs: Vec<SourcedRun> = (1..=7)
        .map(|i| {
            let mut r = run(i, if i >= 5 { 0.7 } else { 1.0 });
            if i >= 5 {
                for t in &mut r.data.trials {
                    t.context.set_client_bound(Some("client CPU 99%".into()));
                }
            }
            r
        })
        .collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    assert!(!h.points.is_empty());
    for p in &h.points {
        assert!(p.change_points.is_empty(), "{p:?}");
        let kept: Vec<usize> = p.values.iter().map(|v| v.position).collect();
        assert_eq!(kept, [0, 1, 2, 3], "{p:?}");
        let left: Vec<usize> = p.left_out.iter().map(|l| l.position).collect();
        assert_eq!(left, [4, 5, 6]);
        assert!(
            p.left_out[0].reason.starts_with("client-bound at "),
            "{p:?}"
        );
    }
    let text = text::render(&h);
    assert!(text.contains("left out: client-bound at "), "{text}");
    let page = page::render(&h, "test");
    assert!(page.contains(") left out: client-bound at "), "{page}");
}

/// A run whose every trial at a point ran beside background load stays in
/// the series (a build's only run cannot be dropped from a history, as
/// `check` keeps its candidate) and is marked.
#[test]
fn a_run_disturbed_at_every_trial_is_kept_in_the_series_and_marked() {
    let mut runs: Vec<SourcedRun> = (1..=4).map(|i| run(i, 1.0)).collect();
    for t in &mut runs[3].data.trials {
        if let Some(p) = &mut t.probe {
            p.background = Some(crate::record::probe::background::Background {
                noisy: true,
                ..Default::default()
            });
        }
    }
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    for p in &h.points {
        assert!(p.left_out.is_empty(), "{p:?}");
        let marked: Vec<bool> = p.values.iter().map(|v| v.disturbed).collect();
        assert_eq!(marked, [false, false, false, true], "{p:?}");
    }
    let text = text::render(&h);
    assert!(
        text.contains("(every trial beside background load)"),
        "{text}"
    );
    let page = page::render(&h, "test");
    assert!(
        page.contains("every trial beside background load"),
        "{page}"
    );
}

/// Counted runs whose server writes once more per request from the fifth
/// on (nginx's access log): the change point says so beside the slowdown.
#[test]
fn a_change_point_names_the_work_per_request_that_changed() {
    use crate::record::probe::work::{NamedCount, WorkCounts};
    let runs: Vec<SourcedRun> = (1..=7)
        .map(|i| {
            let mut r = run(i, if i >= 5 { 0.8 } else { 1.0 });
            let writes_per_request = if i >= 5 { 1 } else { 0 };
            for (k, t) in r.data.trials.iter_mut().enumerate() {
                let Some(requests) = t.measurement.as_ref().map(|m| m.requests) else {
                    continue;
                };
                // Two calls a request, and a jitter of a few calls a trial.
                let jitter = k as u64 % 3;
                let writes = requests * writes_per_request;
                if let Some(p) = t.probe.as_mut() {
                    p.work = Some(WorkCounts {
                        syscalls: Some(2 * requests + writes + jitter),
                        top_syscalls: vec![NamedCount {
                            name: "write".into(),
                            count: writes,
                        }],
                        ..WorkCounts::default()
                    });
                }
            }
            r
        })
        .collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let c = &h.points[0].change_points[0];
    let work = c.work.as_deref().expect("the runs were counted");
    assert!(work.contains("+1.00 write(2) per request"), "{work}");
    assert!(text::change(c).contains("+1.00 write(2) per request"));
}

/// The folded stacks of a real nginx profile trial (`tests/fixtures/flames/`),
/// its `# source:` lines left out.
fn folded_fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/flames/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# source: "), "{name} names no source");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The frames of an inferno SVG: name and width (percent).
fn frames(svg: &str) -> Vec<(String, f64)> {
    svg.split("<g><title>")
        .skip(1)
        .filter_map(|g| {
            let (title, rest) = g.split_once("</title>")?;
            let (_, w) = rest.split_once("width=\"")?;
            let width = w.split_once('"')?.0.trim_end_matches('%').parse().ok()?;
            Some((title.split(" (").next()?.to_string(), width))
        })
        .collect()
}

/// Seven runs of one nginx, the access log turned on from the fifth, each
/// with its real profile: at the change point, the page draws the graph
/// between runs 4 and 5, and its widest frame that run 4's stacks never
/// name is the access log's write.
#[test]
fn the_change_points_flame_graph_shows_the_access_logs_write_widest_new() {
    use base64::Engine;
    let (off, on) = (
        folded_fixture("nginx-access-log-off.folded"),
        folded_fixture("nginx-access-log-on.folded"),
    );
    let runs: Vec<SourcedRun> = (1..=7)
        .map(|i| {
            let mut r = run(i, if i >= 5 { 0.85 } else { 1.0 });
            let point = r.data.trials[0].point.clone();
            r.data.profiles = vec![crate::store::ProfileRecord {
                system: "nginx".into(),
                point,
                role: "peak".into(),
                samples: 400,
                folded: Some(if i >= 5 { on.clone() } else { off.clone() }),
                plain_rps: None,
                profiled_rps: None,
                error: None,
                offcpu: None,
                offcpu_error: None,
            }];
            r
        })
        .collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    let c = &h.points[0].change_points[0];
    assert_eq!((c.before_position, c.after_position), (3, 4));
    let html = page::render(&h, "test");
    assert_eq!(
        html.matches("<h3>Between run 4").count(),
        1,
        "one section per pair of runs, however many points changed"
    );
    let (_, rest) = html
        .split_once("title=\"on-CPU: run 5 (")
        .expect("the graph between the runs on either side of the change");
    let (_, rest) = rest.split_once("base64,").unwrap();
    let svg = base64::engine::general_purpose::STANDARD
        .decode(rest.split_once('"').unwrap().0)
        .unwrap();
    let svg = String::from_utf8(svg).unwrap();
    let known: std::collections::HashSet<&str> = (off.lines())
        .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s))
        .flat_map(|s| s.split(';').map(|x| x.trim_end_matches("_[k]")))
        .collect();
    let widest_new = frames(&svg)
        .into_iter()
        .filter(|(name, _)| name != "all" && !known.contains(name.as_str()))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("a frame run 4 lacks");
    assert!(widest_new.0.contains("write"), "{widest_new:?}");
    let mut unprofiled = h.clone();
    unprofiled.runs.iter_mut().for_each(|r| r.profiles.clear());
    assert!(!page::render(&unprofiled, "test").contains("Profiles at the change points"));
}

/// Run `i` of a history whose curve follows the USL over 8 levels of
/// connections with σ = 0.02 and `kappa`, λ set so that the fitted peak is
/// 20,000/s whatever κ is: κ moves the knee and leaves the peak's height.
/// Three trials a point, 1% apart, and the runs 0.3% apart.
fn curve_run(i: i64, kappa: f64) -> SourcedRun {
    let mut data = run_data(&["nginx"]);
    data.run.id = i;
    data.run.started_at = 1_800_000_000 + i * 600;
    data.run.label = format!("v{i}");
    let template = data.trials[0].clone();
    let sigma = 0.02;
    let x = |n: f64| n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    let lambda = 20_000.0 / x(((1.0 - sigma) / kappa).sqrt());
    data.trials = Vec::new();
    for (pi, n) in [1u32, 2, 4, 8, 16, 32, 64, 128].into_iter().enumerate() {
        for trial in 1..=3u32 {
            let wobble = 1.0 + 0.01 * (f64::from(trial) - 2.0) + 0.003 * (i % 3) as f64;
            let rps = lambda * x(f64::from(n)) * wobble;
            let mut t = template.clone();
            t.id = data.trials.len() as i64 + 1;
            t.point = crate::model::Point::new(pi as u32, &[("connections", i64::from(n).into())]);
            t.trial = trial;
            let m = t.measurement.as_mut().unwrap();
            m.rps.0 = rps;
            m.requests = (rps * 10.0) as u64;
            data.trials.push(t);
        }
    }
    SourcedRun {
        store: "h.sqlite".into(),
        data,
    }
}

/// Issue 51: four runs with the knee at N* ≈ 44 connections, four with it
/// at ≈ 11, the peak's height the same. `history` names the knee's move at
/// the fifth run and no change of the peak, and `check --on n_star` calls
/// the fifth run a regression against the four before it, and one of the
/// four good against the other three.
#[test]
fn a_knee_that_moved_is_named_by_history_and_gated_by_check_on_n_star() {
    use crate::judging::check_shape;
    use crate::judging::history::shape::Property;
    let runs: Vec<SourcedRun> = (1..=8)
        .map(|i| curve_run(i, if i >= 5 { 0.008 } else { 0.0005 }))
        .collect();
    let data: Vec<_> = runs.iter().map(|r| r.data.clone()).collect();
    let h = history("nginx <scaling>", runs, Order::Time, None).unwrap();
    assert_eq!(h.curves.len(), 1, "{:?}", h.curves);
    let c = &h.curves[0];
    assert_eq!(c.runs.len(), 8);
    assert!(
        c.runs.iter().all(|r| r.get(Property::NStar).is_some()),
        "{c:?}"
    );
    assert_eq!(c.sentences.len(), 1, "{:?}", c.sentences);
    assert!(
        c.sentences[0].starts_with("at v5: N* fell from 44.3 to 11.1 connections"),
        "{}",
        c.sentences[0]
    );
    assert!(
        !c.changes.iter().any(|k| k.property == Property::Peak),
        "the peak stayed: {:?}",
        c.changes
    );
    assert!(
        text::render(&h).contains("at v5: N* fell"),
        "{}",
        text::render(&h)
    );
    let moved = check_shape::check(&data[..4], &data[4], Property::NStar, 0.05);
    assert_eq!(moved.exit_code, 1, "{moved:?}");
    let same = check_shape::check(
        &[data[0].clone(), data[1].clone(), data[3].clone()],
        &data[2],
        Property::NStar,
        0.05,
    );
    assert_eq!(same.exit_code, 0, "{same:?}");
    let peak = check_shape::check(&data[..4], &data[4], Property::Peak, 0.05);
    assert_eq!(
        peak.exit_code, 0,
        "the peak's height did not fall: {peak:?}"
    );
}
