//! The `forward` load: a UDP packet generator and counter that drives
//! frames from A through the router R to B (and back, bidirectionally), and
//! the RFC 2544 throughput search on top of it.
//!
//! - [`frame`]: frame sizes, the payload (sequence number + timestamp), the
//!   receiver's sequence tracker (sans IO);
//! - [`tx`]: the ways frames are handed to the kernel (`sendmmsg`,
//!   `AF_PACKET` TX ring, io_uring), one [`tx::Transmit`] each;
//! - `worker`: the paced sender and the `recvmmsg` receiver;
//! - [`trial`]: one fixed-rate trial, reconciled against the kernel's
//!   counters in A, R and B;
//! - [`search`]: the binary search for the zero-loss rate;
//! - [`sink`]: sending only, from a private namespace into a sink the
//!   user built, counted by the interface's TX counter (the generator
//!   against other generators, like for like).
//!
//! A run with a rate (`Pacing::Open`) is one trial at that rate. A closed
//! run is the RFC 2544 search, each step lasting the run's duration; its
//! result is the best passing step, with every step in
//! [`LoadResult::extras`].

mod facts;
pub mod frame;
#[cfg(any(test, feature = "test-support"))]
pub use facts::test_extras;
pub mod search;
pub mod sink;
pub mod trial;
pub mod tx;
pub(crate) mod worker;

use super::{Driver, ErrorKind, LoadError, LoadResult, LoadSpec, Pacing};
use crate::model::topology::{Topology, A_IF};
use crate::shutdown::Shutdown;
use crate::units::{Bytes, CpuSeconds};
use frame::FrameSize;
use search::{Observation, Outcome, SearchConfig};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use trial::{TrialPlan, TrialReport};

/// The registry entry: `[load] kind = "forward"`.
pub const LOAD_KIND: crate::load::LoadKind = crate::load::LoadKind {
    name: "forward",
    protocol: crate::model::Protocol::FRAMES,
    unit: crate::units::RateUnit::Frames,
    error_kinds: &[ErrorKind::Write],
    requires: &[],
    compile: |t| {
        let settings = ForwardSettings::parse(t)?;
        Ok(crate::load::kind::searching_plan(
            settings,
            |s, endpoint| Ok(Box::new(ForwardDriver::new(s.clone(), endpoint)?)),
            crate::load::kind::no_dataset,
            // A search stops once its bracket is narrow enough: on this
            // VM after about half its steps at the least (4 to 9 of 12).
            |s| {
                let most = s.search_config().max_steps;
                most.div_ceil(2)..=most
            },
        ))
    },
    facts: Some(crate::load::facts::FactsReader::of::<ForwardReport>()),
};

/// `[load] kind = "forward"` settings.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ForwardSettings {
    /// Ethernet frame size in bytes, FCS included (RFC 2544: 64 to 1518).
    pub frame_size: Option<u32>,
    /// Send A→B and B→A at once (the rate is split between them).
    #[serde(default)]
    pub bidirectional: bool,
    /// Acceptable loss in percent of frames sent (default 0).
    pub loss: Option<f64>,
    /// Search precision in percent of the rate (default 2).
    pub precision: Option<f64>,
    /// Most trials per search (default 12).
    pub max_steps: Option<u32>,
    /// How frames are handed to the kernel (default: the fastest measured
    /// on the project's machine; see `bench/generator-methods.sh`).
    #[serde(default)]
    pub generator: tx::Generator,
}

impl ForwardSettings {
    pub(crate) fn parse(t: &toml::Table) -> Result<ForwardSettings, LoadError> {
        let s: ForwardSettings = crate::kinds::parse_settings(t).map_err(LoadError::Spec)?;
        s.validate()?;
        Ok(s)
    }

    pub(crate) fn frame_size(&self) -> u32 {
        self.frame_size.unwrap_or(64)
    }

