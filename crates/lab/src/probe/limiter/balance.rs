//! Workers out of balance: one worker did most of the work while the
//! others had little. `SO_REUSEPORT` hashes each connection to one
//! listener, so with few connections one nginx worker can get them all.
//! Measured by each worker's CPU time (schedstat); where the server counts
//! requests per worker (Unbound's `threadN.num.queries`), their growth over
//! the window is quoted beside it (`server::Server::worker_requests`).

pub use super::numbers::request_shares;
use super::numbers::{LimiterKind, LimiterNumbers};
use super::LimiterFigures;

/// The busiest worker ran at least this many times as long as the mean of
/// the others: out of balance (3: 75% against 25% with two workers).
pub const WORKER_IMBALANCE_FACTOR: f64 = 3.0;
/// ... and it was on a CPU at least this share of the window: an idle
/// server's workers are not out of balance in any way that matters.
pub const IMBALANCE_MIN_ONCPU: f64 = 0.10;
/// The factor over the threshold is capped here (a worker that did
/// nothing makes the ratio infinite).
const FACTOR_CAP: f64 = 10.0;

/// The workers' figures (see [`LimiterNumbers`]).
pub(super) struct WorkerNumbers {
    pub shares: Option<Vec<f64>>,
    pub busiest_share: Option<f64>,
    pub busiest_oncpu: Option<f64>,
    pub imbalance: Option<f64>,
}

/// Each kept worker's share of the server's CPU time, and the busiest
/// one's against the others.
pub(super) fn workers(f: &LimiterFigures) -> WorkerNumbers {
    let kept: Vec<_> = f.busiest_threads.iter().filter(|t| t.worker).collect();
    let busiest = kept.first();
    WorkerNumbers {
        shares: (f.oncpu_s > 0.0 && !kept.is_empty())
            .then(|| kept.iter().map(|t| t.oncpu_s / f.oncpu_s).collect()),
        busiest_share: busiest
            .filter(|_| f.workers_cpu_s > 0.0)
            .map(|t| t.oncpu_s / f.workers_cpu_s),
        busiest_oncpu: busiest
            .filter(|_| f.window_s > 0.0)
            .map(|t| t.oncpu_s / f.window_s),
        imbalance: busiest.and_then(|t| imbalance(f.workers, f.workers_cpu_s, t.oncpu_s)),
    }
}

/// The busiest worker's CPU time over the mean of the others', from the
/// workers' count, their CPU time together and the busiest one's.
pub fn imbalance(workers: u32, total_s: f64, busiest_s: f64) -> Option<f64> {
    if workers < 2 || busiest_s <= 0.0 {
        return None;
    }
    let others = (total_s - busiest_s).max(0.0) / (workers - 1) as f64;
    Some(if others > 0.0 {
        busiest_s / others
    } else {
        f64::INFINITY
    })
}

/// The imbalance finding, if any: `(factor over its threshold, kind, why)`.
pub(super) fn check(n: &LimiterNumbers) -> Option<(f64, LimiterKind, String)> {
    let ratio = n.worker_imbalance?;
    let busy = n.busiest_worker_oncpu_share.unwrap_or(0.0);
    if ratio < WORKER_IMBALANCE_FACTOR || busy < IMBALANCE_MIN_ONCPU {
        return None;
    }
    let workers = n.workers.unwrap_or(0);
    let did = n.busiest_worker_share.unwrap_or(0.0);
    let shares: Vec<String> = n
        .worker_cpu_shares
        .iter()
        .flatten()
        .map(|s| format!("{:.0}%", s * 100.0))
        .collect();
    Some((
        (ratio / WORKER_IMBALANCE_FACTOR).min(FACTOR_CAP),
        LimiterKind::WorkerImbalance,
        format!(
            "one of {workers} workers did {:.0}% of the work (on a CPU {:.0}% of the window); the workers' shares of the server's CPU time: {}",
            did * 100.0,
            busy * 100.0,
            shares.join(", ")
        ) + &request_shares(n).map(|w| format!("; {w}")).unwrap_or_default(),
    ))
}

/// Each worker's requests in the window, from the server's per-worker
/// counters read at its two ends (a worker gone or a counter that went
/// down, the server restarted: none).
pub fn worker_requests_between(start: &[u64], end: &[u64]) -> Option<Vec<u64>> {
    (start.len() == end.len())
        .then(|| {
            start
                .iter()
                .zip(end)
                .map(|(a, b)| b.checked_sub(*a))
                .collect()
        })
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_against_the_mean_of_the_others() {
        assert_eq!(imbalance(2, 1.0, 0.75), Some(3.0));
        assert_eq!(imbalance(3, 1.5, 0.5), Some(1.0));
        assert_eq!(imbalance(2, 1.0, 1.0), Some(f64::INFINITY));
        assert_eq!(imbalance(1, 1.0, 1.0), None);
    }

    #[test]
    fn the_requests_shares_are_the_windows_growth_largest_first() {
        let grown = worker_requests_between(&[100, 50], &[197, 53]).unwrap();
        assert_eq!(grown, vec![97, 3]);
        assert_eq!(worker_requests_between(&[100, 50], &[90, 60]), None);
        assert_eq!(worker_requests_between(&[1], &[1, 2]), None);
        let mut n = LimiterNumbers {
            worker_requests: Some(vec![3, 97]),
            ..Default::default()
        };
        let words = request_shares(&n).unwrap();
        assert_eq!(words, "the workers' shares of the requests: 97%, 3%");
        n.worker_requests = Some(vec![0, 0]);
        assert_eq!(request_shares(&n), None, "no request in the window");
    }
}
