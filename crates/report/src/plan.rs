//! `scalelab plan RECIPE` in the terminal: the plan, what it costs and
//! what it resolves, the same at 50% power, the noisiest point's plan, and
//! the best within the budget.

use crate::judging::planner::{PlanLine, PlanReport};

fn minutes(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 5400.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

fn line(p: &PlanLine) -> String {
    format!(
        "{} runs a side × {} trials a point: {} for both sides; resolves {:.1}%",
        p.runs,
        p.trials,
        minutes(p.seconds),
        p.resolves * 100.0
    )
}

/// The planner's answer as text.
pub fn render(r: &PlanReport) -> String {
    let mut out = format!(
        "plan for `{}` from {} finished run(s) on this host: a trial at every point costs {}, a \
         run's own start {}\n",
        r.recipe,
        r.runs_read,
        minutes(r.trial_round_s),
        minutes(r.run_s)
    );
    if let Some(why) = &r.cannot_plan {
        return out + &format!("cannot plan: {why}\n");
    }
    if let (Some(lo), Some(hi)) = (r.points.first(), r.points.last()) {
        out += &format!(
            "between runs the points' CV is {:.1}% ({} {}) to {:.1}% ({} {}); within a run, \
             the trials' {:.1}% to {:.1}%\n",
            lo.run_cv * 100.0,
            lo.system,
            lo.point,
            hi.run_cv * 100.0,
            hi.system,
            hi.point,
            r.points
                .iter()
                .map(|p| p.trial_cv)
                .fold(f64::INFINITY, f64::min)
                * 100.0,
            r.points.iter().map(|p| p.trial_cv).fold(0.0, f64::max) * 100.0,
        );
    }
    let asked = format!("{:.1}% at {:.0}% power", r.detect * 100.0, r.power * 100.0);
    out += &match &r.plan {
        Some(p) => format!("to resolve {asked} (the median point): {}\n", line(p)),
        None => format!("no plan within 100 runs a side and 20 trials resolves {asked}\n"),
    };
    if let Some(p) = &r.plan {
        out += &format!(
            "  to run it: `[trials] min = {n}` and `max = {n}` in the recipe, then `scalelab run \
             RECIPE --repeat {r}` on each side\n",
            n = p.trials,
            r = p.runs
        );
    }
    if let Some(p) = &r.plan_half_power {
        out += &format!(
            "  at 50% power (the interval only as narrow as the change): {}\n",
            line(p)
        );
    }
    if let Some(p) = &r.noisiest {
        out += &format!("  for the noisiest point: {}\n", line(p));
    }
    if let Some(p) = &r.within_budget {
        out += &format!("within the budget: {}\n", line(p));
    }
    out
}
