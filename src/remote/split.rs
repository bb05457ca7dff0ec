//! Splitting one load over several client hosts: the sweep's concurrency
//! and rate are totals, spread as evenly as whole connections allow.

use crate::load::{LoadSpec, Pacing};

/// Each client's share of `spec`, in client order. A client whose share is
/// zero connections gets `None` (more clients than connections).
pub fn split(spec: &LoadSpec, clients: usize) -> Vec<Option<LoadSpec>> {
    let n = clients.max(1) as u32;
    let total = spec.connections;
    (0..n)
        .map(|i| {
            let conns = total / n + u32::from(i < total % n);
            if conns == 0 {
                return None;
            }
            let share = f64::from(conns) / f64::from(total);
            let mut s = spec.clone();
            s.connections = conns;
            s.threads = LoadSpec::default_threads(Some(spec.threads), 0, conns);
            // CPU lists name this machine's CPUs, not the client host's.
            s.client_cpus = None;
            if let Pacing::Open { rate } = spec.pacing {
                s.pacing = Pacing::Open { rate: rate * share };
            }
            s.max_requests = spec
                .max_requests
                .map(|m| ((m as f64 * share).round() as u64).max(1));
            Some(s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn connections_and_rate_add_up() {
        let mut spec = LoadSpec::closed(7, 4, Duration::from_secs(1));
        spec.pacing = Pacing::Open { rate: 700.0 };
        let parts: Vec<LoadSpec> = split(&spec, 2).into_iter().flatten().collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].connections + parts[1].connections, 7);
        assert_eq!(parts[0].connections, 4);
        let rate: f64 = parts
            .iter()
            .map(|p| match p.pacing {
                Pacing::Open { rate } => rate,
                Pacing::Closed => 0.0,
            })
            .sum();
        assert!((rate - 700.0).abs() < 1e-9);
        assert!(parts.iter().all(|p| p.threads <= p.connections));
    }

    #[test]
    fn more_clients_than_connections() {
        let spec = LoadSpec::closed(1, 1, Duration::from_secs(1));
        let parts = split(&spec, 3);
        assert_eq!(parts.iter().flatten().count(), 1);
        assert!(parts[1].is_none());
    }
}
