//! A window is what it says: a trial is a measurement only if its load ran
//! for the configured window while the load generator could run. Three
//! checks, one pure function ([`judge_window`]):
//!
//! - *held*: the load generator's own process was held still (SIGSTOP,
//!   Ctrl-Z then `fg`, a frozen cgroup, a suspend) for longer than
//!   [`HELD_LIMIT`], as [`crate::load::held`] saw it. Requests were neither
//!   sent nor counted for that stretch, so the rate is not the server's.
//!   Nothing is wrong with the system under test: the trial is discarded
//!   and `--resume` runs it again.
//! - *overran*: the load ran longer than the window, its drain and
//!   [`OVERRUN_SLACK`] allow. The rate is then over another window than
//!   the one configured; the trial is stored as failed with that reason.
//! - *probe overran*: the server probe's window ran past the load's by
//!   more than one interval and [`OVERRUN_SLACK`] (a host's probe shell
//!   frozen, its last sample late): the server's figures are over another
//!   window; the trial is stored as failed with that reason.

use std::time::Duration;

/// The longest the load generator may be held still in a window. In 48
/// trials of every load kind on a busy 2-CPU machine the watcher saw at
/// most 15 ms (run-queue waits are not counted); 250 ms is a quarter of a
/// timeline second, far above that and far below a Ctrl-Z and `fg`.
pub(crate) const HELD_LIMIT: Duration = Duration::from_millis(250);

/// What a window may run past its duration plus the drain (the request
/// timeout: the database and DNS drivers wait up to that long for the
/// answers in flight at the deadline): thread start and join, and a last
/// event-loop turn. In those 48 trials (http, pg, mysql, dns at a fixed
/// rate and ramped, forward at a fixed rate and searching; 2 s windows,
/// debug build) the load ran at most 20 ms past its duration; 500 ms
/// leaves a busy machine room and is far below any stop that matters.
pub(crate) const OVERRUN_SLACK: Duration = Duration::from_millis(500);

/// What one trial's load run says about its window.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Window {
    /// The configured measured window (`[trials] duration`).
    pub duration: Duration,
    /// How long a driver may wait for the answers in flight at the end
    /// (`timeout`).
    pub drain: Duration,
    /// How long the load ran by its own clock ([`crate::load::LoadResult::elapsed`]).
    pub elapsed: Duration,
    /// The longest stretch the load generator was held still.
    pub held: Duration,
    /// Who ran the load: `scalelab` or `the agent on client host NAME`.
    pub client: String,
    /// The server probe's window (its first sample to its last), when it
    /// gave one.
    pub probe_s: Option<f64>,
    /// The probe's interval (`[trials] sample_interval`).
    pub interval: Duration,
    /// Who probed the server: `the probe on HOST (over ssh)`, ...
    pub prober: String,
}

/// Why a trial's window is not what it says.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum WindowFault {
    /// The load generator was held still: the trial is discarded, and
    /// `--resume` runs it again.
    Held(String),
    /// The load ran past its window: the trial is failed with this reason.
    Overran(String),
    /// The probe's window ran past the load's by more than one interval
    /// and [`OVERRUN_SLACK`] (its shell or host stalled, and its last
    /// sample came late): the server's figures are over another window,
    /// and the trial is failed with this reason.
    ProbeOverran(String),
}

/// The fault of a trial's window, or `None` when it measured what it says.
/// A stop comes first: it is also what makes a window overrun.
pub(crate) fn judge_window(w: &Window) -> Option<WindowFault> {
    let secs = |d: Duration| format!("{:.2}s", d.as_secs_f64());
    if w.held > HELD_LIMIT {
        return Some(WindowFault::Held(format!(
            "{} was stopped for {} during the {} measured window (SIGSTOP, Ctrl-Z, a frozen \
             cgroup or a suspend): its load ran {} and the rate would not be the server's",
            w.client,
            secs(w.held),
            secs(w.duration),
            secs(w.elapsed),
        )));
    }
    let allowed = w.duration + w.drain + OVERRUN_SLACK;
    if w.elapsed <= allowed {
        return probe_overran(w);
    }
    Some({
        WindowFault::Overran(format!(
            "the measured window overran: the load ran {} for a {} window (at most {} with \
             the {} timeout's drain and {} slack)",
            secs(w.elapsed),
            secs(w.duration),
            secs(allowed),
            secs(w.drain),
            secs(OVERRUN_SLACK),
        ))
    })
}

