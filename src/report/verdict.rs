//! The short, benchstat-style form of a comparison.

use super::format;
use crate::analysis::compare::{Comparison, Verdict};

/// Which way a verdict points, for colouring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Better,
    Worse,
    Same,
    Unknown,
}

/// `+12.0% (p=0.002)` for a significant change, `~ (p=0.310)` for no
/// significant difference (as benchstat prints it), `+30.0% (? need ≥4
/// trials)` when the test cannot reach significance with this many trials:
/// the change is shown but nothing is claimed.
pub fn short(c: &Comparison) -> (String, Tone) {
    let p = c
        .p_value
        .map(|p| format!(" ({})", format::p_value(p)))
        .unwrap_or_default();
    match &c.verdict {
        Verdict::Faster => (format!("{}{p}", format::change(c.ratio)), Tone::Better),
        Verdict::Slower => (format!("{}{p}", format::change(c.ratio)), Tone::Worse),
        Verdict::NoDifference => (format!("~{p}"), Tone::Same),
        Verdict::NeedsMoreTrials { at_least } => (
            format!("{} (? need ≥{at_least} trials)", format::change(c.ratio)),
            Tone::Unknown,
        ),
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
        assert_eq!(
            short(&cmp(1.3, None, Verdict::NeedsMoreTrials { at_least: 4 })).0,
            "+30.0% (? need ≥4 trials)"
        );
        assert_eq!(
            ci(&cmp(1.12, None, Verdict::Faster)).unwrap(),
            "+9.0% .. +15.0%"
        );
    }
}
