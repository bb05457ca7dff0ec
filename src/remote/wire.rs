//! A [`LoadResult`] as JSON, losslessly: counters as numbers and the HDR
//! histogram in its portable V2 encoding (base64), so the coordinator merges
//! client results exactly as a driver merges its threads'.

use crate::load::histogram::{decode_histogram, encode_histogram, new_histogram};
use crate::load::{ErrorCounts, LoadResult};
use crate::units::{Bytes, CpuSeconds};
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The serialized form of one client's [`LoadResult`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WireResult {
    pub requests: u64,
    pub bytes: u64,
    pub errors: ErrorCounts,
    pub retries: u64,
    /// HdrHistogram V2, base64.
    pub latency_hdr: String,
    pub timeline: Vec<u64>,
    pub elapsed_ns: u64,
    /// [`LoadResult::held`], in ns (absent from an older agent: zero).
    #[serde(default)]
    pub held_ns: u64,
    pub client_cpu_s: f64,
    pub connections_opened: u64,
    pub target_rate: Option<f64>,
    pub notes: Vec<String>,
    /// [`LoadResult::schedule_lag`], HdrHistogram V2 in base64; empty in a
    /// closed loop (and from an older agent).
    #[serde(default)]
    pub schedule_lag_hdr: String,
}

impl From<&LoadResult> for WireResult {
    fn from(r: &LoadResult) -> Self {
        WireResult {
            requests: r.requests,
            bytes: r.bytes.0,
            errors: r.errors,
            retries: r.retries,
            latency_hdr: base64::engine::general_purpose::STANDARD
                .encode(encode_histogram(&r.latency)),
            timeline: r.timeline.clone(),
            elapsed_ns: r.elapsed.as_nanos().min(u64::MAX as u128) as u64,
            held_ns: r.held.as_nanos().min(u64::MAX as u128) as u64,
            client_cpu_s: r.client_cpu.0,
            connections_opened: r.connections_opened,
            target_rate: r.target_rate,
            notes: r.notes.clone(),
            schedule_lag_hdr: if r.schedule_lag.is_empty() {
                String::new()
            } else {
                base64::engine::general_purpose::STANDARD.encode(encode_histogram(&r.schedule_lag))
            },
        }
    }
}

/// An encoded histogram back in an auto-resizing one (the decoded one is
/// sized to its contents), so later merges never fail on range.
fn histogram_from(base64_text: &str, what: &str) -> Result<hdrhistogram::Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64_text)
        .map_err(|e| format!("{what} histogram is not base64: {e}"))?;
    let decoded = decode_histogram(&bytes).ok_or(format!("{what} histogram does not decode"))?;
    let mut h = new_histogram();
    h.add(&decoded)
        .map_err(|e| format!("{what} histogram: {e:?}"))?;
    Ok(h)
}

impl WireResult {
    /// Back to a [`LoadResult`]; fails only on a damaged histogram.
    pub fn into_result(self) -> Result<LoadResult, String> {
        let latency = histogram_from(&self.latency_hdr, "latency")?;
        let mut r = LoadResult::new();
        r.requests = self.requests;
        r.bytes = Bytes(self.bytes);
        r.errors = self.errors;
        r.retries = self.retries;
        r.latency = latency;
        r.timeline = self.timeline;
        r.elapsed = Duration::from_nanos(self.elapsed_ns);
        r.held = Duration::from_nanos(self.held_ns);
        r.client_cpu = CpuSeconds(self.client_cpu_s);
        r.connections_opened = self.connections_opened;
        r.target_rate = self.target_rate;
        r.notes = self.notes;
        if !self.schedule_lag_hdr.is_empty() {
            r.schedule_lag = histogram_from(&self.schedule_lag_hdr, "schedule lag")?;
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Micros;

    #[test]
    fn round_trip_is_lossless_and_merges_exactly() {
        let mut a = LoadResult::new();
        let mut b = LoadResult::new();
        for v in [3, 40, 500, 6_000, 70_000, 8_000_000] {
            a.record(Micros(v), Duration::from_millis(v / 10));
            b.record(Micros(v * 3), Duration::from_millis(v / 7));
        }
        a.elapsed = Duration::from_nanos(2_000_000_123);
        a.held = Duration::from_millis(4_800);
        b.notes.push("a note".into());
        b.record_lag(Micros(70));
        let json = serde_json::to_string(&WireResult::from(&a)).unwrap();
        let back: WireResult = serde_json::from_str(&json).unwrap();
        let a2 = back.into_result().unwrap();
        assert_eq!(recorded(&a2), recorded(&a));
        assert_eq!(a2.timeline, a.timeline);
        assert_eq!(a2.elapsed, a.elapsed);
        assert_eq!(a2.held, a.held);
        assert!(a2.schedule_lag().is_none(), "a closed loop has no lag");
        let mut direct = a.clone();
        direct.merge(&b);
        let mut via_wire = a2;
        via_wire.merge(&WireResult::from(&b).into_result().unwrap());
        assert_eq!(recorded(&via_wire), recorded(&direct));
        assert_eq!(via_wire.latency.max(), direct.latency.max());
        assert_eq!(via_wire.requests, direct.requests);
        assert_eq!(via_wire.notes, direct.notes);
        assert_eq!(via_wire.schedule_lag(), direct.schedule_lag());
        assert_eq!(via_wire.schedule_lag().map(|l| l.max), Some(Micros(70)));
    }

    /// Every (value, count) the histogram holds.
    fn recorded(r: &LoadResult) -> Vec<(u64, u64)> {
        r.latency
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    #[test]
    fn a_damaged_histogram_is_an_error() {
        let mut w = WireResult::from(&LoadResult::new());
        w.latency_hdr = "!!".into();
        assert!(w.into_result().is_err());
    }
}
