//! The one comparison of N runs' sides: every side after the first
//! against the baseline side, each system against **the same system of
//! the baseline side** ([`compare_sides`]). `compare` prints it in the
//! terminal (`report::multi::text`) and as JSON, and the N-run page draws it in
//! HTML (`report::multi::page`): one engine, one set of pairs, one number under
//! one name.
//!
//! Why this pairing: a side is one machine, OS or build, and its systems
//! are the recipe's configurations. Against the same system of the
//! baseline, a change is the side's alone; against another system it is
//! the side's and the configuration's at once, which no verdict can tell
//! apart (`B · 2 workers` against `A · 1 worker` read "+20%" where B was
//! 20% slower). The baseline side's own systems are not judged against
//! each other here: they alternated inside one run, which `scalelab
//! report RUN` judges trial against trial. Where the sides share no
//! system label but each has exactly one system, those two are paired.
//!
//! The value shown for a side at a point is the one the verdict's ratio
//! divides ([`crate::judging::runs::PointComparison::value_a`]): each run's
//! headline, their geometric mean over the side's runs, named by
//! [`crate::judging::runs::value_name`].

use super::Merged;
use crate::analysis::compare::Verdict;
use crate::analysis::summary::Headline;
use crate::judging::fits::{standing_of, Standing};
use crate::judging::judge::Rules;
use crate::judging::rows::Rank;
use crate::judging::runs::{compare_sides, RunComparison};
use crate::store::RunData;

/// One side against the baseline side.
#[derive(Clone, Debug, PartialEq)]
pub struct SideComparison {
    /// The side's name ([`super::Side::name`]).
    pub side: String,
    /// Its verdicts, point by point, and the run as a whole.
    pub comparison: RunComparison,
}

/// The rules of a merged comparison: the baseline run's headline, and its
/// noise floor unless `noise` (a fraction) is given.
pub fn rules(m: &Merged, noise: Option<f64>) -> Rules {
    let first = &m.runs[0].run;
    let headline = Headline::parse(&first.headline).unwrap_or_default();
    Rules::symmetric(headline, noise.unwrap_or(first.noise))
}

/// Every side after the first against the first, in order.
pub fn against_baseline(m: &Merged, rules: &Rules) -> Vec<SideComparison> {
    let runs_of =
        |s: &super::Side| -> Vec<RunData> { s.runs.iter().map(|&i| m.runs[i].clone()).collect() };
    let base = runs_of(&m.sides[0]);
    m.sides[1..]
        .iter()
        .map(|s| SideComparison {
            side: s.name.clone(),
            comparison: compare_sides(&base, &runs_of(s), rules),
        })
        .collect()
}

/// Shared points whose verdict needs more trials or runs.
pub fn too_few(c: &RunComparison) -> usize {
    (c.points.iter())
        .filter(|p| {
            matches!(
                p.comparison.verdict,
                Verdict::NeedsMoreTrials { .. } | Verdict::NeedsMoreRuns { .. }
            )
        })
        .count()
}

/// No shared point, or every shared point not comparable.
pub fn nothing_comparable(c: &RunComparison) -> bool {
    (c.points.iter()).all(|p| matches!(p.comparison.verdict, Verdict::NotComparable { .. }))
}

/// The sides ranked as `report RUN` ranks systems
/// (`report::fits::ranking_line`): the baseline at 100%, each
/// other side at its geometric mean ratio, marked by the verdict on the
/// run as a whole; a side with nothing comparable last.
pub fn ranks(baseline: &str, sides: &[SideComparison]) -> Vec<Rank> {
    let compared = |c: &RunComparison| {
        (c.points.iter())
            .filter(|p| !matches!(p.comparison.verdict, Verdict::NotComparable { .. }))
            .count()
    };
    let excluded = |c: &RunComparison| c.points.len() - compared(c);
    let most = sides.iter().map(|s| compared(&s.comparison)).max();
    let mut out = vec![Rank {
        system: baseline.to_string(),
        relative: 1.0,
        points: most.unwrap_or(0),
        significant: None,
        too_few_trials: false,
        excluded: 0,
        whole: None,
    }];
    for s in sides {
        let c = &s.comparison;
        let (significant, too_few_trials) = match c.geomean.as_ref().map(|g| &g.verdict) {
            Some(Verdict::NeedsMoreRuns { .. } | Verdict::NeedsMoreTrials { .. }) => (None, true),
            Some(Verdict::Faster | Verdict::Slower) => (Some(1), false),
            Some(_) => (Some(0), false),
            None => (None, false),
        };
        out.push(Rank {
            system: s.side.clone(),
            relative: c.geomean_ratio.unwrap_or(0.0),
            points: if c.geomean.is_some() { compared(c) } else { 0 },
            significant,
            too_few_trials,
            excluded: excluded(c),
            whole: c.geomean.clone(),
        });
    }
    out.sort_by(|a, b| b.relative.total_cmp(&a.relative));
    out
}

/// What the ranking may claim, from every point's verdict.
pub fn standing(sides: &[SideComparison]) -> Option<Standing> {
    standing_of(
        sides
            .iter()
            .flat_map(|s| &s.comparison.points)
            .map(|p| &p.comparison.verdict),
    )
}
