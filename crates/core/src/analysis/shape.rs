//! The shape of a throughput curve: the measured peak, the efficiency
//! curve, and what happens past the peak.
//!
//! Past the peak we look at the last point (the highest N), as seed 004
//! does ("an 8% drop from peak throughput at 8 clients to 20 clients"):
//!
//! - `drop = (peak - last) / peak`;
//! - `retained = (last - first) / (peak - first)`: how much of the gain
//!   over the lowest-N throughput is left.
//!
//! | kind          | rule                                                    |
//! |---------------|---------------------------------------------------------|
//! | `StillRising` | the peak is the last point                              |
//! | `Plateau`     | `drop <= 5%` (within run-to-run noise of a peak)        |
//! | `MildDecline` | `5% < drop <= 15%` (seed 004's FreeBSD: 8% drop)        |
//! | `Decline`     | `15% < drop < 40%`, unless it is a collapse             |
//! | `Collapse`    | `drop >= 40%`, or `drop > 15%` with `retained <= 25%` (back near the lowest-N level: seed 004's Linux "asymptotes to essentially single-threaded levels") |
//!
//! Efficiency above 1 at some N ([`CurveShape::superlinear`]) means more
//! than N times the lowest level's throughput per unit: the lowest level was
//! bound by latency (one client waiting on each round trip), not by a
//! resource, so it is no baseline for "linear".
use serde::{Deserialize, Serialize};

/// Largest drop from the peak still called a plateau.
pub const PLATEAU_MAX_DROP: f64 = 0.05;
/// Largest drop from the peak still called a mild decline.
pub const MILD_MAX_DROP: f64 = 0.15;
/// A drop this large from the peak is a collapse whatever the curve.
pub const COLLAPSE_MIN_DROP: f64 = 0.4;
/// Efficiency above this (1 + noise) is flagged as superlinear.
pub const SUPERLINEAR_MIN: f64 = 1.05;
/// Keeping no more than this share of the gain over the lowest-N
/// throughput is a collapse...
pub const COLLAPSE_MAX_RETAINED: f64 = 0.25;
/// ...provided the drop is at least this (a curve that never scaled and
/// dips 6% is not a collapse).
pub const COLLAPSE_NEAR_BASE_MIN_DROP: f64 = MILD_MAX_DROP;

/// What the curve does after its measured peak, judged at the last (highest-N) point; `drop` is
/// `(peak - last) / peak`, a fraction (0.08 = 8%). The thresholds are in the module doc's
/// table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PastPeak {
    /// The peak is the last point: no evidence past it.
    StillRising,
    /// Within the noise of the peak.
    Plateau {
        /// `(peak - last) / peak`.
        drop: f64,
    },
    /// A drop, but well above single-client levels (seed 004: "an 8% drop").
    MildDecline {
        /// `(peak - last) / peak`.
        drop: f64,
    },
    /// A clear drop (15–40%) that keeps more than a quarter of the gain.
    Decline {
        /// `(peak - last) / peak`.
        drop: f64,
    },
    /// Falls towards single-client levels (seed 004: Linux "asymptotes to
    /// essentially single-threaded levels").
    Collapse {
        /// `(peak - last) / peak`.
        drop: f64,
    },
}

/// The measured shape of one throughput curve X(N), from the points themselves (no model
/// fitted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CurveShape {
    /// N at the highest measured throughput (the lowest such N on a tie).
    pub peak_n: f64,
    /// The highest measured throughput, in the curve's own unit.
    pub peak_x: f64,
    /// (N, (X(N)/N) / (X(base)/base)): throughput per unit of concurrency
    /// normalised to the baseline N (seed 000's green curve). Empty when the
    /// baseline point has no positive throughput.
    pub efficiency: Vec<(f64, f64)>,
    /// What happens after the peak.
    pub past_peak: PastPeak,
}

impl CurveShape {
    /// The highest efficiency, as (N, efficiency), when it exceeds
    /// [`SUPERLINEAR_MIN`].
    pub fn superlinear(&self) -> Option<(f64, f64)> {
        self.efficiency
            .iter()
            .copied()
            .filter(|(_, e)| e.is_finite())
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|(_, e)| *e > SUPERLINEAR_MIN)
    }
}

