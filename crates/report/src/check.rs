//! `check`'s answer as text: the gate's outcome from
//! [`crate::judging::check`], with what it left out.

use crate::judging::check::{within_threshold, Check, Outcome};
use crate::judging::format;

/// The gate's answer as text.
pub fn render(check: &Check) -> String {
    let mut out = String::new();
    let (a, b) = check.client_bound_left_out;
    if a + b > 0 {
        out += &format!(
            "left out as client-bound (they measured the load generator): {a} baseline \
             trial(s), {b} candidate trial(s)\n"
        );
    }
    match &check.outcome {
        Outcome::Good => {
            let whole = check
                .comparison
                .geomean
                .as_ref()
                .map_or(String::new(), |g| {
                    format!(
                        "the run as a whole {} (it could have shown {} or more), ",
                        format::change(g.ratio),
                        g.detectable
                            .map_or("any change".into(), format::percent_fine)
                    )
                });
            out += &format!(
                "good: {whole}no point significantly slower by more than {:.1}% ({} point(s) \
                 checked against {} baseline runs)\n",
                check.max_regression * 100.0,
                check.comparison.points.len(),
                check.baseline_runs
            );
            for line in within_threshold(&check.comparison, check.max_regression) {
                out += &format!("  slower, but not beyond the threshold: {line}\n");
            }
        }
        Outcome::Regression { points } => {
            out += &format!(
                "regression: {} point(s) significantly slower by more than {:.1}%\n",
                points.len(),
                check.max_regression * 100.0
            );
            for p in points {
                let ci = p.ratio_ci.map_or(String::new(), |(lo, hi)| {
                    format!(
                        " (95% CI {:+.1}%..{:+.1}%)",
                        (lo - 1.0) * 100.0,
                        (hi - 1.0) * 100.0
                    )
                });
                let pv = p.p_value.map_or(String::new(), |v| {
                    format!(", {}", crate::analysis::compare::format_p(v))
                });
                out += &format!(
                    "  {} {}: {:+.1}%{ci}{pv}\n",
                    p.system,
                    p.point,
                    (p.ratio - 1.0) * 100.0
                );
            }
        }
        Outcome::CannotSay { reasons } => {
            out += "cannot say (exit 125, `git bisect run` skips this revision):\n";
            for r in reasons {
                out += &format!("  {r}\n");
            }
        }
    }
    out
}

/// `check --on COUNT`'s text: each point's count per request on both
/// sides, the rises beyond the threshold, and the outcome.
pub fn render_work(c: &crate::judging::check_work::WorkCheck) -> String {
    use crate::judging::check::{CANNOT_SAY, REGRESSION};
    if let Some(why) = &c.cannot_say {
        return format!("cannot say: {why}\n");
    }
    let mut out = String::new();
    for p in &c.points {
        let mark = if p.regressed { "  REGRESSION" } else { "" };
        out += &format!("{} {}: {}{mark}\n", p.system, p.point, p.count.describe());
    }
    let unit = match c.points.first().map(|p| p.unit) {
        Some(crate::judging::work_change::Unit::Runs) => "each run's median",
        _ => "the trials",
    };
    out += &match c.exit_code {
        REGRESSION => format!(
            "regression: {} per request rose beyond {:.1}% at {} point(s) (the whole 95% interval; {unit} compared)\n",
            c.points[0].count.figure,
            c.max_regression * 100.0,
            c.points.iter().filter(|p| p.regressed).count()
        ),
        CANNOT_SAY => "cannot say\n".to_string(),
        _ => format!(
            "good: no point's {} per request rose beyond {:.1}% ({unit} compared)\n",
            c.points.first().map_or("count", |p| p.count.figure.as_str()),
            c.max_regression * 100.0
        ),
    };
    out
}

