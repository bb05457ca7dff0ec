//! The limiter drawn: the table's cell and the chart's strip, a fill per
//! limiter, and the hover's worker shares.

use crate::judging::limiter::{short, PointLimiter};
use crate::record::probe::limiter::LimiterKind;
use crate::svg::strip::{StripCell, StripRow};

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
        LimiterKind::KernelLock => "#e6550d",
        LimiterKind::TlsCrypto => "#a63603",
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
    use crate::record::probe::limiter::LimiterNumbers;

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
