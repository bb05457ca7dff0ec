//! The short, benchstat-style form of a comparison.

use super::format;
use crate::analysis::compare::{Comparison, Test, Verdict};

/// Which way a verdict points, for colouring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// A significant change in the good direction (more throughput).
    Better,
    /// A significant change in the bad direction, or a side excluded as
    /// not comparable.
    Worse,
    /// No significant difference (the `~` mark).
    Same,
    /// Too few trials to judge (the `?` mark).
    Unknown,
}

/// The mark of "no significant difference" (benchstat's).
pub const SAME: char = '~';
/// The mark of "too few trials to judge": never `~`, which claims there is
/// no difference.
pub const TOO_FEW: char = '?';
/// The mark of "not comparable": errors above the threshold on one side,
/// a load generator that fell behind ([`super::comparable`]), or every
/// trial of a side client-bound ([`super::judge::excluded`]).
pub const EXCLUDED: char = '✗';

/// What each mark means, printed under the tables that use it.
/// `noise` is the run's noise floor (0.02 = 2%); `kinds` the clauses the
/// trials' load kinds add to the not-comparable rule
/// ([`RunData::kind_legend`](crate::store::RunData::kind_legend)).
pub fn legend_items(noise: f64, kinds: &str) -> [(char, String); 3] {
    [
        (
            SAME,
            format!(
                "no difference claimed: p ≥ 0.05 (by Mann-Whitney, or by Welch's t on all trials where 3 a side are too few for it; between runs, by Student's t on the runs' log headlines), or the 95% interval of the change reaches inside the {} noise floor (a change is claimed only when its whole interval lies beyond ±{}: \"within the floor: CI …\" shows the interval that did not clear it)",
                format::percent_fine(noise),
                format::percent_fine(noise)
            ),
        ),
        (
            TOO_FEW,
            format!(
                "too few trials, or between runs too few runs (≥{} a side: the runs, not \
                 their trials, are the samples), to judge: the change is shown, nothing is claimed",
                crate::analysis::between::MIN_RUNS
            ),
        ),
        (
            EXCLUDED,
            format!(
                "not comparable (the reason is given): errors above {}% of requests{}, \
                 a load generator that fell behind, or every trial of a side client-bound \
                 (left out of the verdict, the ranking and its count)",
                crate::analysis::compare::MAX_ERROR_RATE * 100.0,
                kinds
            ),
        ),
    ]
}