    /// Checks values no run can honour (the MTU is checked at run time).
    pub fn validate(&self) -> Result<(), LoadError> {
        FrameSize::checked(self.frame_size(), 9000).map_err(LoadError::Spec)?;
        let pct = |name: &str, v: Option<f64>, lo: f64| match v {
            Some(v) if !(v.is_finite() && v >= lo && v < 100.0) => Err(LoadError::Spec(format!(
                "`{name}` is {v}; give a percentage from {lo} to below 100"
            ))),
            _ => Ok(()),
        };
        pct("loss", self.loss, 0.0)?;
        pct("precision", self.precision, 0.1)?;
        if self.max_steps.is_some_and(|n| !(2..=64).contains(&n)) {
            return Err(LoadError::Spec("`max_steps` must be 2 to 64".into()));
        }
        Ok(())
    }

    pub(crate) fn search_config(&self) -> SearchConfig {
        let d = SearchConfig::default();
        SearchConfig {
            loss: self.loss.map_or(d.loss, |p| p / 100.0),
            precision: self.precision.map_or(d.precision, |p| p / 100.0),
            max_steps: self.max_steps.unwrap_or(d.max_steps),
            ..d
        }
    }
}

/// Everything a forwarding run found, stored with the trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForwardReport {
    /// Ethernet frame size in bytes, FCS included, as checked against the
    /// lab's MTU (the setting, or 64 when unset).
    pub frame_size: u32,
    /// Frames went A→B and B→A at once; `pps` is the sum of both.
    pub bidirectional: bool,
    /// Acceptable loss, percent.
    pub loss: f64,
    /// The highest offered rate that passed (frames/s over all directions);
    /// 0 when none did.
    pub pps: f64,
    /// `pps` as Gbit/s of frame bytes.
    pub gbit_s: f64,
    /// The generator, not the router, bounded the result.
    pub client_bound: bool,
    /// How the generator handed frames to the kernel.
    #[serde(default)]
    pub generator: tx::Generator,
    /// Every search step, in order, with its reconciled kernel counters.
    pub search: Outcome<TrialReport>,
}

impl ForwardReport {
    /// The trial that gave the result.
    pub fn best(&self) -> Option<&TrialReport> {
        self.search.best_step().map(|s| &s.trial)
    }

    /// Why no step passed, from the kernel's counters at the lowest rate
    /// tried: whether the frames were lost in the router or entering the
    /// receiving host (so "no rate got through R" is said only when R lost
    /// them).
    pub fn nothing_passed(&self) -> String {
        let limit = format!("no rate passed with at most {}% lost", self.loss);
        let lowest = self
            .search
            .steps
            .iter()
            .min_by(|a, b| a.trial.sent_pps.total_cmp(&b.trial.sent_pps));
        let Some(step) = lowest else {
            return format!("{limit}: no step ran");
        };
        let t = &step.trial;
        let at = format!(
            "at the lowest rate tried ({:.0} frames/s offered), {} of {} frames sent were lost",
            t.sent_pps, t.lost, t.sent
        );
        let (router, receiver) = (t.lost_in_router(), t.lost_at_receiver());
        match trial::LossSite::of(router, receiver) {
            Some(trial::LossSite::Router) => format!(
                "{limit}: no rate got through R; {at}, {router} of them in the router R \
                 and {receiver} entering the receiving host"
            ),
            Some(trial::LossSite::Receiver) => format!(
                "{limit}, and the router was not the limit: {at}, {receiver} of them \
                 entering the receiving host (its input queue or socket) and {router} in \
                 the router R"
            ),
            None => format!(
                "{limit}: {at}, none of them in the router or at the receiver (the \
                 sending host's interface lost them)"
            ),
        }
    }
}

/// The `forward` load's driver: runs trials (or the RFC 2544 search)
/// through the router lab its endpoint names. It holds no sockets between
/// runs; each trial opens and closes its own.
pub struct ForwardDriver {
    settings: ForwardSettings,
    topology: Topology,
}

