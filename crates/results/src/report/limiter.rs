//! What limited each point (`probe::limiter`): the point's verdict from its
//! trials', the terminal table's word, and the strip under the throughput
//! chart that lines each point's limiter up with the curve.

use super::svg::strip::{StripCell, StripRow};
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
const ORDER: [LimiterKind; 13] = [
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
        LimiterKind::None => "none found",
    }
}

/// The table's cell: `locks`, or `locks 2/3` when the trials differ.
pub fn table_cell(limiter: Option<&PointLimiter>) -> String {
    match limiter {
        Some(l) if l.trials < l.judged => format!("{} {}/{}", short(l.kind), l.trials, l.judged),
        Some(l) => short(l.kind).to_string(),
        None => "-".into(),
    }
}

/// A fill per limiter: warm for the server's own resources, cool for the
/// network, grey for the client and for nothing found.
fn fill(kind: LimiterKind) -> &'static str {
    match kind {
        LimiterKind::ClientBound => "#d9d9d9",
        LimiterKind::ListenOverflow => "#9ecae1",
        LimiterKind::UdpReceiveErrors => "#c6dbef",
        LimiterKind::MemoryPressure => "#dadaeb",
        LimiterKind::Errors => "#fcbba1",
        LimiterKind::ServerCpu => "#fdd0a2",
        LimiterKind::CpusShared => "#fee6ce",
        LimiterKind::BackgroundLoad => "#bdbdbd",
        LimiterKind::WorkerImbalance => "#fd8d3c",
        LimiterKind::LockWaits => "#fdae6b",
        LimiterKind::PoolWaits => "#fdd49e",
        LimiterKind::IoWaits => "#c7e9c0",
        LimiterKind::None => "#f0f0f0",
    }
}

/// One strip row for a system: each point's x on the chart and limiter.
pub fn strip_row<'a>(
    label: &str,
    color: &'static str,
    points: impl Iterator<Item = (Option<f64>, Option<&'a PointLimiter>)>,
) -> Option<StripRow> {
    let cells: Vec<StripCell> = points
        .filter_map(|(x, l)| {
            let l = l?;
            Some(StripCell {
                x: x?,
                text: short(l.kind).to_string(),
                fill: fill(l.kind),
                title: format!(
                    "{} ({} of {} trials){}",
                    l.verdict,
                    l.trials,
                    l.judged,
                    worker_shares(l)
                ),
            })
        })
        .collect();
    (!cells.is_empty()).then(|| StripRow {
        label: label.to_string(),
        color,
        cells,
    })
}

/// "; the workers' shares of the server's CPU time: 97%, 3%" with two
/// workers or more, and of their requests where the server counts them
/// (both already in an imbalance's own verdict).
fn worker_shares(l: &PointLimiter) -> String {
    if l.kind == LimiterKind::WorkerImbalance {
        return String::new();
    }
    let shares = l.figures.worker_cpu_shares.as_deref().unwrap_or_default();
    let cpu = (shares.len() >= 2).then(|| {
        let shares: Vec<String> = shares
            .iter()
            .map(|s| format!("{:.0}%", s * 100.0))
            .collect();
        format!(
            "the workers' shares of the server's CPU time: {}",
            shares.join(", ")
        )
    });
    let requests = crate::record::probe::limiter::numbers::request_shares(&l.figures);
    cpu.into_iter()
        .chain(requests)
        .map(|w| format!("; {w}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::probe::limiter::Limiter;
    use crate::units::PerSecond;

    fn trial(rps: f64, kind: LimiterKind) -> Trial {
        let mut t = crate::report::test_support::run_data(&["a"])
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

    #[test]
    fn the_hover_quotes_the_workers_cpu_and_request_shares() {
        let mut l = PointLimiter {
            kind: LimiterKind::ServerCpu,
            verdict: String::new(),
            trials: 1,
            judged: 1,
            figures: LimiterNumbers {
                worker_cpu_shares: Some(vec![0.6, 0.4]),
                worker_requests: Some(vec![250, 750]),
                ..LimiterNumbers::default()
            },
            client_bound_trials: 0,
            background_trials: 0,
        };
        assert_eq!(
            worker_shares(&l),
            "; the workers' shares of the server's CPU time: 60%, 40%; the workers' shares of the requests: 75%, 25%"
        );
        l.kind = LimiterKind::WorkerImbalance;
        assert_eq!(worker_shares(&l), "", "already in its verdict");
    }
}
