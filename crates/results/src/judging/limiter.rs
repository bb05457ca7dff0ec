//! What limited each point (`probe::limiter`): the point's verdict from its
//! trials', and the word every view shows for it. The table's cell and the
//! strip under the throughput chart are drawn by `report::limiter_view`.

use crate::record::probe::limiter::{LimiterKind, LimiterNumbers};
use crate::store::Trial;

/// The limiter of one (system, point): the verdict most of its successful
/// trials give, with the figures of the median-throughput trial among them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PointLimiter {
    /// What limited the point.
    pub kind: LimiterKind,
    /// The verdict of the trial whose figures are shown.
    pub verdict: String,
    /// Successful trials that name this limiter ...
    pub trials: usize,
    /// ... out of the successful trials judged.
    pub judged: usize,
    /// The figures of that trial.
    pub figures: LimiterNumbers,
    /// Successful trials named client-bound, whatever the point's verdict.
    pub client_bound_trials: usize,
    /// Successful trials named background load.
    pub background_trials: usize,
}

/// Precedence when trials split evenly: the order the verdict checks in.
const ORDER: [LimiterKind; 15] = [
    LimiterKind::ClientBound,
    LimiterKind::ListenOverflow,
    LimiterKind::UdpReceiveErrors,
    LimiterKind::MemoryPressure,
    LimiterKind::WorkerImbalance,
    LimiterKind::ServerCpu,
    LimiterKind::CpusShared,
    LimiterKind::BackgroundLoad,
    LimiterKind::LockWaits,
    LimiterKind::PoolWaits,
    LimiterKind::IoWaits,
    LimiterKind::KernelLock,
    LimiterKind::TlsCrypto,
    LimiterKind::Errors,
    LimiterKind::None,
];

/// The point's limiter from its successful trials; `None` when none was
/// judged (failed trials, or runs stored before limiters).
pub fn of_trials(ok: &[&Trial]) -> Option<PointLimiter> {
    let judged: Vec<(&Trial, LimiterKind)> = ok
        .iter()
        .filter_map(|t| Some((*t, t.context.limiter.as_ref()?.kind)))
        .collect();
    let count = |k: LimiterKind| judged.iter().filter(|(_, j)| *j == k).count();
    let kind = ORDER
        .into_iter()
        .filter(|k| count(*k) > 0)
        .max_by_key(|k| {
            (
                count(*k),
                std::cmp::Reverse(ORDER.iter().position(|o| o == k)),
            )
        })?;
    let mut same: Vec<&Trial> = judged
        .iter()
        .filter(|(_, k)| *k == kind)
        .map(|(t, _)| *t)
        .collect();
    same.sort_by(|a, b| {
        a.throughput()
            .unwrap_or(0.0)
            .total_cmp(&b.throughput().unwrap_or(0.0))
    });
    let median = same[same.len() / 2].context.limiter.as_ref()?;
    Some(PointLimiter {
        kind,
        verdict: median.verdict.clone(),
        trials: same.len(),
        judged: judged.len(),
        figures: median.figures.clone(),
        client_bound_trials: count(LimiterKind::ClientBound),
        background_trials: count(LimiterKind::BackgroundLoad),
    })
}

/// The word the table and the strip show.
pub fn short(kind: LimiterKind) -> &'static str {
    match kind {
        LimiterKind::ClientBound => "client",
        LimiterKind::ListenOverflow => "listen queue",
        LimiterKind::UdpReceiveErrors => "UDP rcvbuf",
        LimiterKind::MemoryPressure => "memory",
        LimiterKind::Errors => "errors",
        LimiterKind::ServerCpu => "CPU",
        LimiterKind::CpusShared => "CPU shared",
        LimiterKind::BackgroundLoad => "background",
        LimiterKind::WorkerImbalance => "imbalance",
        LimiterKind::LockWaits => "locks",
        LimiterKind::PoolWaits => "pool",
        LimiterKind::IoWaits => "I/O",
        LimiterKind::KernelLock => "kernel lock",
        LimiterKind::TlsCrypto => "TLS crypto",
        LimiterKind::None => "none found",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::probe::limiter::Limiter;
    use crate::units::PerSecond;

    fn trial(rps: f64, kind: LimiterKind) -> Trial {
        let mut t = crate::judging::test_support::run_data(&["a"])
            .trials
            .remove(0);
        t.measurement.as_mut().unwrap().rps = PerSecond(rps);
        t.context.limiter = Some(Limiter {
            kind,
            verdict: format!("{} at {rps}", kind.label()),
            crossed: vec![kind],
            figures: LimiterNumbers::default(),
        });
        t
    }

    #[test]
    fn the_point_takes_the_most_common_verdict_and_its_median_trial() {
        let ts = [
            trial(100.0, LimiterKind::LockWaits),
            trial(300.0, LimiterKind::ServerCpu),
            trial(200.0, LimiterKind::LockWaits),
            trial(150.0, LimiterKind::LockWaits),
        ];
        let refs: Vec<&Trial> = ts.iter().collect();
        let p = of_trials(&refs).unwrap();
        assert_eq!((p.kind, p.trials, p.judged), (LimiterKind::LockWaits, 3, 4));
        assert_eq!(p.verdict, "blocked on locks at 150");
        // An even split goes to the earlier check.
        let p = of_trials(&refs[..2]).unwrap();
        assert_eq!(p.kind, LimiterKind::ServerCpu);
        assert_eq!(of_trials(&[]), None);
    }
}
