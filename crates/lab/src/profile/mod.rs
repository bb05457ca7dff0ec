//! Flame graphs of the server (`scalelab run --profile`, `[profile]`).
//!
//! After the sweep, each system's curve names two points: its peak (highest
//! median throughput) and, when the curve falls after it, the last point
//! past the knee (the collapse). At every such point, every system runs two
//! extra trials back to back, one plain and one under `perf record`; their
//! throughputs give the profiling overhead, paired. Neither trial enters the
//! statistics. The folded stacks are stored; the report draws them (its `flame_svg`),
//! and the overhead's rule is `scalelab_record::profile`'s.
//!
//! - [`recorder`]: `perf record` for one window, the server's tree from
//!   perf's fork events, folding with inferno.
//! - [`offcpu`]: blocked time by stack from `sched:sched_switch`, for the
//!   off-CPU graphs taken in a third extra trial at the same points.

pub mod offcpu;
pub mod recorder;

pub use recorder::Recorder;
pub use scalelab_record::profile::{overhead, overhead_noise, Overhead};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_role_reads_back() {
        assert_eq!(Role::parse("collapse"), Some(Role::Collapse));
    }

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
}
