//! Figures checked before they are stored: a non-finite number (NaN, ±∞)
//! is never written (`finite`).
//!
//! An optional figure that is not finite becomes unavailable, and the
//! summary's warnings name it. A required one refuses the whole summary
//! (its reason is stored in its place, and `export` and the report name
//! it); a timeline sample with one is dropped, and named.

use super::{ProbeData, ProbeSample, ProbeSummary};
use crate::finite::non_finite_paths;
use serde::de::DeserializeOwned;
use serde::Serialize;

impl ProbeData {
    /// This data with every non-finite figure refused: optional ones
    /// unavailable and named in the summary's warnings, samples holding a
    /// required one dropped. `Err` gives the reason when the summary itself
    /// holds a required one.
    pub fn finite(self) -> Result<ProbeData, String> {
        let bad = non_finite_paths(&self.summary);
        let mut summary = if bad.is_empty() {
            self.summary
        } else {
            let mut kept: ProbeSummary = through_json(&self.summary).map_err(|path| {
                format!(
                    "the probe's summary was refused: `{path}` was not a finite number ({} non-finite figure(s): {})",
                    bad.len(),
                    bad.join(", ")
                )
            })?;
            kept.warnings.extend(bad.iter().map(|p| {
                format!("`{p}` was not a finite number (NaN or infinite); stored as unavailable")
            }));
            kept
        };
        let mut timeline = Vec::with_capacity(self.timeline.len());
        for (i, sample) in self.timeline.into_iter().enumerate() {
            match finite_sample(sample) {
                Ok(s) => timeline.push(s),
                Err(path) => summary.warnings.push(format!(
                    "probe sample {i} was dropped: `{path}` was not a finite number"
                )),
            }
        }
        Ok(ProbeData { timeline, summary })
    }
}

fn finite_sample(sample: ProbeSample) -> Result<ProbeSample, String> {
    if non_finite_paths(&sample).is_empty() {
        Ok(sample)
    } else {
        through_json(&sample)
    }
}

/// The value written as JSON and read back: non-finite numbers become
/// `null`, which an optional field reads as `None`; `Err` names the first
/// required field that held one.
fn through_json<T: Serialize + DeserializeOwned>(value: &T) -> Result<T, String> {
    let json = serde_json::to_value(value).map_err(|e| e.to_string())?;
    serde_path_to_error::deserialize(json).map_err(|e| e.path().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> ProbeData {
        let mut d = ProbeData::default();
        d.summary.window_s = 2.0;
        d.summary.server_cpu_s = Some(1.0);
        d.summary.loadavg_1 = 0.5;
        d.timeline = vec![ProbeSample::default(), ProbeSample::default()];
        d
    }

    #[test]
    fn an_optional_non_finite_figure_is_unavailable_and_named() {
        let mut d = data();
        d.summary.server_cpu_s = Some(f64::INFINITY);
        let kept = d.finite().unwrap();
        assert_eq!(kept.summary.server_cpu_s, None);
        assert_eq!(kept.summary.window_s, 2.0);
        assert!(kept.summary.warnings[0].starts_with("`server_cpu_s` was not a finite number"));
        // What is stored reads back.
        let text = serde_json::to_string(&kept.summary).unwrap();
        assert_eq!(
            serde_json::from_str::<ProbeSummary>(&text).unwrap(),
            kept.summary
        );
    }

    #[test]
    fn a_required_non_finite_figure_refuses_the_summary_by_name() {
        let mut d = data();
        d.summary.loadavg_1 = f64::NAN;
        let why = d.finite().unwrap_err();
        assert!(why.contains("`loadavg_1` was not a finite number"), "{why}");
    }

    #[test]
    fn a_sample_with_a_required_non_finite_figure_is_dropped_and_named() {
        let mut d = data();
        d.timeline[1].interval_s = f64::NEG_INFINITY;
        let kept = d.finite().unwrap();
        assert_eq!(kept.timeline.len(), 1);
        assert_eq!(
            kept.summary.warnings,
            ["probe sample 1 was dropped: `interval_s` was not a finite number"]
        );
        assert_eq!(data().finite().unwrap(), data());
    }
}