/// Every mark's meaning on one line (see [`legend_items`]).
pub fn legend(noise: f64, kinds: &str) -> String {
    legend_items(noise, kinds)
        .iter()
        .map(|(m, t)| format!("{m} {t}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The mark a verdict is shown with, if any.
pub fn mark(v: &Verdict) -> Option<char> {
    match v {
        Verdict::Faster | Verdict::Slower => None,
        Verdict::NoDifference => Some(SAME),
        Verdict::NeedsMoreTrials { .. } | Verdict::NeedsMoreRuns { .. } => Some(TOO_FEW),
        Verdict::NotComparable { .. } => Some(EXCLUDED),
    }
}

/// The mark a percentage drawn from `c` carries wherever it is printed
/// (bars, the relative table, the N-run page): nothing for a significant
/// change, ` ~`, ` ?` or ` ✗` otherwise; nothing without a comparison
/// (the baseline itself).
pub fn percent_mark(c: Option<&Comparison>) -> String {
    match c.and_then(|c| mark(&c.verdict)) {
        Some(m) => format!(" {m}"),
        None => String::new(),
    }
}

/// `+12.0% (p=0.002)` for a significant change, `~ (p=0.310)` for no
/// significant difference (as benchstat prints it), `? +30.0% (needs ≥4
/// trials)` when the test cannot reach significance with this many trials
/// (the change is shown but nothing is claimed), `✗ not comparable: …`
/// when one side's errors exceed the threshold.
///
/// A `best` headline judged by Welch's t names it (`+3.1% (Welch p=0.012)`),
/// and its "no difference" says what the trials could have shown: `~
/// (Welch p=0.410; cannot tell apart under ±6.2%)`.
pub fn short(c: &Comparison) -> (String, Tone) {
    let test = match (c.test, c.runs) {
        (Test::Runs, Some((a, b))) => format!("{a} v {b} runs, "),
        (Test::Welch, _) => "Welch ".into(),
        _ => String::new(),
    };
    let limit = c
        .detectable
        .map(|d| format!("; cannot tell apart under ±{}", format::percent_fine(d)))
        .unwrap_or_default();
    let held = c.verdict == Verdict::NoDifference
        && (c.within_floor
            || c.p_value
                .is_some_and(|p| p < crate::analysis::compare::ALPHA));
    let within = match (held, ci(c)) {
        (true, Some(ci)) => format!("; within the floor: CI {ci}"),
        _ => String::new(),
    };
    let p = c
        .p_value
        .map(|p| format!(" ({test}{}{limit}{within})", format::p_value(p)))
        .unwrap_or_default();
    match &c.verdict {
        Verdict::Faster => (format!("{}{p}", format::change(c.ratio)), Tone::Better),
        Verdict::Slower => (format!("{}{p}", format::change(c.ratio)), Tone::Worse),
        Verdict::NoDifference => (format!("{SAME}{p}"), Tone::Same),
        Verdict::NeedsMoreTrials { at_least } => (
            format!(
                "{TOO_FEW} {} (needs ≥{at_least} trials)",
                format::change(c.ratio)
            ),
            Tone::Unknown,
        ),
        Verdict::NeedsMoreRuns { runs, .. } => (
            format!(
                "{TOO_FEW} {} ({})",
                format::change(c.ratio),
                runs_short(*runs)
            ),
            Tone::Unknown,
        ),
        Verdict::NotComparable { reason } => {
            (format!("{EXCLUDED} not comparable: {reason}"), Tone::Worse)
        }
    }
}

/// `1 run a side`, `2 v 3 runs`: why a verdict between runs is `?`.
fn runs_short((a, b): (usize, usize)) -> String {
    if a == b {
        format!("{a} run{} a side", if a == 1 { "" } else { "s" })
    } else {
        format!("{a} v {b} runs")
    }
}

/// The ratio's 95% CI as changes: `+9.0% .. +15.0%`.
pub fn ci(c: &Comparison) -> Option<String> {
    c.ratio_ci
        .map(|(lo, hi)| format!("{} .. {}", format::change(lo), format::change(hi)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(ratio: f64, p: Option<f64>, verdict: Verdict) -> Comparison {
        Comparison {
            ratio,
            ratio_ci: Some((ratio - 0.03, ratio + 0.03)),
            p_value: p,
            verdict,
            sentence: String::new(),
            ..Comparison::default()
        }
    }

    #[test]
    fn benchstat_forms() {
        assert_eq!(
            short(&cmp(1.12, Some(0.002), Verdict::Faster)),
            ("+12.0% (p=0.002)".into(), Tone::Better)
        );
        assert_eq!(
            short(&cmp(0.9, Some(0.0001), Verdict::Slower)).0,
            "-10.0% (p<0.001)"
        );
        assert_eq!(
            short(&cmp(1.01, Some(0.31), Verdict::NoDifference)).0,
            "~ (p=0.310)"
        );
        // Significant, but the interval reaches inside the floor: `~` with
        // the interval that did not clear it.
        let held = Comparison {
            within_floor: true,
            ..cmp(1.021, Some(0.034), Verdict::NoDifference)
        };
        assert_eq!(
            short(&held).0,
            "~ (p=0.034; within the floor: CI -0.9% .. +5.1%)"
        );
        assert_eq!(
            short(&cmp(1.3, None, Verdict::NeedsMoreTrials { at_least: 4 })).0,
            "? +30.0% (needs ≥4 trials)"
        );
        let excluded =
            cmp(1.03, Some(0.01), Verdict::Faster).not_comparable("5 errors (5 timeouts)".into());
        assert_eq!(
            short(&excluded),
            (
                "✗ not comparable: 5 errors (5 timeouts)".into(),
                Tone::Worse
            )
        );
        assert!(
            legend(0.02, "").contains("0.1% of requests"),
            "{}",
            legend(0.02, "")
        );
        assert!(
            legend(0.02, "").contains("reaches inside the 2% noise floor"),
            "{}",
            legend(0.02, "")
        );
        let welch = |ratio, p, verdict, detectable| Comparison {
            test: Test::Welch,
            detectable,
            ..cmp(ratio, Some(p), verdict)
        };
        assert_eq!(
            short(&welch(1.031, 0.012, Verdict::Faster, None)).0,
            "+3.1% (Welch p=0.012)"
        );
        assert_eq!(
            short(&welch(1.015, 0.41, Verdict::NoDifference, Some(0.062))).0,
            "~ (Welch p=0.410; cannot tell apart under ±6.2%)"
        );
        assert_eq!(
            ci(&cmp(1.12, None, Verdict::Faster)).unwrap(),
            "+9.0% .. +15.0%"
        );
    }
}
