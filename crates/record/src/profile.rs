//! A profile's overhead, as the store and the report judge it: the paired
//! plain and profiled trials' throughputs, held against the point's own
//! spread. The lab's `profile` takes the profiles.

/// Throughput lost to profiling: 1 - profiled / plain (paired trials).
pub fn overhead(plain_rps: f64, profiled_rps: f64) -> Option<f64> {
    (plain_rps > 0.0).then(|| 1.0 - profiled_rps / plain_rps)
}

/// The noise a profiling overhead must exceed to be shown as a figure: the
/// relative spread of the point's own trials, (max - min) / median, and at
/// least `floor` (the run's `[trials] noise`). The plain and the profiled
/// trial are one trial each, so a difference inside the spread of the
/// point's trials, in either direction, is their scatter, not perf's cost.
pub fn overhead_noise(samples: &[f64], floor: f64) -> f64 {
    let ok: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
    let spread = match crate::analysis::summary::median(&ok) {
        Some(m) if m > 0.0 => {
            let (lo, hi) = ok
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(*v), hi.max(*v))
                });
            (hi - lo) / m
        }
        _ => 0.0,
    };
    spread.max(floor)
}

/// A profiling overhead as the report and the terminal show it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Overhead {
    /// Throughput lost under perf (a fraction), beyond the noise.
    Beyond(f64),
    /// Within the noise (the fraction): no figure.
    WithinNoise(f64),
    /// One of the two trials failed.
    Unknown,
}

impl Overhead {
    /// The overhead of `profiled` against `plain`, judged against `noise`
    /// (see [`overhead_noise`]).
    pub fn judge(plain: Option<f64>, profiled: Option<f64>, noise: f64) -> Overhead {
        match (plain, profiled) {
            (Some(p), Some(q)) => match overhead(p, q) {
                Some(o) if o.abs() > noise => Overhead::Beyond(o),
                Some(_) => Overhead::WithinNoise(noise),
                None => Overhead::Unknown,
            },
            _ => Overhead::Unknown,
        }
    }
}

impl std::fmt::Display for Overhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Overhead::Beyond(o) => write!(f, "{:+.1}%", o * 100.0),
            Overhead::WithinNoise(n) => write!(f, "within noise (±{:.1}%)", n * 100.0),
            Overhead::Unknown => write!(f, "–"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_is_the_share_of_throughput_lost() {
        assert!((overhead(1000.0, 950.0).unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(overhead(0.0, 10.0), None);
    }

    #[test]
    fn an_overhead_inside_the_points_own_spread_is_not_a_figure() {
        // Trials at 90..110 k: a spread of 20% of the median.
        let noise = overhead_noise(&[90e3, 100e3, 110e3], 0.02);
        assert!((noise - 0.2).abs() < 1e-12, "{noise}");
        assert_eq!(overhead_noise(&[100e3, 100e3], 0.02), 0.02, "the floor");
        // perf "speeding the server up" by 8%: noise, not a figure.
        let o = Overhead::judge(Some(100e3), Some(108e3), noise);
        assert_eq!(o, Overhead::WithinNoise(noise));
        assert_eq!(o.to_string(), "within noise (±20.0%)");
        let o = Overhead::judge(Some(100e3), Some(60e3), noise);
        assert_eq!(o.to_string(), "+40.0%");
        assert_eq!(Overhead::judge(None, Some(1.0), noise).to_string(), "–");
    }
}
