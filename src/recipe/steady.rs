//! `[trials]`'s steady-window keys (docs/experiment-format.md): `bucket`
//! (the timeline's width), `unsteady` (mark or exclude an unsteady
//! trial) and `warmup = "auto"` with its cap `warmup_max`.

use super::error::SpecError;
use super::locate::Ctx;
use super::raw::RawTrials;
use crate::load::timeline::BUCKET;
use crate::units::parse_duration;
use std::time::Duration;

/// The longest an automatic warm-up may run unless `warmup_max` says.
pub const DEFAULT_WARMUP_MAX: Duration = Duration::from_secs(30);

/// What an unsteady trial does to verdicts (`[trials] unsteady`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unsteady {
    /// Kept, and its class shown.
    #[default]
    Mark,
    /// Left out of verdicts, as client-bound trials are, and counted.
    Exclude,
}

/// How trial windows are bucketed and judged for steadiness.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyPolicy {
    /// The timeline's bucket width (`[trials] bucket`, a whole number of
    /// 100 ms).
    pub bucket: Duration,
    /// Mark or exclude unsteady trials.
    pub unsteady: Unsteady,
    /// `warmup = "auto"`: the cap it may extend the warm-up to; `None`
    /// for a fixed warm-up.
    pub auto_warmup_max: Option<Duration>,
}

impl Default for SteadyPolicy {
    fn default() -> Self {
        SteadyPolicy {
            bucket: BUCKET,
            unsteady: Unsteady::Mark,
            auto_warmup_max: None,
        }
    }
}

fn parse(cx: &Ctx, field: &str, v: &str, fix: &str) -> Result<Duration, SpecError> {
    parse_duration(v).map_err(|e| cx.err(&["trials", field], e.to_string(), fix))
}

/// The steady-window keys of `t`, against the window `duration`.
pub(super) fn policy(
    cx: &Ctx,
    t: &RawTrials,
    duration: Duration,
) -> Result<SteadyPolicy, SpecError> {
    let bucket = match &t.bucket {
        None => BUCKET,
        Some(s) => parse(cx, "bucket", s, "bucket = \"100ms\"")?,
    };
    let step = BUCKET.as_nanos();
    if bucket.is_zero() || bucket.as_nanos() % step != 0 || bucket > duration {
        return Err(cx.err(
            &["trials", "bucket"],
            format!(
                "expected a whole number of 100ms no longer than the {} window, got {}",
                crate::units::format_duration(duration),
                crate::units::format_duration(bucket)
            ),
            "bucket = \"100ms\" (drivers count requests per 100ms)",
        ));
    }
    let unsteady =
        match t.unsteady.as_deref().unwrap_or("mark") {
            "mark" => Unsteady::Mark,
            "exclude" => Unsteady::Exclude,
            other => return Err(cx.err(
                &["trials", "unsteady"],
                format!("unknown choice `{other}`"),
                "use unsteady = \"mark\" (keep and show) or \"exclude\" (leave out of verdicts)",
            )),
        };
    let auto = t.warmup.as_deref() == Some("auto");
    let auto_warmup_max = match (&t.warmup_max, auto) {
        (Some(_), false) => {
            return Err(cx.err(
                &["trials", "warmup_max"],
                "only an automatic warm-up has a cap",
                "warmup = \"auto\" with warmup_max = \"30s\", or remove warmup_max",
            ))
        }
        (None, false) => None,
        (None, true) => Some(DEFAULT_WARMUP_MAX),
        (Some(s), true) => Some(parse(cx, "warmup_max", s, "warmup_max = \"30s\"")?),
    };
    if auto_warmup_max.is_some_and(|m| m < auto_warmup_step(duration)) {
        return Err(cx.err(
            &["trials", "warmup_max"],
            "must be at least one step of the automatic warm-up (the window, at least 2s)",
            "warmup_max = \"30s\"",
        ));
    }
    Ok(SteadyPolicy {
        bucket,
        unsteady,
        auto_warmup_max,
    })
}

/// Each step of an automatic warm-up: the window, at least 2 s (its
/// second half, which is judged, then holds the ten 100 ms buckets a class
/// needs).
pub fn auto_warmup_step(duration: Duration) -> Duration {
    duration.max(Duration::from_secs(2))
}
