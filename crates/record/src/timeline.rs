//! The timeline of a load run: completed requests per [`BUCKET`] (100 ms)
//! since the run began, which every driver fills through
//! the lab's `load::LoadResult::record`. A trial's stored timeline is re-bucketed
//! to `[trials] bucket` (a whole number of these) and its last bucket, when
//! the run ended inside it, is marked partial ([`Timeline::of_run`]).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The width every driver records at.
pub const BUCKET: Duration = Duration::from_millis(100);

/// The bucket a request that completed `since_start` after the run began
/// falls in.
pub fn bucket_of(since_start: Duration) -> usize {
    (since_start.as_nanos() / BUCKET.as_nanos()) as usize
}

/// `buckets` summed `factor` at a time (the last group may be short).
pub fn rebucket(buckets: &[u64], factor: usize) -> Vec<u64> {
    buckets
        .chunks(factor.max(1))
        .map(|c| c.iter().sum())
        .collect()
}

/// The run's requests per whole second (the DNS ramp, `scalelab load`'s
/// per-thread rates), from its [`BUCKET`]s.
pub fn per_second(buckets: &[u64]) -> Vec<u64> {
    let per = (Duration::from_secs(1).as_nanos() / BUCKET.as_nanos()) as usize;
    rebucket(buckets, per)
}

/// A trial's stored timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Completed requests per bucket, from the start of the window.
    pub counts: Vec<u64>,
    /// The width of a bucket in milliseconds (1000 in stores before schema
    /// version 11, which kept whole seconds).
    pub bucket_ms: u32,
    /// The run ended inside the last bucket, which covers less time than
    /// the others (`false` in stores before version 11: not known).
    pub last_partial: bool,
}

impl Timeline {
    /// The run's [`BUCKET`]s as `width` buckets (a whole number of
    /// [`BUCKET`]s; a width that is not is rounded down, at least one),
    /// padded with empty buckets to the run's whole buckets (a server that
    /// stopped answering leaves them empty, not missing).
    pub fn of_run(buckets: &[u64], elapsed: Duration, width: Duration) -> Timeline {
        let factor = ((width.as_nanos() / BUCKET.as_nanos()) as usize).max(1);
        let mut counts = rebucket(buckets, factor);
        let bucket = BUCKET * factor as u32;
        let whole = (elapsed.as_nanos() / bucket.as_nanos()) as usize;
        if counts.len() < whole {
            counts.resize(whole, 0);
        }
        let covered = bucket.as_nanos() * counts.len() as u128;
        Timeline {
            last_partial: covered > elapsed.as_nanos(),
            bucket_ms: bucket.as_millis() as u32,
            counts,
        }
    }

    /// The whole buckets (the partial last one left out), as numbers.
    pub fn whole(&self) -> Vec<f64> {
        let n = self.counts.len() - usize::from(self.last_partial && !self.counts.is_empty());
        self.counts[..n].iter().map(|&c| c as f64).collect()
    }

    /// Completed requests in every bucket: the trial's own count.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            counts: Vec::new(),
            bucket_ms: BUCKET.as_millis() as u32,
            last_partial: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_ending_inside_a_bucket_marks_it_partial_and_keeps_every_request() {
        let runs = [3, 5, 4, 6, 2];
        let t = Timeline::of_run(&runs, Duration::from_millis(450), BUCKET);
        assert_eq!(t.counts, runs);
        assert!(t.last_partial);
        assert_eq!(t.whole(), vec![3.0, 5.0, 4.0, 6.0]);
        assert_eq!(t.total(), 20);
        let t = Timeline::of_run(&runs, Duration::from_millis(500), BUCKET);
        assert!(!t.last_partial);
    }

    #[test]
    fn wider_buckets_sum_the_narrow_ones_and_silence_is_empty_buckets() {
        let t = Timeline::of_run(&[1, 2, 3, 4, 5], Duration::from_millis(1000), BUCKET * 2);
        assert_eq!((t.counts.clone(), t.bucket_ms), (vec![3, 7, 5, 0, 0], 200));
        assert!(!t.last_partial);
        assert_eq!(t.total(), 15);
        assert_eq!(per_second(&[1; 25]), vec![10, 10, 5]);
    }
}
