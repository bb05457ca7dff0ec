//! Stored runs built by hand for the report's views: one run of an HTTP
//! sweep over `connections` written to a real store with
//! `scalelab::store`, each trial's throughput and client-bound flag
//! chosen by the test, so `scalelab report`, `scalelab export` and the
//! terminal report all read the same stored rows.

use scalelab::load::result::LatencySummary;
use scalelab::model::Point;
use scalelab::probe::{CpuSplit, Environment, Fingerprint, ProbeSummary};
use scalelab::store::{Measurement, NewRun, NewTrial, Store, TrialContext, TrialStatus};
use scalelab::units::{CpuSeconds, Micros, PerSecond, Seconds};
use std::path::Path;

/// One trial of a stored run.
#[derive(Clone, Copy, Debug)]
pub struct Stored {
    pub system: &'static str,
    /// The sweep point's `connections`; its index is its position in the
    /// run's sorted list of them.
    pub connections: i64,
    pub trial: u32,
    pub rps: f64,
    pub client_bound: bool,
}

/// `n` trials of `system` at `connections`, each at `rps` (a 1% wobble
/// apart), client-bound when `bound` says so for its trial number.
pub fn trials(
    system: &'static str,
    connections: i64,
    n: u32,
    rps: f64,
    bound: impl Fn(u32) -> bool,
) -> Vec<Stored> {
    (1..=n)
        .map(|trial| Stored {
            system,
            connections,
            trial,
            rps: rps * (1.0 + 0.01 * (f64::from(trial) - 2.0)),
            client_bound: bound(trial),
        })
        .collect()
}

/// Writes one finished run of `trials` (the baseline `baseline`, labelled
/// `label`) to the store at `db` and returns its id. Trials are stored
/// interleaved in the order given.
pub fn write_run(db: &Path, label: &str, baseline: &str, trials: &[Stored]) -> i64 {
    let mut store = Store::open(db, scalelab::catalog()).expect("store");
    let environment = Environment::local(Fingerprint {
        kernel_release: "6.1.0".into(),
        online_cpus: 2,
        ..Fingerprint::default()
    });
    let run_id = store
        .create_run(&NewRun {
            name: "nginx-return200",
            description: "stored by the test",
            experiment: "name = \"nginx-return200\"\n",
            experiment_path: "recipes/nginx-return200.toml",
            quick: true,
            environment: &environment,
            baseline,
            headline: "median",
            load_kind: "http",
            server_kind: "nginx",
            rate_unit: scalelab::catalog().rate_unit_of("http"),
            parallelism: scalelab::catalog().parallelism_of("nginx"),
            noise: 0.02,
            label: Some(label),
            revision: None,
        })
        .expect("run");
    let mut levels: Vec<i64> = trials.iter().map(|t| t.connections).collect();
    levels.sort_unstable();
    levels.dedup();
    for (i, t) in trials.iter().enumerate() {
        let index = levels.iter().position(|c| *c == t.connections).unwrap() as u32;
        let point = Point::new(index, &[("connections", t.connections.into())]);
        let mut context = TrialContext::default();
        context.set_client_bound(
            t.client_bound
                .then(|| "the load generator was starved of CPU".to_string()),
        );
        store
            .insert_trial(&NewTrial {
                run_id,
                system: t.system,
                point: &point,
                trial: t.trial,
                status: TrialStatus::Ok,
                error: None,
                failure_cause: None,
                started_at: 1_700_000_000 + i as i64,
                context: &context,
                measurement: Some(&measurement(t.rps)),
                timeline: &[],
                window: &Default::default(),
                histogram: None,
                probe_summary: Some(&probe()),
                probe_timeline: None,
                probe_refused: None,
            })
            .expect("trial");
    }
    store
        .set_run_status(run_id, scalelab::store::RunStatus::Finished)
        .expect("status");
    run_id
}

fn measurement(rps: f64) -> Measurement {
    Measurement {
        requests: (rps * 5.0) as u64,
        duration_s: Seconds(5.0),
        rps: PerSecond(rps),
        bytes: (rps * 5.0 * 200.0) as u64,
        gbit_s: rps * 200.0 * 8.0 / 1e9,
        latency_us: LatencySummary {
            p50: Micros(100),
            p75: None,
            p90: Micros(200),
            p99: Micros(400),
            p999: Micros(800),
            max: Micros(900),
            mean: 120.0,
            stdev: 30.0,
        },
        client_cpu_s: CpuSeconds(2.0),
        ..Default::default()
    }
}

fn probe() -> ProbeSummary {
    ProbeSummary {
        online_cpus: 2,
        server_cpu_util: Some(0.8),
        cpu_busy: 0.5,
        cpu: CpuSplit {
            user: 0.3,
            system: 0.2,
            ..CpuSplit::default()
        },
        freq_source: "cpufreq".into(),
        ..ProbeSummary::default()
    }
}
