//! The steadiness of a trial's window, and the automatic warm-up
//! (`[trials] warmup = "auto"`): the runner's use of
//! [`crate::analysis::steady`].
//!
//! An automatic warm-up runs the load in steps of
//! [`crate::recipe::steady::auto_warmup_step`] (the window, at least 2 s)
//! and stops after the first step whose second half is steady, or when
//! another step would pass `warmup_max`. Only the second half is judged:
//! every load run opens its connections afresh, and their first buckets
//! are the load generator's start, not the server's state.

use super::failure::Failure;
use super::sites::TrialLoad;
use crate::analysis::steady::{classify, judged_buckets, Classified, Steadiness};
use crate::load::timeline::{Timeline, BUCKET};
use crate::load::{LoadResult, LoadSpec};
use crate::recipe::TrialPolicy;
use crate::shutdown::Shutdown;
use crate::store::WindowFacts;
use std::time::Duration;

/// The stored timeline of a measured window and what it says.
pub(crate) fn window_facts(
    r: &LoadResult,
    trials: &TrialPolicy,
    warmup: Duration,
) -> (Vec<u64>, WindowFacts) {
    let t = Timeline::of_run(&r.timeline, r.elapsed, trials.steady.bucket);
    let whole = t.whole();
    // A rate that rises over its window by design (a rate ramp): its
    // trend is the measurement, not an unsteady server.
    let c = if r.extras.rises_by_design() {
        Classified::ramped()
    } else {
        classify(judged_buckets(&whole), trials.noise)
    };
    let facts = WindowFacts {
        bucket_ms: t.bucket_ms,
        last_partial: Some(t.last_partial),
        steadiness: Some(c.class),
        steadiness_detail: Some(c.describe()),
        warmup_s: Some(warmup.as_secs_f64()),
        left_out: c.class.unsteady()
            && trials.steady.unsteady == crate::recipe::steady::Unsteady::Exclude,
    };
    (t.counts, facts)
}

/// What the automatic warm-up did.
pub(crate) struct WarmedUp {
    /// The warm-up it ran.
    pub ran: Duration,
    /// It stopped at its cap with the last step still not steady: that
    /// step's class.
    pub capped: Option<Steadiness>,
}

/// Runs the warm-up before the measured window: fixed, or automatic.
pub(crate) fn warm_up(
    load: &TrialLoad,
    spec: &LoadSpec,
    trials: &TrialPolicy,
    shutdown: &Shutdown,
) -> Result<WarmedUp, Failure> {
    let Some(cap) = trials.steady.auto_warmup_max else {
        if !trials.warmup.is_zero() {
            step(load, spec, trials.warmup, shutdown)?;
        }
        return Ok(WarmedUp {
            ran: trials.warmup,
            capped: None,
        });
    };
    let each = crate::recipe::steady::auto_warmup_step(trials.duration);
    let mut ran = Duration::ZERO;
    loop {
        let r = step(load, spec, each, shutdown)?;
        ran += each;
        let class = tail_class(&r, trials.noise);
        if class == Steadiness::Steady {
            return Ok(WarmedUp { ran, capped: None });
        }
        if ran + each > cap {
            return Ok(WarmedUp {
                ran,
                capped: Some(class),
            });
        }
    }
}

/// The class of the second half of a warm-up step's whole buckets.
fn tail_class(r: &LoadResult, floor: f64) -> Steadiness {
    let whole = Timeline::of_run(&r.timeline, r.elapsed, BUCKET).whole();
    classify(&whole[whole.len() / 2..], floor).class
}

fn step(
    load: &TrialLoad,
    spec: &LoadSpec,
    duration: Duration,
    shutdown: &Shutdown,
) -> Result<LoadResult, Failure> {
    let warm = LoadSpec {
        duration,
        max_requests: None,
        ..spec.clone()
    };
    let run = load.run(&warm, shutdown).map_err(|f| f.during("warmup"))?;
    if shutdown.is_triggered() {
        return Err("during warmup".into());
    }
    Ok(run.result)
}

/// The class's word on a trial's line, and `(warm-up 6s)` after an
/// automatic one.
pub(crate) fn line_tag(facts: &WindowFacts, auto: bool) -> String {
    let class = facts.steadiness.map_or("", |s| s.as_str());
    match (auto, facts.warmup_s) {
        (true, Some(w)) => format!("{class} (warm-up {w:.0}s)"),
        _ => class.to_string(),
    }
}

/// A trial's steadiness warnings: an unsteady window (with what decided
/// it, and whether verdicts leave it out), an automatic warm-up that
/// reached its cap.
pub(crate) fn warnings(
    head: &str,
    facts: &WindowFacts,
    capped: Option<Steadiness>,
    trials: &TrialPolicy,
) -> Vec<String> {
    let mut out = Vec::new();
    if facts.unsteady() {
        let detail = facts.steadiness_detail.as_deref().unwrap_or("");
        let fate = match trials.steady.unsteady {
            crate::recipe::steady::Unsteady::Mark => "marked",
            crate::recipe::steady::Unsteady::Exclude => "left out of verdicts",
        };
        out.push(format!("{head}  unsteady window ({detail}): {fate}"));
    }
    if let (Some(class), Some(cap)) = (capped, trials.steady.auto_warmup_max) {
        out.push(format!(
            "{head}  the automatic warm-up reached its {} cap (warmup_max) still {}",
            crate::units::format_duration(cap),
            class.as_str()
        ));
    }
    out
}
