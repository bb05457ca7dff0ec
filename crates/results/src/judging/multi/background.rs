//! Background load: what the rest of the server's machine used while a
//! run measured, from each trial's stored probe summary. Two runs that
//! differ in it by more than [`THRESHOLD_CPUS`] are named, so a
//! difference is not read as the operating system's when another tenant
//! took the CPU.

use crate::analysis::summary::median;
use crate::store::RunData;

/// Runs whose background load differs by more than this many CPUs (a
/// quarter of one CPU, median over their trials) are named.
pub const THRESHOLD_CPUS: f64 = 0.25;

/// CPUs used by processes other than the server and, on a local run, the
/// load generator: median over the run's successful trials of busy CPUs
/// minus the server's share minus the generator's; `None` without a
/// probed trial.
pub fn other_cpus(data: &RunData) -> Option<f64> {
    // On a multi-host run the probe is the server host's, where the load
    // generator does not run.
    let local = data
        .run
        .environment
        .as_ref()
        .map_or(true, |e| e.hosts.is_empty());
    let per_trial: Vec<f64> = data
        .trials
        .iter()
        .filter(|t| t.throughput().is_some())
        .filter_map(|t| {
            let p = t.probe.as_ref()?;
            if p.background.is_some_and(|b| b.server_unknown) {
                // The server's own CPU is in the rest: not a tenant's.
                return None;
            }
            let busy = p.cpu_busy * f64::from(p.online_cpus);
            let server = p.server_cpu_util.unwrap_or(0.0);
            let client = match (&t.measurement, local) {
                (Some(m), true) if m.duration_s.0 > 0.0 => m.client_cpu_s.0 / m.duration_s.0,
                _ => 0.0,
            };
            Some((busy - server - client).max(0.0))
        })
        .collect();
    median(&per_trial)
}

/// A sentence for each run whose background load differs from the first
/// run's by more than [`THRESHOLD_CPUS`]; `names` are the runs' page names.
pub fn differences(runs: &[RunData], names: &[String]) -> Vec<String> {
    let loads: Vec<Option<f64>> = runs.iter().map(other_cpus).collect();
    let Some(Some(base)) = loads.first().copied() else {
        return Vec::new();
    };
    loads
        .iter()
        .zip(names)
        .skip(1)
        .filter_map(|(load, name)| {
            let load = (*load)?;
            ((load - base).abs() > THRESHOLD_CPUS).then(|| {
                format!(
                    "background load differs: other processes used {load:.2} CPUs during `{name}` \
                     against {base:.2} during `{}` (median per trial; the threshold is {} CPUs), \
                     so part of the difference may be theirs",
                    names[0], THRESHOLD_CPUS
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::run_data;

    fn with_busy(mut d: RunData, busy: f64) -> RunData {
        for t in &mut d.trials {
            if let Some(p) = &mut t.probe {
                p.cpu_busy = busy;
                p.online_cpus = 2;
                p.server_cpu_util = Some(0.1);
            }
        }
        d
    }

    #[test]
    fn a_busier_machine_is_named_and_a_quiet_one_is_not() {
        let a = with_busy(run_data(&["nginx"]), 0.5);
        let quiet = other_cpus(&a).expect("probed trials");
        let same = with_busy(run_data(&["nginx"]), 0.5);
        // 2 CPUs: 0.4 more busy is 0.8 CPUs more.
        let busy = with_busy(run_data(&["nginx"]), 0.9);
        let loaded = other_cpus(&busy).unwrap();
        assert!((loaded - quiet - 0.8).abs() < 1e-9, "{quiet} {loaded}");
        let names = ["A".to_string(), "B".into(), "C".into()];
        let d = differences(&[a, same, busy], &names);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("during `C` against"), "{}", d[0]);
    }
}
