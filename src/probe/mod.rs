//! INTERIM (replaced by the probe branch).
use std::time::Duration;
pub struct SamplerConfig {
    pub interval: Duration,
}
#[derive(serde::Serialize)]
pub struct ProbeData {
    pub timeline: Vec<serde_json::Value>,
    pub summary: serde_json::Value,
}
pub struct Sampler;
impl Sampler {
    pub fn start(_c: SamplerConfig, _root: Option<u32>) -> Sampler {
        Sampler
    }
    pub fn stop(self) -> ProbeData {
        ProbeData {
            timeline: vec![],
            summary: serde_json::json!({}),
        }
    }
}
pub fn client_bound(cpu: f64, elapsed: f64, cpus: usize) -> Option<String> {
    (elapsed > 0.0 && cpu / (elapsed * cpus as f64) >= 0.9)
        .then(|| "client used >= 90% of its CPUs".into())
}
pub mod fingerprint {
    pub fn capture() -> serde_json::Value {
        serde_json::json!({})
    }
}
