//! Derived figures: server CPU per request, and whether the load generator
//! (the client) rather than the server limited a trial.

use super::data::ProbeSummary;

/// A client using at least this fraction of the CPUs it may use is taken
/// to be the bottleneck.
pub const CLIENT_BOUND_FRACTION: f64 = 0.9;

/// Windows shorter than this (50 ms) are too short to call a client
/// starved or saturated: a single scheduler tick of wait is most of them.
pub const MIN_JUDGED_WINDOW_S: f64 = 0.05;

/// Server CPU seconds per completed request (or transaction, query...).
pub fn server_cpu_per_request(summary: &ProbeSummary, requests: u64) -> Option<f64> {
    let cpu = summary.server_cpu_s?;
    (requests > 0).then(|| cpu / requests as f64)
}

/// `part / (elapsed × cpus)`, or `None` when that is undefined.
fn fraction_of_cpus(part_s: f64, elapsed_s: f64, allowed_cpus: usize) -> Option<f64> {
    let capacity = elapsed_s * allowed_cpus as f64;
    (capacity > 0.0 && part_s.is_finite()).then(|| part_s / capacity)
}

/// Whether the client used at least 90% of the CPUs it may use.
pub fn client_bound(client_cpu_s: f64, elapsed_s: f64, allowed_cpus: usize) -> bool {
    client_bound_reason(client_cpu_s, elapsed_s, allowed_cpus).is_some()
}

/// Why the trial is client-bound by CPU use, or `None`. The reason says
/// what was measured; the caller says "client-bound" once.
pub fn client_bound_reason(
    client_cpu_s: f64,
    elapsed_s: f64,
    allowed_cpus: usize,
) -> Option<String> {
    let used = fraction_of_cpus(client_cpu_s, elapsed_s, allowed_cpus)?;
    (used >= CLIENT_BOUND_FRACTION).then(|| {
        format!(
            "the load generator used {client_cpu_s:.2} CPU-s in {elapsed_s:.2} s, \
             {:.0}% of its {allowed_cpus} CPU(s) (the limit is {:.0}%); the server may be faster than measured",
            used * 100.0,
            CLIENT_BOUND_FRACTION * 100.0
        )
    })
}

/// Why the trial is client-bound, or `None`: either the client used ≥ 90%
/// of its CPUs, or its CPU time plus the time its threads waited for a CPU
/// reach 90% of its CPUs' time, i.e. it was starved by competing work.
/// The reason names what took the CPU, as measured: background load
/// (other processes, steal) when it passed
/// [`super::background::BACKGROUND_SHARE`], else the server's CPU time.
pub fn client_verdict(summary: &ProbeSummary, allowed_cpus: usize) -> Option<String> {
    let (cpu, wait, elapsed) = (
        summary.client_cpu_s,
        summary.client_runq_wait_s,
        summary.window_s,
    );
    if elapsed < MIN_JUDGED_WINDOW_S {
        // The run-queue wait is read at the window's ends, in scheduler
        // ticks: over a few milliseconds one tick is the whole window.
        return None;
    }
    if let Some(reason) = client_bound_reason(cpu, elapsed, allowed_cpus) {
        return Some(reason);
    }
    let wanted = fraction_of_cpus(cpu + wait, elapsed, allowed_cpus)?;
    (wanted >= CLIENT_BOUND_FRACTION).then(|| {
        format!(
            "the load generator ran {cpu:.2} CPU-s and its threads waited {wait:.2} s for a CPU \
             in {elapsed:.2} s on its {allowed_cpus} CPU(s): it was starved; {}",
            starved_by(summary)
        )
    })
}

/// What took the CPU from a starved client, from the probe's figures.
fn starved_by(summary: &ProbeSummary) -> String {
    match (summary.background, summary.server_cpu_s) {
        (Some(b), _) if b.noisy => format!("background load: {}", b.describe()),
        (_, Some(server)) if server > 0.0 => format!(
            "the server used {server:.2} CPU-s meanwhile (pin the server and the load generator apart)"
        ),
        _ => "no other CPU use was measured".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_at_ninety_percent_of_allowed_cpus() {
        assert!(client_bound(1.8, 2.0, 1));
        assert!(client_bound(0.9, 1.0, 1));
        assert!(!client_bound(0.89, 1.0, 1));
        assert!(!client_bound(1.0, 1.0, 2));
        assert!(client_bound(1.8, 1.0, 2));
        // Undefined inputs are never "bound".
        assert!(!client_bound(1.0, 0.0, 1));
        assert!(!client_bound(1.0, 1.0, 0));
        assert!(!client_bound(f64::NAN, 1.0, 1));
        let why = client_bound_reason(1.9, 1.0, 2).unwrap();
        assert!(why.contains("95%") && why.contains("2 CPU"), "{why}");
    }

    #[test]
    fn a_starved_client_is_bound_by_wait_time() {
        let mut s = ProbeSummary {
            window_s: 10.0,
            client_cpu_s: 5.0,
            client_runq_wait_s: 4.5,
            ..ProbeSummary::default()
        };
        let why = client_verdict(&s, 1).unwrap();
        assert!(why.contains("waited 4.50 s"), "{why}");
        assert!(!why.contains("client-bound"), "{why}");
        assert!(why.contains("no other CPU use"), "{why}");
        s.server_cpu_s = Some(3.0);
        let why = client_verdict(&s, 1).unwrap();
        assert!(why.contains("the server used 3.00 CPU-s"), "{why}");
        s.background =
            crate::probe::background::measure(crate::probe::background::BackgroundInputs {
                busy_share: 1.0,
                steal_share: 0.1,
                window_s: 10.0,
                online_cpus: 1,
                server_cpu_s: Some(3.0),
                own_cpu_s: 5.0,
            });
        let why = client_verdict(&s, 1).unwrap();
        assert!(
            why.contains("background load: other processes used 1.00 CPU-s"),
            "{why}"
        );
        assert!(!why.contains("server"), "{why}");
        s.client_runq_wait_s = 1.0;
        assert_eq!(client_verdict(&s, 1), None);
        s.client_cpu_s = 9.5;
        assert!(client_verdict(&s, 1).unwrap().contains("used 9.50 CPU-s"));
    }

    #[test]
    fn cpu_per_request() {
        let s = ProbeSummary {
            server_cpu_s: Some(2.0),
            ..ProbeSummary::default()
        };
        assert_eq!(server_cpu_per_request(&s, 1000), Some(0.002));
        assert_eq!(server_cpu_per_request(&s, 0), None);
        assert_eq!(server_cpu_per_request(&ProbeSummary::default(), 10), None);
    }
}