/// `points` are (N, X) sorted by N; `baseline_n` picks the efficiency base
/// (the nearest N present is used). Points with a non-finite value or
/// N <= 0 are ignored; `None` when none is left. The first of equal peaks
/// is the peak.
pub fn shape(points: &[(f64, f64)], baseline_n: f64) -> Option<CurveShape> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, x)| n.is_finite() && x.is_finite() && *n > 0.0)
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let peak_index =
        pts.iter()
            .enumerate()
            .fold(None, |best: Option<usize>, (i, p)| match best {
                Some(b) if pts[b].1 >= p.1 => Some(b),
                _ => Some(i),
            })?;
    let (peak_n, peak_x) = pts[peak_index];
    Some(CurveShape {
        peak_n,
        peak_x,
        efficiency: efficiency(&pts, baseline_n),
        past_peak: classify(&pts, peak_index),
    })
}

fn efficiency(pts: &[(f64, f64)], baseline_n: f64) -> Vec<(f64, f64)> {
    let base = pts.iter().min_by(|a, b| {
        (a.0 - baseline_n)
            .abs()
            .total_cmp(&(b.0 - baseline_n).abs())
    });
    match base {
        Some(&(bn, bx)) if bx > 0.0 => {
            let per_unit = bx / bn;
            pts.iter().map(|&(n, x)| (n, x / n / per_unit)).collect()
        }
        _ => Vec::new(),
    }
}

