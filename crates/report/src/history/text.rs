//! The history in the terminal: per point, one line per run with its value
//! and spread, then each change point with its size, CI, p-value and what
//! changed.

use crate::analysis::compare::format_p;
use crate::judging::format;
use crate::judging::history::{History, HistoryChange, HistoryPoint};

/// The whole history as text.
pub fn render(h: &History) -> String {
    let mut out = format!(
        "history of `{}`: {} run(s) by {}, {} of each run; change points by E-divisive means \
         (permutation test, p < {}, {} permutations), changes under {:.0}% not reported\n",
        h.recipe,
        h.runs.len(),
        match h.order {
            crate::judging::history::Order::Time => "start time",
            crate::judging::history::Order::Label => "label",
        },
        h.statistic.as_str(),
        h.alpha,
        h.permutations,
        h.min_magnitude * 100.0
    );
    for p in &h.points {
        out += &point(h, p);
    }
    let changes: usize = h.points.iter().map(|p| p.change_points.len()).sum();
    out += &match changes {
        0 => "\nno change point\n".to_string(),
        n => format!("\n{n} change point(s)\n"),
    };
    out += &curves(h);
    out
}

/// Each system's scaling curve across the runs: one line per run with its
/// N*, peak and peak's x, then each change of the curve's shape in words.
fn curves(h: &History) -> String {
    use crate::judging::history::shape::Property;
    let mut out = String::new();
    for c in h.curves.iter().filter(|c| c.runs.len() > 1) {
        out += &format!("\nthe curve of {} over {}\n", c.system, c.axis);
        for r in &c.runs {
            let label = h.runs.get(r.position).map_or("?", |x| x.label.as_str());
            let cell = |p: Property| r.get(p).map_or("-".to_string(), |v| format!("{v:.4}"));
            let n_star = r
                .get(Property::NStar)
                .map_or("-".into(), |v| format!("{v:.0}"));
            out += &format!(
                "  {label}: N* {n_star}, σ {}, κ {}, peak {} {} at {}{}\n",
                cell(Property::Sigma),
                cell(Property::Kappa),
                r.get(Property::Peak).map_or("-".into(), format::rate),
                h.unit,
                r.get(Property::PeakX)
                    .map_or("-".into(), format::axis_value),
                r.limiter_at_peak
                    .as_ref()
                    .map(|l| format!("; the limiter there: {l}"))
                    .unwrap_or_default()
            );
        }
        match c.sentences.is_empty() {
            true => out += "  no change of the curve's shape\n",
            false => {
                for s in &c.sentences {
                    out += &format!("  {s}\n");
                }
            }
        }
    }
    out
}

fn point(h: &History, p: &HistoryPoint) -> String {
    let unit = &h.unit;
    let mut out = format!("\n{} {}\n", p.system, p.point);
    let mut left_out = p.left_out.iter().peekable();
    for v in &p.values {
        while let Some(l) = left_out.next_if(|l| l.position < v.position) {
            out += &left_out_line(h, l);
        }
        let run = &h.runs[v.position];
        // The change goes between its two runs: before the first run after
        // it (the run right before this one may lack the point).
        if let Some(c) = p
            .change_points
            .iter()
            .find(|c| c.after_position == v.position)
        {
            out += &change(c);
        }
        let revision = run
            .revision
            .as_deref()
            .map_or(String::new(), |r| format!(" @{r}"));
        out += &format!(
            "  {:>3}  {:<28} {:>10} {unit}  [{} .. {}]  n={}{}\n",
            v.position + 1,
            format!("{}{revision}", run.label),
            format::rate(v.value),
            format::rate(v.min),
            format::rate(v.max),
            v.trials,
            if v.disturbed {
                "  (every trial beside background load)"
            } else {
                ""
            }
        );
    }
    for l in left_out {
        out += &left_out_line(h, l);
    }
    out
}

/// `    3  v2  left out: client-bound at 4 of 4 trials  ✗`.
fn left_out_line(h: &History, l: &crate::judging::history::LeftOutRun) -> String {
    format!(
        "  {:>3}  {:<28} left out: {}  ✗\n",
        l.position + 1,
        h.runs[l.position].label,
        l.reason
    )
}

/// The change's lines, printed between the two runs.
pub fn change(c: &HistoryChange) -> String {
    let ci = c.ratio_ci.map_or(String::new(), |(lo, hi)| {
        format!(
            " (95% CI {:+.1}%..{:+.1}%)",
            (lo - 1.0) * 100.0,
            (hi - 1.0) * 100.0
        )
    });
    let mut out = format!(
        "       ── change: {:+.1}%{ci}, {}, from {} to {}\n",
        (c.ratio - 1.0) * 100.0,
        format_p(c.p_value),
        c.before_label,
        c.after_label
    );
    for d in c.changed.iter().take(8) {
        out += &format!(
            "          {}: {} -> {}\n",
            d.key,
            d.before.as_deref().unwrap_or("(none)"),
            d.after.as_deref().unwrap_or("(none)")
        );
    }
    if c.changed.len() > 8 {
        out += &format!(
            "          ... and {} more (see --json)\n",
            c.changed.len() - 8
        );
    }
    if c.changed.is_empty() {
        out += "          nothing recorded differs between the two runs\n";
    }
    if let Some(w) = &c.work {
        out += &format!("          {w}\n");
    }
    out
}
