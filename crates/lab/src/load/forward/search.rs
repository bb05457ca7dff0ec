//! The RFC 2544 throughput search (section 26.1), as a pure function over a
//! trial closure: the highest offered rate at which the device loses no
//! frames (or at most the configured fraction), found by binary search.
//!
//! The first trial sends as fast as the generator can; if nothing is lost
//! there, the router outran the generator and the point is client-bound.
//! Otherwise the search starts at the rate that got through and bisects
//! between the best passing rate and the lowest failing one until they are
//! within `precision` of each other. A trial in which the generator did not
//! reach the rate it was asked for (RFC 2544 section 10's check that the
//! tester really offered the load) proves nothing about the router: it
//! lowers the ceiling and marks the point client-bound if it decides it.

use serde::{Deserialize, Serialize};

/// How the search runs: loss allowed, precision, trial budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SearchConfig {
    /// Acceptable loss as a fraction of frames sent (0: none).
    pub loss: f64,
    /// Stop when the bracket is narrower than this fraction of its top.
    pub precision: f64,
    /// At most this many trials, the first (unpaced) one included.
    pub max_steps: u32,
    /// A trial counts as offered at rate R only if the generator sent at
    /// least `sent_tolerance × R`.
    pub sent_tolerance: f64,
    /// Below this rate (frames/s) the search gives up finding a passing one.
    pub floor_pps: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            loss: 0.0,
            precision: 0.02,
            max_steps: 12,
            sent_tolerance: 0.98,
            floor_pps: 100.0,
        }
    }
}

/// What the search needs to know about a finished trial.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Observation {
    pub sent_pps: f64,
    pub received_pps: f64,
    pub loss_fraction: f64,
}

/// One step of the search.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step<T> {
    /// `None`: as fast as the generator could.
    pub offered_pps: Option<f64>,
    /// The rate this step stands for: the offered one, or what the
    /// generator really sent when it fell short (or was unpaced).
    pub rate_pps: f64,
    /// The trial lost at most the acceptable fraction of frames sent.
    pub passed: bool,
    /// The generator sent below `sent_tolerance` of the offered rate.
    pub client_bound: bool,
    /// What the step's trial measured (a `trial::TrialReport` in the
    /// forward load).
    pub trial: T,
}

/// A finished search: every step it ran and which one is the result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome<T> {
    /// The steps in the order they ran: a search starts with the unpaced
    /// step; a fixed-rate run (`Pacing::Open`) has one step.
    pub steps: Vec<Step<T>>,
    /// Index of the step with the highest passing rate.
    pub best: Option<usize>,
    /// The result is bounded by the generator, not the router.
    pub client_bound: bool,
}

impl<T> Outcome<T> {
    /// The step of [`Outcome::best`]; `None` when no rate passed.
    pub fn best_step(&self) -> Option<&Step<T>> {
        self.best.map(|i| &self.steps[i])
    }
}