impl ForwardDriver {
    /// A driver for the lab `endpoint` names (the router target's
    /// `netns:a=..,r=..,b=..` string). `settings` are taken as given: call
    /// [`ForwardSettings::validate`] first. Any other endpoint is a
    /// [`LoadError::Target`] naming the router kind it needs.
    pub fn new(settings: ForwardSettings, endpoint: &str) -> Result<Self, LoadError> {
        let topology = Topology::parse(endpoint).map_err(|reason| LoadError::Target {
            target: endpoint.to_string(),
            reason: format!("{reason}; the forward load needs `[server] kind = \"router\"`"),
        })?;
        Ok(ForwardDriver { settings, topology })
    }

    fn frame(&self) -> Result<FrameSize, LoadError> {
        let mtu = worker::link_mtu(&self.topology.a.netns, A_IF)
            .map_err(|e| LoadError::Setup(e.to_string()))?;
        FrameSize::checked(self.settings.frame_size(), mtu).map_err(LoadError::Spec)
    }

    /// Runs the search (or one trial at `spec`'s rate) and reports it.
    pub fn forward(
        &self,
        spec: &LoadSpec,
        shutdown: &Shutdown,
    ) -> Result<ForwardReport, LoadError> {
        spec.validate()?;
        let frame = self.frame()?;
        let plan = |rate| TrialPlan {
            topology: self.topology.clone(),
            frame,
            bidirectional: self.settings.bidirectional,
            rate,
            duration: spec.duration,
            cpus: spec.client_cpus.clone(),
            generator: self.settings.generator,
        };
        let cfg = self.settings.search_config();
        let run = |rate| {
            if shutdown.is_triggered() {
                return Err(LoadError::Setup(
                    "interrupted: a search cut short has no result".into(),
                ));
            }
            trial::run(&plan(rate), shutdown)
        };
        let observe = |t: &TrialReport| Observation {
            sent_pps: t.sent_pps,
            received_pps: t.received as f64 / t.duration_s.max(1e-9),
            loss_fraction: t.loss_fraction(),
        };
        let outcome = match spec.pacing {
            Pacing::Closed => search::search(&cfg, run, observe)?,
            Pacing::Open { rate } => one_step(&cfg, run(Some(rate))?, rate, observe),
        };
        if shutdown.is_triggered() {
            return Err(LoadError::Setup(
                "interrupted: a search cut short has no result".into(),
            ));
        }
        let pps = outcome.best_step().map_or(0.0, |s| s.rate_pps);
        Ok(ForwardReport {
            frame_size: frame.0,
            bidirectional: self.settings.bidirectional,
            loss: cfg.loss * 100.0,
            pps,
            gbit_s: frame.gbit_s(pps),
            client_bound: outcome.client_bound,
            generator: self.settings.generator,
            search: outcome,
        })
    }
}

/// A fixed-rate run as a one-step outcome.
fn one_step(
    cfg: &SearchConfig,
    t: TrialReport,
    rate: f64,
    observe: impl Fn(&TrialReport) -> Observation,
) -> Outcome<TrialReport> {
    let o = observe(&t);
    let client_bound = o.sent_pps < rate * cfg.sent_tolerance;
    let passed = o.loss_fraction <= cfg.loss;
    Outcome {
        steps: vec![search::Step {
            offered_pps: Some(rate),
            rate_pps: if client_bound { o.sent_pps } else { rate },
            passed,
            client_bound,
            trial: t,
        }],
        best: passed.then_some(0),
        client_bound,
    }
}

