//! One point, one mark: a point whose candidate trials are all
//! client-bound, or whose candidate erred past the errors rule, gets the
//! same mark and reason in every view that judges it: `run` and `report`
//! (the engine on one run's cells), `compare` and the N-run page (both
//! [`super::runs::compare_sides`]), `check` (its reasons) and `history`
//! (the run left out of the series).
//!
//! A point whose candidate trials all ran beside background load is the
//! one place two named rules differ by design ([`super::judge::BackgroundRule`]):
//! `compare` and the N-run page leave that run out; `check` keeps its one
//! candidate run and refuses only to blame it for a slowdown, and
//! `history` keeps it in the series, marked, since a build's only run
//! cannot be dropped from a history
//! (`judge::tests::checks_background_rule_blames_no_disturbed_candidate_and_counts_kept_trials`,
//! `history::tests::a_run_disturbed_at_every_trial_is_kept_in_the_series_and_marked`).

use super::analyse::aggregate;
use super::judge::{excluded, Rules};
use super::test_support::run_data;
use crate::analysis::compare::Verdict;
use crate::analysis::summary::Headline;
use crate::store::RunData;

/// Three baseline runs and one candidate, all of one recipe, with
/// `spoil` applied to the candidate's trials at the first point.
fn runs(spoil: impl Fn(&mut crate::store::Trial)) -> (Vec<RunData>, RunData) {
    let run = |id: i64| {
        let mut d = run_data(&["a"]);
        d.run.id = id;
        d.run.started_at = 1_800_000_000 + id * 600;
        for t in &mut d.trials {
            t.run_id = id;
        }
        d
    };
    let mut cand = run(4);
    for t in cand.trials.iter_mut().filter(|t| t.point.index == 0) {
        spoil(t);
    }
    ((1..=3).map(run).collect(), cand)
}

/// The reason each view gives for system `a` at the first point.
fn marks(base: &[RunData], cand: &RunData) -> Vec<(&'static str, Option<String>)> {
    let agg = aggregate(cand);
    let cell = agg.cells.iter().find(|c| c.point.index == 0).unwrap();
    let run_view = excluded(cell);
    let rules = Rules::symmetric(Headline::Median, cand.run.noise);
    let compared = super::runs::compare_sides(base, std::slice::from_ref(cand), &rules);
    let point = &compared.points[0];
    let compare_view = match &point.comparison.verdict {
        Verdict::NotComparable { reason } => Some(reason.clone()),
        _ => None,
    };
    let checked = super::check::check(base, cand, 0.05);
    let prefix = format!("{} {}: ", point.system, point.point);
    let check_view = match &checked.outcome {
        super::check::Outcome::CannotSay { reasons } => reasons
            .iter()
            .find_map(|r| r.strip_prefix(&prefix).map(str::to_string)),
        _ => None,
    };
    let sources: Vec<super::history::SourcedRun> = (base.iter().chain([cand]))
        .map(|d| super::history::SourcedRun {
            store: "s.sqlite".into(),
            data: d.clone(),
        })
        .collect();
    let h = super::history::history(&cand.run.name, sources, super::history::Order::Time, None)
        .unwrap();
    let hp = h.points.iter().find(|p| p.point == point.point).unwrap();
    let history_view = hp
        .left_out
        .iter()
        .find(|l| l.position == 3)
        .map(|l| l.reason.clone());
    vec![
        ("run", run_view),
        ("compare and the N-run page", compare_view),
        ("check", check_view),
        ("history", history_view),
    ]
}

fn assert_one_mark(marks: &[(&str, Option<String>)], want: &str) {
    let first = marks[0].1.clone().expect("the run view marks the point");
    assert!(first.contains(want), "{first}");
    for (view, mark) in marks {
        let mark = mark.as_deref().unwrap_or("(no mark)");
        assert!(
            mark.contains(&first),
            "{view}: {mark}, where run says {first}"
        );
    }
}

#[test]
fn a_client_bound_point_has_one_mark_in_every_view() {
    let (base, cand) = runs(|t| t.context.set_client_bound(Some("client CPU 99%".into())));
    assert_one_mark(&marks(&base, &cand), "client-bound at 3 of 3 trials");
}

#[test]
fn an_erring_point_has_one_mark_in_every_view() {
    let (base, cand) = runs(|t| {
        if let Some(m) = &mut t.measurement {
            m.errors.timeout = m.requests;
        }
    });
    assert_one_mark(&marks(&base, &cand), "errors");
}

#[test]
fn a_clean_candidate_is_marked_nowhere() {
    let (base, cand) = runs(|_| {});
    for (view, mark) in marks(&base, &cand) {
        assert_eq!(mark, None, "{view}");
    }
}
