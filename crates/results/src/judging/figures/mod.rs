//! Facts about the run as a whole that the seed figures need, read once
//! from the stored trials and environment. The figures themselves are
//! built in `super::charts::seed_figs` (and seed 000's two-y-axis chart is
//! drawn by `super::svg::DualAxisChart`).
//!
//! Everything here is decided from typed data: the load kind's
//! [`RateUnit`], the probe's [`FreqSource`], the server's placement and the
//! load kind's [`RateNote`], never from names.

use crate::record::facts::RateNote;
use crate::record::probe::freq::FreqSource;
use crate::store::{RunData, TrialStatus};
use crate::units::RateUnit;

/// What the figures say about the run beyond its cells.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFacts {
    /// What the throughput counts, from the run's load kind (`None` when
    /// the stored kind is unknown to this build).
    pub rate_unit: Option<RateUnit>,
    /// The CPUs the server could use: its pinned set when the run pinned
    /// it, else the online CPUs of the host it ran on (the probe's count,
    /// or the environment's for a run without probe figures).
    pub server_cpus: Option<u32>,
    /// The CPU frequency in the probe's load × frequency is nominal: the
    /// probe had no cpufreq and read `/proc/cpuinfo`, whose MHz does not
    /// move on a VM. `Some(driver)` names the fingerprint's cpufreq driver
    /// (`none: no cpufreq`).
    pub nominal_freq: Option<String>,
    /// What the load kind says of its rate beside the unit (a forwarding
    /// run's directions), from the first successful trial that says any;
    /// `None` for kinds that say nothing.
    pub rate_note: Option<RateNote>,
}

impl RunFacts {
    /// The facts of a stored run.
    pub fn of(data: &RunData) -> RunFacts {
        let ok = || data.trials.iter().filter(|t| t.status == TrialStatus::Ok);
        let pinned = ok().find_map(|t| {
            let cpus = t.context.placement.as_ref()?.cpus.as_ref()?;
            u32::try_from(cpus.len()).ok()
        });
        let online = ok()
            .find_map(|t| t.probe.as_ref().map(|p| p.online_cpus))
            .filter(|n| *n > 0)
            .or_else(|| {
                let env = data.run.environment.as_ref()?;
                Some(env.machine.online_cpus).filter(|n| *n > 0)
            });
        let cpufreq = FreqSource::Cpufreq.as_str();
        let nominal = ok()
            .filter_map(|t| t.probe.as_ref())
            .any(|p| p.load_x_freq.is_some() && p.freq_source != cpufreq);
        let driver = data
            .run
            .environment
            .as_ref()
            .map(|e| e.machine.cpufreq_driver.clone())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| format!("frequency read from {}", FreqSource::Cpuinfo.as_str()));
        RunFacts {
            rate_unit: data.run.rate_unit,
            server_cpus: pinned.or(online),
            nominal_freq: nominal.then_some(driver),
            rate_note: ok().find_map(|t| t.context.extras.rate_note()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::run_data;

    #[test]
    fn facts_come_from_the_probe_the_placement_and_the_forward_report() {
        let mut data = run_data(&["a"]);
        let f = RunFacts::of(&data);
        assert_eq!(f.rate_unit, Some(RateUnit::Requests));
        assert_eq!(f.server_cpus, Some(2), "the environment's online CPUs");
        assert_eq!(f.nominal_freq, None, "no load × frequency in the fixture");
        assert_eq!(f.rate_note, None);
        crate::judging::test_support::at_nominal_frequency(&mut data);
        for t in &mut data.trials {
            if let Some(p) = t.probe.as_mut() {
                p.online_cpus = 8;
            }
            t.context.placement = Some(crate::placement::PlacementFacts {
                cpus: Some(vec![1, 2, 3]),
                ..Default::default()
            });
        }
        let f = RunFacts::of(&data);
        assert_eq!(f.server_cpus, Some(3), "the pinned set wins");
        assert_eq!(f.nominal_freq.as_deref(), Some("none: no cpufreq"));
        for t in &mut data.trials {
            t.context.placement = None;
            if let Some(p) = t.probe.as_mut() {
                p.freq_source = FreqSource::Cpufreq.as_str().into();
            }
        }
        let f = RunFacts::of(&data);
        assert_eq!(
            f.server_cpus,
            Some(8),
            "the probe's count on the server host"
        );
        assert_eq!(f.nominal_freq, None, "cpufreq moves with the load");
    }
}