/// The gate's answer as text: one line per curve, then the verdict.
pub fn render_shape(c: &crate::judging::check_shape::ShapeCheck) -> String {
    let mut out = String::new();
    for k in &c.curves {
        out += &format!(
            "{} over {}: {} {:.4} against the baselines' {} (×{:.3}, 95% prediction interval \
             {:.3}-{:.3}){}\n",
            k.system,
            k.axis,
            c.on,
            k.candidate,
            k.baseline
                .iter()
                .map(|v| format!("{v:.4}"))
                .collect::<Vec<_>>()
                .join(", "),
            k.ratio,
            k.interval.0,
            k.interval.1,
            if k.regressed { ": a regression" } else { "" }
        );
    }
    out += &match (c.exit_code, &c.cannot_say) {
        (_, Some(why)) => format!("cannot say: {why}\n"),
        (crate::judging::check::REGRESSION, _) => format!(
            "regression: {} moved the worse way beyond {:.0}%\n",
            c.on,
            c.max_regression * 100.0
        ),
        _ => format!(
            "good: no curve's {} moved the worse way beyond {:.0}%\n",
            c.on,
            c.max_regression * 100.0
        ),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::Verdict;
    use crate::judging::check::*;
    use crate::judging::test_support::run_data;
    use crate::store::RunData;

    /// A run of the fixture with every throughput scaled by `f`, as run
    /// `id` started `id` minutes in.
    fn scaled(base: &RunData, id: i64, f: f64) -> RunData {
        let mut r = base.clone();
        r.run.id = id;
        r.run.started_at = base.run.started_at + 60 * id;
        for t in &mut r.trials {
            if let Some(m) = &mut t.measurement {
                m.rps.0 *= f;
            }
        }
        r
    }

    /// Three baseline runs that drift by a few percent, as repeats do.
    fn baselines(base: &RunData) -> Vec<RunData> {
        vec![
            scaled(base, 1, 1.0),
            scaled(base, 2, 1.04),
            scaled(base, 3, 0.97),
        ]
    }

    #[test]
    fn a_run_checked_against_itself_is_cannot_say_not_good() {
        let run = run_data(&["nginx"]);
        let c = check(std::slice::from_ref(&run), &run, 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY, "{:?}", c.outcome);
        assert!(
            render(&c).contains("the candidate itself"),
            "{}",
            render(&c)
        );
    }

    #[test]
    fn one_baseline_run_cannot_say_whatever_the_candidate() {
        let base = run_data(&["nginx"]);
        // Even a halving: one run's drift between runs is unknown.
        let c = check(std::slice::from_ref(&base), &scaled(&base, 9, 0.5), 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
        assert!(
            render(&c).contains("one baseline run: its drift between runs is unknown"),
            "{}",
            render(&c)
        );
        let two = check(&baselines(&base)[..2], &scaled(&base, 9, 0.5), 0.05);
        assert_eq!(two.exit_code, CANNOT_SAY, "{}", render(&two));
    }

    #[test]
    fn a_candidate_outside_the_baselines_prediction_interval_is_a_regression() {
        let base = run_data(&["nginx"]);
        let c = check(&baselines(&base), &scaled(&base, 9, 0.6), 0.05);
        assert_eq!(c.exit_code, REGRESSION, "{}", render(&c));
        let Outcome::Regression { points } = &c.outcome else {
            panic!("{:?}", c.outcome)
        };
        assert_eq!(points[0].point, "geomean", "{points:?}");
        assert!((points[0].ratio - 0.6 / (1.04f64 * 0.97).powf(1.0 / 3.0)).abs() < 1e-9);
        assert_eq!(c.comparison.geomean.as_ref().unwrap().runs, Some((3, 1)));
    }

    #[test]
    fn a_candidate_inside_the_drift_is_never_a_regression() {
        let base = run_data(&["nginx"]);
        for f in [0.95, 0.98, 1.0, 1.03] {
            let c = check(&baselines(&base), &scaled(&base, 9, f), 0.05);
            assert_ne!(c.exit_code, REGRESSION, "{f}: {}", render(&c));
        }
        // With a threshold the baseline can see, an unchanged candidate is good.
        let c = check(&baselines(&base), &scaled(&base, 9, 1.0), 0.3);
        assert_eq!(c.exit_code, GOOD, "{}", render(&c));
        assert!(
            render(&c).contains("good: the run as a whole"),
            "{}",
            render(&c)
        );
    }

    #[test]
    fn a_baseline_too_noisy_to_see_the_threshold_cannot_say() {
        let base = run_data(&["nginx"]);
        let noisy = vec![
            scaled(&base, 1, 1.0),
            scaled(&base, 2, 1.3),
            scaled(&base, 3, 0.75),
        ];
        let c = check(&noisy, &scaled(&base, 9, 0.97), 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
        assert!(
            render(&c).contains("could only tell apart a change of"),
            "{}",
            render(&c)
        );
        // Runs ±30% apart: no count of baseline runs narrows one
        // candidate run's interval to 5%, and the output says what would.
        assert!(
            render(&c).contains("no number of baseline runs would resolve 5.0%")
                && render(&c).contains("repeat the candidate too"),
            "{}",
            render(&c)
        );
        // Runs 1.2% apart: more baseline runs would do it, and it says how many.
        let drifting = vec![
            scaled(&base, 1, 1.0),
            scaled(&base, 2, 1.012),
            scaled(&base, 3, 0.988),
        ];
        let c = check(&drifting, &scaled(&base, 9, 0.99), 0.05);
        assert!(render(&c).contains("more baseline runs,"), "{}", render(&c));
    }

    #[test]
    fn a_baseline_with_no_usable_trial_checks_nothing_and_cannot_say() {
        // Issue 36: "good: ... (0 point(s) checked)" and exit 0 made every
        // commit good under `git bisect run`.
        let mut cand = run_data(&["nginx"]);
        cand.run.id += 1;
        cand.run.started_at += 600;
        let mut all_bound = run_data(&["nginx"]);
        for t in &mut all_bound.trials {
            t.context
                .set_client_bound(Some("the client was at 100% CPU".into()));
        }
        let mut empty = run_data(&["nginx"]);
        empty.trials.clear();
        for base in [all_bound, empty] {
            let c = check(&[base], &cand, 0.05);
            assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
            assert!(render(&c).contains("nothing checked"), "{}", render(&c));
        }
    }

    #[test]
    fn client_bound_trials_are_left_out_not_the_whole_point() {
        // run_data has one client-bound trial (system 0, point 4, trial 3).
        let base = run_data(&["nginx"]);
        assert!(base
            .trials
            .iter()
            .any(|t| t.context.client_bound_why().is_some()));
        let c = check(&baselines(&base), &scaled(&base, 9, 1.0), 0.05);
        assert_eq!(c.client_bound_left_out, (3, 1));
        assert!(
            c.comparison
                .points
                .iter()
                .all(|p| !matches!(p.comparison.verdict, Verdict::NotComparable { .. })),
            "{}",
            render(&c)
        );
        assert!(render(&c).contains("left out as client-bound"));
    }

    #[test]
    fn nothing_checked_is_cannot_say_never_good() {
        let base = run_data(&["nginx"]);
        let mut bound = baselines(&base);
        for r in &mut bound {
            for t in &mut r.trials {
                t.context.set_client_bound(Some("starved".into()));
            }
        }
        let c = check(&bound, &scaled(&base, 9, 1.0), 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
    }

    #[test]
    fn a_slower_candidate_disturbed_by_background_load_is_rerun_not_blamed() {
        let base = run_data(&["nginx"]);
        let mut cand = scaled(&base, 9, 0.6);
        let noisy = crate::record::probe::background::measure(
            crate::record::probe::background::BackgroundInputs {
                busy_share: 1.0,
                steal_share: 0.0,
                window_s: 1.0,
                online_cpus: 2,
                server_cpu_s: Some(0.5),
                own_cpu_s: 0.5,
            },
        );
        for t in &mut cand.trials {
            t.probe = Some(crate::record::probe::ProbeSummary {
                background: noisy,
                ..Default::default()
            });
        }
        let c = check(&baselines(&base), &cand, 0.05);
        assert_eq!(c.exit_code, CANNOT_SAY, "{}", render(&c));
        assert!(
            render(&c).contains("ran beside background load"),
            "{}",
            render(&c)
        );
    }
}
