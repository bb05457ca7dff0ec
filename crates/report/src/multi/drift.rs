//! The drift between the runs of each side as text, for `compare` and
//! `run --repeat`, from [`crate::judging::multi::drift`].

use crate::judging::multi::drift::{pct, plan_sentence, SideDrift};

/// The drift of each side as text, for `compare`.
pub fn render(sides: &[SideDrift]) -> String {
    let mut out = String::new();
    for s in sides {
        out += &format!(
            "\ndrift between the {} runs of `{}` (coefficient of variation of the run {}s, \
             beside the trials' spread inside a run):\n",
            s.runs, s.side, "headline"
        );
        let w = s
            .points
            .iter()
            .map(|p| p.series.len() + p.point.len() + 1)
            .max()
            .unwrap_or(0);
        for p in &s.points {
            let name = format!("{} {}", p.series, p.point);
            out += &format!(
                "  {name:<w$}  between runs {:>6}  within a run {:>6}\n",
                pct(p.drift.between_cv),
                p.drift.within_cv.map_or("–".into(), pct)
            );
        }
        out += &format!("  {}\n", plan_sentence(s));
        if !s.why.is_empty() {
            out += "  these runs disagree beyond their own spread; what each stored:\n";
            for f in &s.why {
                out += &format!(
                    "    {}{}: {}\n",
                    f.fact,
                    if f.differs { " (differs)" } else { "" },
                    f.values.join(" | ")
                );
            }
        }
    }
    out
}