fn classify(pts: &[(f64, f64)], peak_index: usize) -> PastPeak {
    if peak_index + 1 == pts.len() {
        return PastPeak::StillRising;
    }
    let peak = pts[peak_index].1;
    let first = pts[0].1;
    let last = pts[pts.len() - 1].1;
    if peak <= 0.0 {
        // Nothing measured anywhere: call it flat rather than divide by 0.
        return PastPeak::Plateau { drop: 0.0 };
    }
    let drop = (peak - last) / peak;
    let gain = peak - first;
    let retained = if gain > 0.0 {
        (last - first) / gain
    } else {
        // The curve starts at its peak; only the drop can tell.
        1.0
    };
    if drop <= PLATEAU_MAX_DROP {
        PastPeak::Plateau { drop }
    } else if drop >= COLLAPSE_MIN_DROP
        || (drop >= COLLAPSE_NEAR_BASE_MIN_DROP && retained <= COLLAPSE_MAX_RETAINED)
    {
        PastPeak::Collapse { drop }
    } else if drop <= MILD_MAX_DROP {
        PastPeak::MildDecline { drop }
    } else {
        PastPeak::Decline { drop }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop_of(p: &PastPeak) -> f64 {
        match p {
            PastPeak::Plateau { drop }
            | PastPeak::MildDecline { drop }
            | PastPeak::Decline { drop }
            | PastPeak::Collapse { drop } => *drop,
            PastPeak::StillRising => 0.0,
        }
    }

    #[test]
    fn still_rising_when_the_last_point_is_the_peak() {
        let s = shape(&[(1.0, 10.0), (2.0, 19.0), (4.0, 35.0)], 1.0).unwrap();
        assert_eq!((s.peak_n, s.peak_x), (4.0, 35.0));
        assert_eq!(s.past_peak, PastPeak::StillRising);
    }

    #[test]
    fn seed_004_freebsd_is_a_mild_decline() {
        // Shape of seed 004's FreeBSD curve: peak at 8 clients, 8% lower at 20.
        let pts = [
            (1.0, 1000.0),
            (2.0, 1900.0),
            (4.0, 3500.0),
            (8.0, 5000.0),
            (12.0, 4800.0),
            (16.0, 4700.0),
            (20.0, 4600.0),
        ];
        let s = shape(&pts, 1.0).unwrap();
        assert_eq!(s.peak_n, 8.0);
        assert!(
            matches!(s.past_peak, PastPeak::MildDecline { .. }),
            "{:?}",
            s.past_peak
        );
        assert!((drop_of(&s.past_peak) - 0.08).abs() < 1e-12);
    }

    #[test]
    fn seed_004_linux_is_a_collapse() {
        // Seed 004's Linux: collapses above 8 clients towards single-thread
        // levels; FreeBSD is 4x faster at 20 clients.
        let pts = [
            (1.0, 1000.0),
            (2.0, 1900.0),
            (4.0, 3500.0),
            (8.0, 5100.0),
            (12.0, 2000.0),
            (16.0, 1300.0),
            (20.0, 1150.0),
        ];
        let s = shape(&pts, 1.0).unwrap();
        assert!(
            matches!(s.past_peak, PastPeak::Collapse { .. }),
            "{:?}",
            s.past_peak
        );
    }

    #[test]
    fn small_drop_is_a_plateau() {
        let pts = [(1.0, 100.0), (2.0, 190.0), (4.0, 300.0), (8.0, 290.0)];
        let s = shape(&pts, 1.0).unwrap();
        assert!(
            matches!(s.past_peak, PastPeak::Plateau { .. }),
            "{:?}",
            s.past_peak
        );
    }

    #[test]
    fn back_near_the_lowest_level_is_a_collapse_even_below_half() {
        // Gain was small (100 -> 140); falling to 108 (a 23% drop) keeps 20%.
        let pts = [(1.0, 100.0), (2.0, 140.0), (4.0, 108.0)];
        let s = shape(&pts, 1.0).unwrap();
        assert!(
            matches!(s.past_peak, PastPeak::Collapse { .. }),
            "{:?}",
            s.past_peak
        );
        // A curve that never scaled and dips 6% is only a mild decline.
        let flat = [(1.0, 100.0), (2.0, 103.0), (4.0, 97.0)];
        let f = shape(&flat, 1.0).unwrap();
        assert!(
            matches!(f.past_peak, PastPeak::MildDecline { .. }),
            "{:?}",
            f.past_peak
        );
    }

    #[test]
    fn a_quarter_off_the_peak_is_a_decline_not_mild() {
        // The case: 25% below the peak, most of the gain kept.
        let pts = [(1.0, 100.0), (4.0, 400.0), (16.0, 300.0)];
        let s = shape(&pts, 1.0).unwrap();
        assert_eq!(s.past_peak, PastPeak::Decline { drop: 0.25 });
        let steep = [(1.0, 100.0), (4.0, 400.0), (16.0, 230.0)];
        assert!(matches!(
            shape(&steep, 1.0).unwrap().past_peak,
            PastPeak::Collapse { .. }
        ));
        let mild = [(1.0, 100.0), (4.0, 400.0), (16.0, 350.0)];
        assert!(matches!(
            shape(&mild, 1.0).unwrap().past_peak,
            PastPeak::MildDecline { .. }
        ));
    }

    #[test]
    fn superlinear_efficiency_is_flagged() {
        // One latency-bound client: 2 clients do 8x the work (efficiency 4).
        let s = shape(&[(1.0, 10.0), (2.0, 80.0), (4.0, 100.0)], 1.0).unwrap();
        assert_eq!(s.superlinear(), Some((2.0, 4.0)));
        let linear = shape(&[(1.0, 10.0), (2.0, 20.0), (4.0, 40.0)], 1.0).unwrap();
        assert_eq!(linear.superlinear(), None);
    }

    #[test]
    fn efficiency_is_normalised_to_the_nearest_baseline() {
        // Seed 000 style: TPS per thread relative to 16 threads.
        let pts = [(8.0, 80.0), (16.0, 160.0), (32.0, 240.0)];
        let s = shape(&pts, 15.0).unwrap();
        assert_eq!(s.efficiency, vec![(8.0, 1.0), (16.0, 1.0), (32.0, 0.75)]);
    }

    #[test]
    fn unsorted_and_non_monotone_input() {
        let pts = [(4.0, 30.0), (1.0, 10.0), (2.0, 40.0), (8.0, 39.0)];
        let s = shape(&pts, 1.0).unwrap();
        assert_eq!((s.peak_n, s.peak_x), (2.0, 40.0));
        assert!(matches!(s.past_peak, PastPeak::Plateau { .. }));
    }

    #[test]
    fn zeros_and_garbage_never_give_nan() {
        assert_eq!(shape(&[], 1.0), None);
        assert_eq!(shape(&[(f64::NAN, 1.0), (0.0, 5.0)], 1.0), None);
        let s = shape(&[(1.0, 0.0), (2.0, 0.0)], 1.0).unwrap();
        assert_eq!(s.past_peak, PastPeak::Plateau { drop: 0.0 });
        assert!(s.efficiency.is_empty());
        let t = shape(&[(1.0, 10.0), (2.0, 0.0)], 1.0).unwrap();
        assert_eq!(t.past_peak, PastPeak::Collapse { drop: 1.0 });
        assert!(t.efficiency.iter().all(|(_, e)| e.is_finite()));
    }
}