impl Driver for ForwardDriver {
    fn name(&self) -> &'static str {
        "forward"
    }

    /// `requests` are the frames received in the best step and `elapsed`
    /// its length, so `rps()` is the frames/s delivered at the found rate.
    fn run(&self, spec: &LoadSpec, shutdown: &Shutdown) -> Result<LoadResult, LoadError> {
        let cpu0 = super::process_cpu();
        let report = self.forward(spec, shutdown)?;
        let mut r = LoadResult::new();
        if let Some(best) = report.best() {
            r.requests = best.received;
            r.bytes = Bytes(best.received * u64::from(report.frame_size));
            r.elapsed = Duration::from_secs_f64(best.duration_s);
            if let Some(h) = &best.latency {
                r.latency = h.clone();
            }
            r.timeline = vec![best.received];
        }
        r.target_rate = Some(report.pps);
        // The CPU of the whole search, prorated to the reported step.
        let searched: f64 = report.search.steps.iter().map(|s| s.trial.duration_s).sum();
        let share = r.elapsed.as_secs_f64() / searched.max(1e-9);
        r.client_cpu = CpuSeconds((super::process_cpu().0 - cpu0.0) * share);
        if report.client_bound {
            r.notes
                .push("the generator could not offer more than the router took".into());
        }
        r.extras = crate::load::facts::TrialExtras::new(report);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed one-step search whose direction lost `in_router` frames in
    /// R and `at_receiver` entering B, of 10000 sent at 418777 frames/s.
    fn failed(in_router: u64, at_receiver: u64) -> ForwardReport {
        let lost = in_router + at_receiver;
        let trial: TrialReport = serde_json::from_value(serde_json::json!({
            "offered_pps": 418777.0, "sent_pps": 460746.0, "duration_s": 0.02,
            "directions": [{
                "name": "a_to_b", "sent": 10000, "sent_kernel": 10000,
                "received_kernel": 10000 - lost, "received_socket": 10000 - lost,
                "counted_by": "socket", "lost": lost, "lost_kernel": lost,
                "duplicates": 0, "reordered": 0, "router_out": 10000 - in_router,
                "lost_in_router": in_router, "lost_at_receiver": at_receiver,
            }],
            "kernel": trial::KernelCounters::default(),
            "lost": lost, "sent": 10000, "received": 10000 - lost, "forwarded": 10000,
            "send_errors": 0, "reconciled": true,
        }))
        .unwrap();
        ForwardReport {
            frame_size: 64,
            bidirectional: false,
            loss: 0.0,
            pps: 0.0,
            gbit_s: 0.0,
            client_bound: false,
            generator: tx::Generator::default(),
            search: Outcome {
                steps: vec![search::Step {
                    offered_pps: Some(418_777.0),
                    rate_pps: 418_777.0,
                    passed: false,
                    client_bound: false,
                    trial,
                }],
                best: None,
                client_bound: false,
            },
        }
    }

    #[test]
    fn nothing_passed_names_where_the_frames_were_lost() {
        let at_b = failed(4, 194).nothing_passed();
        assert_eq!(
            at_b,
            "no rate passed with at most 0% lost, and the router was not the limit: at the \
             lowest rate tried (460746 frames/s offered), 198 of 10000 frames sent were lost, \
             194 of them entering the receiving host (its input queue or socket) and 4 in the \
             router R"
        );
        assert!(!at_b.contains("got through R"), "{at_b}");
        let in_r = failed(150, 3).nothing_passed();
        assert!(
            in_r.starts_with("no rate passed with at most 0% lost: no rate got through R;"),
            "{in_r}"
        );
        assert!(in_r.ends_with("150 of them in the router R and 3 entering the receiving host"));
        let t = &failed(4, 194).search.steps[0].trial;
        assert_eq!(t.loss_site(), Some(trial::LossSite::Receiver));
        assert_eq!((t.lost_in_router(), t.lost_at_receiver()), (4, 194));
        assert!((t.received_pps() - 9802.0 / 0.02).abs() < 1e-6);
    }

    #[test]
    fn a_stored_step_without_the_loss_split_still_reads() {
        let mut v = serde_json::to_value(&failed(1, 2).search.steps[0].trial).unwrap();
        for key in ["router_out", "lost_in_router", "lost_at_receiver"] {
            v["directions"][0].as_object_mut().unwrap().remove(key);
        }
        let t: TrialReport = serde_json::from_value(v).unwrap();
        assert_eq!(t.loss_site(), None);
    }
}
