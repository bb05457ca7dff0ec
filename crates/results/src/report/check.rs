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
