//! What the profile trial's stacks say of a CPU-bound point: where a
//! profile of a (system, point) finds what the CPU went to (a kernel lock,
//! the TLS library) and the point's trials said CPU (the server's, or the
//! CPUs it shares), the point's limiter becomes that finding, with the
//! profile's verdict and what the trials said. The strip and the table
//! then show it at the profiled point (its peak or its collapse); other
//! points keep their trials' verdicts, and a point already named by an
//! earlier finding keeps it.

use crate::record::probe::limiter::LimiterKind;
use crate::store::ProfileRecord;

/// Makes `kind` the limiter of each CPU-bound point whose profile's
/// folded stacks give a `verdict`.
pub fn relimit(
    agg: &mut super::rows::Aggregate,
    profiles: &[ProfileRecord],
    kind: LimiterKind,
    verdict: impl Fn(&str) -> Option<String>,
) {
    for p in profiles {
        let Some(found) = p.folded.as_deref().and_then(&verdict) else {
            continue;
        };
        let cell = agg
            .cells
            .iter_mut()
            .find(|c| c.system == p.system && c.point.index == p.point.index);
        let Some(limiter) = cell.and_then(|c| c.limiter.as_mut()) else {
            continue;
        };
        if matches!(
            limiter.kind,
            LimiterKind::ServerCpu | LimiterKind::CpusShared
        ) {
            limiter.verdict = format!(
                "{found} (from the profile at {}; the trials said: {})",
                p.role, limiter.verdict
            );
            limiter.kind = kind;
        }
    }
}
