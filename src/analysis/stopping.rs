//! INTERIM (replaced by the stats branch): stop at max trials.
use std::time::Duration;
pub struct StoppingRule {
    pub min_trials: usize,
    pub max_trials: usize,
    pub target_rel_half_width: f64,
    pub budget: Option<Duration>,
}
pub enum Decision {
    Continue,
    Stop(&'static str),
}
pub fn decide(
    rule: &StoppingRule,
    _samples: &[Vec<f64>],
    rounds: usize,
    elapsed: Duration,
) -> Decision {
    if rounds >= rule.max_trials {
        Decision::Stop("max_trials")
    } else if rule.budget.is_some_and(|b| elapsed >= b) {
        Decision::Stop("budget_exhausted")
    } else {
        Decision::Continue
    }
}
