//! Flame graphs of the server (`scalelab run --profile`, `[profile]`).
//!
//! After the sweep, each system's curve names two points: its peak (highest
//! median throughput) and, when the curve falls after it, the last point
//! past the knee (the collapse). At every such point, every system runs two
//! extra trials back to back, one plain and one under `perf record`; their
//! throughputs give the profiling overhead, paired. Neither trial enters the
//! statistics. The folded stacks are stored; the report draws them.
//!
//! - [`recorder`]: `perf record` for one window, the server's tree from
//!   perf's fork events, folding with inferno.
//! - [`flame`]: SVG flame graphs and differential flame graphs.
//! - [`offcpu`]: blocked time by stack from `sched:sched_switch`, for the
//!   off-CPU graphs taken in a third extra trial at the same points.

pub mod flame;
pub mod offcpu;
pub mod recorder;

pub use recorder::Recorder;

/// Folded stacks of one window (`frame;frame;frame weight` lines, the
/// weight being CPU time in ns: inferno sums each sample's cpu-clock
/// period).
#[derive(Clone, Debug, PartialEq)]
pub struct Folded {
    /// The folded lines.
    pub text: String,
    /// Samples of the server's tree that went into `text`.
    pub samples: u64,
}

/// Samples per second per CPU, when the experiment does not say.
pub const DEFAULT_FREQUENCY: u32 = 997;

/// What one profiled trial records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recording {
    /// On-CPU stacks, `perf record -e cpu-clock -g` at this many samples
    /// per second per CPU.
    OnCpu {
        /// Samples per second per CPU.
        frequency: u32,
    },
    /// Every context switch with its stack, `perf record -e
    /// sched:sched_switch -g`: blocked time by stack ([`offcpu`]).
    OffCpu,
}

/// Why a profile could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// perf cannot run here at all: the run goes on without profiles.
    #[error("{reason}")]
    Unavailable {
        /// perf's complaint, in one line.
        reason: String,
    },
    /// This profile failed (perf stopped badly, no samples, ...).
    #[error("{0}")]
    Failed(String),
    /// A file or pipe of the profiler failed.
    #[error("profile: {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Why a system's point is profiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The system's highest median throughput.
    Peak,
    /// The system's last point, past the peak and below it.
    Collapse,
    /// Another system's peak or collapse, profiled for the comparison.
    Compare,
}

impl Role {
    /// The word stored in `profiles.role`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Peak => "peak",
            Role::Collapse => "collapse",
            Role::Compare => "compare",
        }
    }

    /// The role a stored word names.
    pub fn parse(s: &str) -> Option<Role> {
        [Role::Peak, Role::Collapse, Role::Compare]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// A system's peak and collapse point indices, from its median throughput
/// per point in sweep order (`None`: no good trial there). The collapse is
/// the last point when it lies after the peak and below it.
pub fn peak_and_collapse(medians: &[Option<f64>]) -> Option<(usize, Option<usize>)> {
    let peak = medians
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.map(|m| (i, m)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let last = medians.iter().rposition(Option::is_some)?;
    let collapse = (last > peak.0 && medians[last].is_some_and(|m| m < peak.1)).then_some(last);
    Some((peak.0, collapse))
}

/// The points to profile (sweep order) and each system's role there:
/// every system at every system's peak and collapse, so that systems can
/// be compared at the same point.
pub fn plan(medians_per_system: &[Vec<Option<f64>>]) -> Vec<(usize, Vec<Role>)> {
    let marks: Vec<Option<(usize, Option<usize>)>> = medians_per_system
        .iter()
        .map(|m| peak_and_collapse(m))
        .collect();
    let mut points: Vec<usize> = marks
        .iter()
        .flatten()
        .flat_map(|&(p, c)| std::iter::once(p).chain(c))
        .collect();
    points.sort_unstable();
    points.dedup();
    points
        .into_iter()
        .map(|p| {
            let roles = marks
                .iter()
                .map(|m| match m {
                    Some((peak, _)) if *peak == p => Role::Peak,
                    Some((_, Some(c))) if *c == p => Role::Collapse,
                    _ => Role::Compare,
                })
                .collect();
            (p, roles)
        })
        .collect()
}

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
    fn a_curve_that_falls_has_a_collapse_point() {
        let m = [Some(10.0), Some(30.0), Some(25.0), Some(12.0)];
        assert_eq!(peak_and_collapse(&m), Some((1, Some(3))));
    }

    #[test]
    fn a_curve_that_peaks_at_its_end_has_no_collapse() {
        let m = [Some(10.0), None, Some(30.0)];
        assert_eq!(peak_and_collapse(&m), Some((2, None)));
        assert_eq!(peak_and_collapse(&[None, None]), None);
    }

    #[test]
    fn every_system_is_profiled_at_every_marked_point() {
        let a = vec![Some(10.0), Some(30.0), Some(20.0)];
        let b = vec![Some(10.0), Some(15.0), Some(40.0)];
        let p = plan(&[a, b]);
        assert_eq!(
            p,
            vec![
                (1, vec![Role::Peak, Role::Compare]),
                (2, vec![Role::Collapse, Role::Peak]),
            ]
        );
    }

    #[test]
    fn overhead_is_the_share_of_throughput_lost() {
        assert!((overhead(1000.0, 950.0).unwrap() - 0.05).abs() < 1e-12);
        assert_eq!(overhead(0.0, 10.0), None);
        assert_eq!(Role::parse("collapse"), Some(Role::Collapse));
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
