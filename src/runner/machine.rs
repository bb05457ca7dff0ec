//! The machine at the start of a run: tuned first when asked (`run
//! --tune`, `[machine] tune`), then read into the fingerprint, with one
//! warning per reading that can bias a comparison.

use super::tune::{self, Tuned};
use crate::probe::machine::{self, MachineReadings};
use crate::recipe::Experiment;
use machine::CHECK_WINDOW;
use std::path::Path;
use std::time::Duration;

/// The machine as the run found it (and the tune, put back when dropped).
pub(super) struct Checked {
    /// What goes into the run's fingerprint.
    pub readings: MachineReadings,
    /// The tune, if one was asked for: undone when the run ends.
    _tuned: Option<Tuned>,
}

/// Tunes the machine if `exp` asks, then reads and warns.
pub(super) fn check(exp: &Experiment, base_dir: &Path) -> Result<Checked, tune::TuneError> {
    let server = server_cpus(exp);
    let tuned = match exp.machine.tune {
        true => {
            let t = tune::apply(
                base_dir,
                &machine::gather(server.as_deref(), Duration::ZERO),
            )?;
            for (file, change) in &t.record {
                eprintln!("tune: {file}: {change}");
            }
            for note in &t.notes {
                eprintln!("tune: {note}");
            }
            Some(t)
        }
        false => None,
    };
    let mut facts = machine::gather(server.as_deref(), CHECK_WINDOW);
    let mut readings = machine::readings(&facts);
    if let Some(t) = &tuned {
        readings.tuned = t.record.clone();
        let before = facts.irqbalance.len();
        facts
            .irqbalance
            .retain(|pid| !t.record.contains_key(&format!("irqbalance PID {pid}")));
        if facts.irqbalance.len() < before {
            readings.irqbalance.0 = format!("paused by --tune (was {})", readings.irqbalance.0);
        }
    }
    for w in machine::warnings(&facts) {
        // What is left after a tune is what it could not change.
        let w = match tuned {
            Some(_) => w
                .replace(" (or run --tune)", "")
                .replace(", or run --tune to pause it", ""),
            None => w,
        };
        eprintln!("machine: {w}");
    }
    Ok(Checked {
        readings,
        _tuned: tuned,
    })
}

/// The CPUs every server of this machine is pinned to, or `None` when one
/// of them is not pinned (or none runs here).
fn server_cpus(exp: &Experiment) -> Option<Vec<usize>> {
    let mut cpus = std::collections::BTreeSet::new();
    for point in exp.points() {
        for system in 0..exp.systems.len() {
            if exp.plan.systems[system].host.is_some() {
                continue;
            }
            let n = exp.plan.point(system, &point).server_cpus?;
            cpus.extend(crate::recipe::sweep::server_cpu_list(n));
        }
    }
    (!cpus.is_empty()).then(|| cpus.into_iter().collect())
}
