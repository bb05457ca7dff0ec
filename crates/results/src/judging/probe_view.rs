//! The probe's figures as the exports show them: named columns read from
//! the one [`ProbeSummary`] the probe writes and the store keeps.

use crate::record::probe::ProbeSummary;

/// Reads one figure of a summary; `None` when the probe could not tell.
pub type Read = fn(&ProbeSummary) -> Option<f64>;

/// Numeric probe columns the exports carry, in column order: the
/// summary's field name (a nested one by its path, `work.syscalls`) and
/// how to read it.
pub const PROBE_NUMBERS: &[(&str, Read)] = &[
    ("server_cpu_s", |p| p.server_cpu_s),
    ("server_cpu_util", |p| p.server_cpu_util),
    ("cpu_busy", |p| Some(p.cpu_busy)),
    ("online_cpus", |p| Some(f64::from(p.online_cpus))),
    ("freq_mhz_mean", |p| p.freq_mhz_mean),
    ("load_x_freq", |p| p.load_x_freq),
    ("procs_running_mean", |p| Some(p.procs_running_mean)),
    ("loadavg_1", |p| Some(p.loadavg_1)),
    ("mem_per_worker_rss_bytes", |p| {
        p.mem_per_worker_rss_bytes.map(|v| v as f64)
    }),
    ("mem_per_worker_vsz_bytes", |p| {
        p.mem_per_worker_vsz_bytes.map(|v| v as f64)
    }),
    ("server_rss_max_bytes", |p| {
        p.server_rss_max_bytes.map(|v| v as f64)
    }),
    ("processes", |p| p.processes.map(f64::from)),
    ("threads", |p| p.threads.map(f64::from)),
    ("processes_seen", |p| p.processes_seen.map(f64::from)),
    ("ctx_voluntary", |p| p.ctx_voluntary.map(|v| v as f64)),
    ("ctx_involuntary", |p| p.ctx_involuntary.map(|v| v as f64)),
    ("net_rx_bytes", |p| Some(p.net_rx_bytes as f64)),
    ("net_tx_bytes", |p| Some(p.net_tx_bytes as f64)),
    ("client_cpu_s", |p| Some(p.client_cpu_s)),
    ("client_runq_wait_s", |p| Some(p.client_runq_wait_s)),
    ("sampler_cpu_s", |p| Some(p.sampler_cpu_s)),
    ("sampler_cpu_util", |p| Some(p.sampler_cpu_util)),
    ("work.syscalls", |p| {
        p.work.as_ref()?.syscalls.map(|v| v as f64)
    }),
    ("work.io_calls.reads", |p| {
        p.work.as_ref()?.io_calls.map(|c| c.reads as f64)
    }),
    ("work.io_calls.writes", |p| {
        p.work.as_ref()?.io_calls.map(|c| c.writes as f64)
    }),
    ("work.context_switches", |p| {
        p.work.as_ref()?.context_switches.map(|v| v as f64)
    }),
    ("work.cpu_migrations", |p| {
        p.work.as_ref()?.cpu_migrations.map(|v| v as f64)
    }),
    ("work.minor_faults", |p| {
        p.work.as_ref()?.minor_faults.map(|v| v as f64)
    }),
    ("work.major_faults", |p| {
        p.work.as_ref()?.major_faults.map(|v| v as f64)
    }),
    ("work.user_s", |p| p.work.as_ref()?.user_s),
    ("work.system_s", |p| p.work.as_ref()?.system_s),
    ("work.hardware.cycles", |p| {
        hardware(p)?.cycles.map(|v| v as f64)
    }),
    ("work.hardware.instructions", |p| {
        hardware(p)?.instructions.map(|v| v as f64)
    }),
    ("work.hardware.llc_misses", |p| {
        hardware(p)?.llc_misses.map(|v| v as f64)
    }),
    ("work.hardware.branch_misses", |p| {
        hardware(p)?.branch_misses.map(|v| v as f64)
    }),
];

/// A summary's hardware counters, where a PMU gave them.
fn hardware(p: &ProbeSummary) -> Option<&crate::record::probe::work::HardwareCounts> {
    p.work.as_ref()?.hardware.as_ref()
}

/// Reads one text of a summary.
pub type ReadText = fn(&ProbeSummary) -> String;

/// Text probe columns the exports carry.
pub const PROBE_TEXTS: &[(&str, ReadText)] = &[("freq_source", |p| p.freq_source.clone())];

/// A figure of a trial's summary, when it has one and it is finite.
pub fn number(probe: Option<&ProbeSummary>, read: Read) -> Option<f64> {
    probe.and_then(read).filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_and_non_finite_figures_read_as_none() {
        let mut p = ProbeSummary {
            server_cpu_util: Some(1.5),
            ..ProbeSummary::default()
        };
        let util = |p: &ProbeSummary| p.server_cpu_util;
        assert_eq!(number(Some(&p), util), Some(1.5));
        assert_eq!(number(Some(&p), |p| p.server_cpu_s), None);
        assert_eq!(number(None, util), None);
        p.server_cpu_util = Some(f64::NAN);
        assert_eq!(number(Some(&p), util), None);
    }

    #[test]
    fn every_column_is_a_field_of_the_stored_summary() {
        let counted = ProbeSummary {
            work: Some(crate::record::probe::work::WorkCounts {
                hardware: Some(Default::default()),
                io_calls: Some(Default::default()),
                ..Default::default()
            }),
            ..ProbeSummary::default()
        };
        let stored = serde_json::to_value(counted).unwrap();
        for (name, _) in PROBE_NUMBERS {
            // A nested field by its path: `work.syscalls`.
            let field = name.split('.').try_fold(&stored, |v, key| v.get(key));
            assert!(field.is_some(), "{name}");
        }
        for (name, _) in PROBE_TEXTS {
            assert!(stored.get(name).is_some(), "{name}");
        }
    }
}