/// Runs the search; `trial(rate)` runs one trial at `rate` frames/s (`None`:
/// unpaced) and `observe` reads what the search needs from it. An error
/// from a trial ends the search with that error.
pub(crate) fn search<T, E>(
    cfg: &SearchConfig,
    mut trial: impl FnMut(Option<f64>) -> Result<T, E>,
    observe: impl Fn(&T) -> Observation,
) -> Result<Outcome<T>, E> {
    let mut steps = Vec::new();
    let first = trial(None)?;
    let o = observe(&first);
    let passed = o.loss_fraction <= cfg.loss;
    steps.push(Step {
        offered_pps: None,
        rate_pps: o.sent_pps,
        passed,
        client_bound: passed,
        trial: first,
    });
    if passed {
        return Ok(Outcome {
            steps,
            best: Some(0),
            client_bound: true,
        });
    }
    let (mut lo, mut hi) = (0.0_f64, o.sent_pps);
    let mut hi_client_bound = false;
    let mut best = None;
    let mut rate = o.received_pps.clamp(hi * 0.01, hi * 0.95);
    while (steps.len() as u32) < cfg.max_steps && hi >= cfg.floor_pps {
        let t = trial(Some(rate))?;
        let o = observe(&t);
        let client_bound = o.sent_pps < rate * cfg.sent_tolerance;
        let passed = o.loss_fraction <= cfg.loss;
        // A step the generator fell short of is credited with the rate it
        // really sent: passing proves the router at that rate, and nothing
        // above the offered one can be tested.
        let credited = if client_bound { o.sent_pps } else { rate };
        match (passed, client_bound) {
            (true, _) => {
                if credited > lo {
                    lo = credited;
                    best = Some(steps.len());
                }
                if client_bound {
                    hi = rate;
                    hi_client_bound = true;
                }
            }
            (false, _) => {
                hi = credited;
                hi_client_bound = false;
            }
        }
        steps.push(Step {
            offered_pps: Some(rate),
            rate_pps: credited,
            passed,
            client_bound,
            trial: t,
        });
        if hi - lo <= cfg.precision * hi {
            break;
        }
        rate = (lo + hi) / 2.0;
    }
    let best_client_bound = best.is_some_and(|i: usize| steps[i].client_bound);
    Ok(Outcome {
        steps,
        best,
        client_bound: hi_client_bound || best_client_bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device that loses nothing up to `capacity` frames/s and everything
    /// above it, driven by a generator that tops out at `generator`.
    fn device(capacity: f64, generator: f64) -> impl FnMut(Option<f64>) -> Result<Observation, ()> {
        move |rate| {
            let sent = rate.unwrap_or(generator).min(generator);
            let received = sent.min(capacity);
            Ok(Observation {
                sent_pps: sent,
                received_pps: received,
                loss_fraction: (sent - received) / sent,
            })
        }
    }

    #[test]
    fn finds_the_capacity_within_the_precision() {
        let cfg = SearchConfig::default();
        let out = search(&cfg, device(300_000.0, 1_000_000.0), |o| *o).unwrap();
        let best = out.best_step().unwrap().offered_pps.unwrap();
        assert!(best <= 300_000.0, "{best} passes only at or below capacity");
        assert!(
            best >= 300_000.0 * (1.0 - cfg.precision),
            "{best} is within 2%"
        );
        assert!(!out.client_bound);
        assert!(out.steps.len() <= cfg.max_steps as usize);
        assert!(!out.steps[0].passed, "the unpaced first step loses frames");
    }

    #[test]
    fn a_lossless_first_step_means_the_generator_was_the_limit() {
        let out = search(&SearchConfig::default(), device(2e6, 5e5), |o| *o).unwrap();
        assert_eq!(out.steps.len(), 1);
        assert_eq!(out.best, Some(0));
        assert!(out.client_bound);
    }

    #[test]
    fn a_generator_that_misses_its_rate_marks_the_point() {
        // The generator reaches 1 Mpps unpaced but only 200k paced: every
        // paced step above 200k is client-bound, and it sets the ceiling.
        let mut calls = 0;
        let trial = |rate: Option<f64>| -> Result<Observation, ()> {
            calls += 1;
            let sent = match rate {
                None => 1e6,
                Some(r) => r.min(2e5),
            };
            let received = sent.min(5e5);
            Ok(Observation {
                sent_pps: sent,
                received_pps: received,
                loss_fraction: (sent - received) / sent,
            })
        };
        let out = search(&SearchConfig::default(), trial, |o| *o).unwrap();
        assert!(out.client_bound);
        assert!(out.steps.iter().any(|s| s.client_bound));
        let best = out.best_step().unwrap().rate_pps;
        assert!(
            best <= 2e5 / 0.98,
            "{best} is at most what the generator could send"
        );
        assert!(
            best >= 1.9e5,
            "a short-falling pass is credited at what was sent"
        );
    }

    #[test]
    fn acceptable_loss_raises_the_result() {
        let lossy = |rate: Option<f64>| -> Result<Observation, ()> {
            let sent = rate.unwrap_or(1e6);
            // 0.1% loss from 100k up, total loss above 400k.
            let loss = if sent > 4e5 {
                0.5
            } else if sent > 1e5 {
                0.001
            } else {
                0.0
            };
            Ok(Observation {
                sent_pps: sent,
                received_pps: sent * (1.0 - loss),
                loss_fraction: loss,
            })
        };
        let strict = search(&SearchConfig::default(), lossy, |o| *o).unwrap();
        let lenient_cfg = SearchConfig {
            loss: 0.01,
            ..SearchConfig::default()
        };
        let lenient = search(&lenient_cfg, lossy, |o| *o).unwrap();
        let rate = |o: &Outcome<Observation>| o.best_step().unwrap().offered_pps.unwrap();
        assert!(rate(&strict) <= 1e5);
        assert!(rate(&lenient) > 3.5e5);
    }

    #[test]
    fn a_device_that_passes_nothing_gives_no_rate() {
        let dead = |rate: Option<f64>| -> Result<Observation, ()> {
            Ok(Observation {
                sent_pps: rate.unwrap_or(1e6),
                received_pps: 0.0,
                loss_fraction: 1.0,
            })
        };
        let out = search(&SearchConfig::default(), dead, |o| *o).unwrap();
        assert_eq!(out.best, None);
        assert!(out.steps.len() <= 12);
    }
}
