//! Defensive reads of the probe summary and the trial context. Both are
//! free-form JSON written by other modules: a missing or mistyped field
//! reads as absent and is simply not shown.

use serde_json::Value;

/// Scalar probe fields the exports carry, in column order.
pub const PROBE_NUMBERS: &[&str] = &[
    "server_cpu_s",
    "server_cpu_util",
    "cpu_busy",
    "online_cpus",
    "freq_mhz_mean",
    "load_x_freq",
    "procs_running_mean",
    "loadavg_1",
    "mem_per_worker_rss_bytes",
    "mem_per_worker_vsz_bytes",
    "server_rss_max_bytes",
    "processes",
    "threads",
    "processes_seen",
    "ctx_voluntary",
    "ctx_involuntary",
    "net_rx_bytes",
    "net_tx_bytes",
    "client_cpu_s",
    "client_runq_wait_s",
    "sampler_cpu_s",
    "sampler_cpu_util",
];

/// Text probe fields the exports carry.
pub const PROBE_TEXTS: &[&str] = &["freq_source"];

/// A numeric probe field.
pub fn number(probe: Option<&Value>, key: &str) -> Option<f64> {
    probe?.get(key)?.as_f64().filter(|v| v.is_finite())
}

/// A text probe field.
pub fn text(probe: Option<&Value>, key: &str) -> Option<String> {
    probe?.get(key)?.as_str().map(str::to_string)
}

/// Where the machine's CPU time went, as fractions of all CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuShares {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub irq: f64,
    pub softirq: f64,
    pub iowait: f64,
    /// Time a hypervisor ran someone else on this VM's CPUs.
    pub steal: f64,
}

impl CpuShares {
    pub const NAMES: [&'static str; 7] = [
        "user", "nice", "system", "irq", "softirq", "iowait", "steal",
    ];

    pub fn values(&self) -> [f64; 7] {
        [
            self.user,
            self.nice,
            self.system,
            self.irq,
            self.softirq,
            self.iowait,
            self.steal,
        ]
    }

    fn from_object(v: &Value) -> Option<CpuShares> {
        let f = |k: &str| v.get(k).and_then(Value::as_f64);
        // `user` and `system` must be there; the rest default to zero.
        Some(CpuShares {
            user: f("user")?,
            nice: f("nice").unwrap_or(0.0),
            system: f("system")?,
            irq: f("irq").unwrap_or(0.0),
            softirq: f("softirq").unwrap_or(0.0),
            iowait: f("iowait").unwrap_or(0.0),
            steal: f("steal").unwrap_or(0.0),
        })
    }

    /// Element-wise mean.
    pub fn mean(all: &[CpuShares]) -> Option<CpuShares> {
        if all.is_empty() {
            return None;
        }
        let n = all.len() as f64;
        let sum = |f: fn(&CpuShares) -> f64| all.iter().map(f).sum::<f64>() / n;
        Some(CpuShares {
            user: sum(|c| c.user),
            nice: sum(|c| c.nice),
            system: sum(|c| c.system),
            irq: sum(|c| c.irq),
            softirq: sum(|c| c.softirq),
            iowait: sum(|c| c.iowait),
            steal: sum(|c| c.steal),
        })
    }
}

/// The machine-wide CPU breakdown: an object `cpu` (or `cpu_total`) with
/// `user`, `system`, ... fractions, else the mean over a `per_cpu` array.
pub fn cpu_shares(probe: Option<&Value>) -> Option<CpuShares> {
    let p = probe?;
    for key in ["cpu", "cpu_total"] {
        if let Some(s) = p.get(key).and_then(CpuShares::from_object) {
            return Some(s);
        }
    }
    let per_cpu: Vec<CpuShares> = p
        .get("per_cpu")?
        .as_array()?
        .iter()
        .filter_map(CpuShares::from_object)
        .collect();
    CpuShares::mean(&per_cpu)
}

/// The probe's own caveats (`warnings`: strings).
pub fn warnings(probe: Option<&Value>) -> Vec<String> {
    probe
        .and_then(|p| p.get("warnings"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Why a trial was client-bound, if it was: `client_bound` in the context
/// (or the probe) as `true` with `client_bound_reason`, a reason string, or
/// an object with `reason`.
pub fn client_bound(context: &Value, probe: Option<&Value>) -> Option<String> {
    [Some(context), probe]
        .into_iter()
        .flatten()
        .find_map(flag_reason)
}

fn flag_reason(v: &Value) -> Option<String> {
    let reason_field = || {
        v.get("client_bound_reason")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match v.get("client_bound")? {
        Value::Bool(true) => Some(reason_field().unwrap_or_else(|| "no reason recorded".into())),
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => match o.get("bound") {
            Some(Value::Bool(false)) => None,
            _ => Some(
                o.get("reason")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(reason_field)
                    .unwrap_or_else(|| "no reason recorded".into()),
            ),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_read_defensively() {
        let p = json!({"server_cpu_util": 1.5, "threads": "many"});
        assert_eq!(number(Some(&p), "server_cpu_util"), Some(1.5));
        assert_eq!(number(Some(&p), "threads"), None);
        assert_eq!(number(Some(&p), "absent"), None);
        assert_eq!(number(None, "server_cpu_util"), None);
    }

    #[test]
    fn cpu_breakdown_from_total_or_per_cpu() {
        let total = json!({"cpu": {"user": 0.4, "system": 0.2, "softirq": 0.1}});
        let s = cpu_shares(Some(&total)).unwrap();
        assert_eq!((s.user, s.softirq, s.irq), (0.4, 0.1, 0.0));
        let per = json!({"per_cpu": [
            {"cpu": 0, "user": 0.2, "system": 0.4},
            {"cpu": 1, "user": 0.4, "system": 0.2}
        ]});
        let s = cpu_shares(Some(&per)).unwrap();
        assert!((s.user - 0.3).abs() < 1e-12 && (s.system - 0.3).abs() < 1e-12);
        assert_eq!(cpu_shares(Some(&json!({"cpu": 3}))), None);
    }

    #[test]
    fn client_bound_forms() {
        let c = json!({"client_bound": true, "client_bound_reason": "client CPU 99%"});
        assert_eq!(client_bound(&c, None).as_deref(), Some("client CPU 99%"));
        let c = json!({"client_bound": "load generator saturated"});
        assert_eq!(
            client_bound(&c, None).as_deref(),
            Some("load generator saturated")
        );
        let c = json!({"client_bound": {"bound": false, "reason": "x"}});
        assert_eq!(client_bound(&c, None), None);
        assert_eq!(client_bound(&json!({"client_bound": false}), None), None);
        let p = json!({"client_bound": true});
        assert!(client_bound(&json!({}), Some(&p)).is_some());
    }
}
