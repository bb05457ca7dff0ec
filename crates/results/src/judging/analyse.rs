//! The analysis pass over the collected rows: summaries, comparisons
//! against the baseline, per-series fits and the ranking.

use super::fits::{fit_series, rank};
use super::judge::{judge, Rules};
use super::rows::{collect, Aggregate, Cell};
use crate::analysis::compare::{Comparison, Verdict};
use crate::analysis::summary::{summarize, Headline, Summary};
use crate::store::RunData;

/// Builds the aggregate: facts, then statistics.
pub fn aggregate(data: &RunData) -> Aggregate {
    let mut agg = collect(data);
    super::kernel_lock::apply(&mut agg, &data.profiles);
    super::tls_bound::apply(&mut agg, &data.profiles);
    analyse(&mut agg);
    agg
}

/// Adds summaries, comparisons, fits and the ranking.
pub fn analyse(agg: &mut Aggregate) {
    for c in &mut agg.cells {
        c.summary = summary(c, agg.headline);
    }
    if let Some(base) = agg.baseline.clone() {
        let rules = Rules::symmetric(agg.headline, agg.noise);
        let verdicts: Vec<Option<Comparison>> = agg
            .cells
            .iter()
            .map(|c| {
                let b = agg.cell(&base, c.point.index)?;
                (c.system != base && !b.samples.is_empty() && !c.samples.is_empty())
                    .then(|| judge(b, c, &rules))
            })
            .collect();
        for (c, v) in agg.cells.iter_mut().zip(verdicts) {
            c.comparison = v;
        }
    }
    super::energy::analyse(agg);
    agg.fits = fit_series(agg);
    agg.ranking = rank(agg);
}

/// The cell's summary over the trials its verdict uses (client-bound ones
/// left out while others remain, [`super::judge::summarized`]), so the
/// median a row shows is the one its percentage was drawn from; outliers
/// are positions among all its successful trials.
fn summary(c: &Cell, headline: Headline) -> Option<Summary> {
    let used = super::judge::summarized(c);
    let values: Vec<f64> = used.iter().map(|(_, v)| *v).collect();
    let mut s = summarize(&values, headline)?;
    s.outliers = s
        .outliers
        .iter()
        .filter_map(|i| Some(used.get(*i)?.0))
        .collect();
    Some(s)
}

/// Why nothing in the run is comparable, or `None` when something is:
/// with a baseline and other systems, every comparison against it is
/// "not comparable"; with one system, every point is. The run then exits
/// with its own code (`cli::exit::NOTHING_COMPARABLE`).
pub fn nothing_comparable(data: &RunData) -> Option<String> {
    nothing_comparable_in(&aggregate(data))
}

/// [`nothing_comparable`] of an aggregate already built.
pub fn nothing_comparable_in(agg: &Aggregate) -> Option<String> {
    let verdicts: Vec<&Verdict> = agg
        .cells
        .iter()
        .filter_map(|c| Some(&c.comparison.as_ref()?.verdict))
        .collect();
    let judged: Vec<&str> = if verdicts.is_empty() {
        agg.cells
            .iter()
            .map(|c| c.not_comparable.as_deref())
            .collect::<Option<Vec<&str>>>()?
    } else {
        verdicts
            .iter()
            .map(|v| match v {
                Verdict::NotComparable { reason } => Some(reason.as_str()),
                _ => None,
            })
            .collect::<Option<Vec<&str>>>()?
    };
    let first = judged.first()?;
    let n = judged.len();
    let what = if verdicts.is_empty() {
        "points"
    } else {
        "comparisons against the baseline"
    };
    Some(format!(
        "nothing is comparable: {n} of {n} {what} are not comparable (the first: {first})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::Test;

    /// Seed 003's method, best of 3 per system: every point with 3 trials a
    /// side gets a verdict or a stated limit from Welch's t, never a bare
    /// `?` (a point where a trial failed, 2 against 3, still says `?`).
    #[test]
    fn best_of_three_gets_a_verdict_or_a_stated_limit() {
        let mut data = crate::judging::test_support::run_data(&["debian", "freebsd"]);
        data.run.headline = "best".into();
        let agg = aggregate(&data);
        let mut judged = 0;
        for c in agg.cells.iter().filter(|c| c.system == "freebsd") {
            let cmp = c.comparison.as_ref().unwrap();
            // Client-bound trials are left out of every verdict (the
            // fixture's debian has one at connections=4000).
            let base = agg.cell("debian", c.point.index).unwrap();
            let kept =
                |c: &crate::judging::rows::Cell| crate::judging::judge::kept(&c.samples).len();
            if kept(c).min(kept(base)) < 3 {
                assert!(matches!(cmp.verdict, Verdict::NeedsMoreTrials { .. }));
                continue;
            }
            judged += 1;
            assert_eq!(cmp.test, Test::Welch, "{cmp:?}");
            let (short, _) = crate::judging::verdict::short(cmp);
            assert!(!short.starts_with('?'), "{short}");
            match cmp.verdict {
                Verdict::Faster | Verdict::Slower => assert!(short.contains("(Welch p"), "{short}"),
                Verdict::NoDifference => {
                    assert!(short.contains("cannot tell apart under"), "{short}")
                }
                _ => panic!("{cmp:?}"),
            }
        }
        assert_eq!(judged, 3);
    }

    #[test]
    fn a_run_with_nothing_comparable_says_so() {
        let mut agg = crate::judging::test_support::aggregate(&["a", "b"]).1;
        assert_eq!(nothing_comparable_in(&agg), None);
        for c in &mut agg.cells {
            if let Some(cmp) = c.comparison.take() {
                c.comparison = Some(cmp.not_comparable("9 errors (9 timeouts) in b".into()));
            }
        }
        let why = nothing_comparable_in(&agg).unwrap();
        assert!(
            why.starts_with("nothing is comparable: 5 of 5 comparisons"),
            "{why}"
        );
        // One system: judged by its own points.
        let mut one = crate::judging::test_support::aggregate(&["a"]).1;
        assert_eq!(nothing_comparable_in(&one), None);
        for c in &mut one.cells {
            c.not_comparable = Some("9 errors (9 timeouts)".into());
        }
        assert!(nothing_comparable_in(&one).is_some());
    }
}