/// The probe's window against the load's: more than one interval and
/// [`OVERRUN_SLACK`] over is a fault (a frozen probe shell gave a 6.6 s
/// window for a 2 s load, and its server CPU over the longer window).
fn probe_overran(w: &Window) -> Option<WindowFault> {
    let probe = w.probe_s?;
    let allowed = w.elapsed + w.interval + OVERRUN_SLACK;
    (probe > allowed.as_secs_f64()).then(|| {
        WindowFault::ProbeOverran(format!(
            "the probe's window ran {probe:.2}s for the {:.2}s load window (more than one \
             {:.2}s interval and {:.2}s slack over: {} answered late, its shell or host stalled): \
             the server's figures would be over another window than the load's",
            w.elapsed.as_secs_f64(),
            w.interval.as_secs_f64(),
            OVERRUN_SLACK.as_secs_f64(),
            w.prober,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(elapsed_ms: u64, held_ms: u64) -> Window {
        Window {
            duration: Duration::from_secs(3),
            drain: Duration::from_secs(2),
            elapsed: Duration::from_millis(elapsed_ms),
            held: Duration::from_millis(held_ms),
            client: "scalelab".into(),
            probe_s: None,
            interval: Duration::from_millis(500),
            prober: "the probe on root@h1 (over ssh)".into(),
        }
    }

    #[test]
    fn a_probe_window_past_the_load_by_more_than_an_interval_is_a_fault() {
        // The figures: a 6.6 s probe window for a 2 s load.
        let w = |probe_s| Window {
            probe_s: Some(probe_s),
            ..window(2_000, 0)
        };
        let Some(WindowFault::ProbeOverran(why)) = judge_window(&w(6.6)) else {
            panic!("a 6.6 s probe window for a 2 s load is a fault");
        };
        assert!(
            why.starts_with("the probe's window ran 6.60s for the 2.00s load window")
                && why.contains("the probe on root@h1 (over ssh) answered late"),
            "{why}"
        );
        // Within one interval and the slack: the probe's own edges.
        assert_eq!(judge_window(&w(2.9)), None);
        assert!(judge_window(&w(3.1)).is_some());
    }

    #[test]
    fn an_ordinary_window_is_a_measurement() {
        assert_eq!(judge_window(&window(3_001, 0)), None);
        assert_eq!(judge_window(&window(3_020, 4)), None);
        // A shorter window (a budget, an early end) is not an overrun.
        assert_eq!(judge_window(&window(1_200, 0)), None);
    }

    #[test]
    fn a_drain_up_to_the_timeout_is_allowed() {
        assert_eq!(judge_window(&window(5_000, 0)), None);
        assert_eq!(judge_window(&window(5_499, 0)), None);
    }

    #[test]
    fn the_reported_pause_is_held_not_stored() {
        // The numbers: 3 s window, 5.80 s run, stopped 5 s.
        let Some(WindowFault::Held(why)) = judge_window(&window(5_800, 5_000)) else {
            panic!("a 5 s stop must discard the trial");
        };
        assert!(why.starts_with("scalelab was stopped for 5.00s"), "{why}");
        // A stop short of an overrun is still a stop.
        assert!(matches!(
            judge_window(&window(3_400, 400)),
            Some(WindowFault::Held(_))
        ));
        assert_eq!(judge_window(&window(3_100, 250)), None);
    }

    #[test]
    fn an_overrun_without_a_stop_fails_the_trial() {
        let Some(WindowFault::Overran(why)) = judge_window(&window(5_600, 0)) else {
            panic!("5.6 s for a 3 s window with a 2 s drain is an overrun");
        };
        assert!(
            why.contains("5.60s for a 3.00s window (at most 5.50s"),
            "{why}"
        );
    }
}
