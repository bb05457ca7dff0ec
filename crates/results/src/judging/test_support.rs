//! Test fixtures for the renderers: a two-system concurrency sweep, and a
//! stand-in for the statistics so rendering is tested on its own.

use super::fits::rank;
use super::rows::SeriesFit;
use super::rows::{collect, Aggregate};
use crate::analysis::compare::{Comparison, Verdict};
use crate::analysis::shape::{CurveShape, PastPeak};
use crate::analysis::summary::Summary;
use crate::analysis::usl::UslFit;
use crate::model::Point;
use crate::record::measurement::LatencySummary;
use crate::record::probe::{CpuSplit, ProbeSummary};
use crate::store::context::TrialContext;
use crate::store::{Measurement, Run, RunData, Trial, TrialStatus};
use crate::units::{CpuSeconds, Micros, PerSecond, Seconds};

/// The fixture's sweep: connections at each of its five points.
pub const CONNECTIONS: [u32; 5] = [1, 10, 100, 1000, 4000];

/// The fixture's server kind's (nginx's) parallelism settings.
pub const NGINX_PARALLELISM: [&str; 1] = ["worker_processes"];

/// USL-shaped throughput with a per-trial wobble.
fn rps(system: usize, n: f64, trial: u32) -> f64 {
    let (lambda, sigma, kappa) = [(9000.0, 0.02, 0.00002), (10000.0, 0.01, 0.00001)][system];
    let x = lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    x * (1.0 + 0.01 * (trial as f64 - 2.0))
}

/// A stored run of `systems` (the first the baseline) over [`CONNECTIONS`]:
/// three trials a point on a USL curve, with probe summaries; the second
/// system's second trial at the fourth point failed, and the baseline's
/// third at the fifth was client-bound.
pub fn run_data(systems: &[&str]) -> RunData {
    let mut trials = Vec::new();
    for (pi, c) in CONNECTIONS.iter().enumerate() {
        for trial in 1..=3 {
            for (si, s) in systems.iter().enumerate() {
                let failed = si == 1 && pi == 3 && trial == 2;
                let bound = si == 0 && pi == 4 && trial == 3;
                let r = rps(si % 2, f64::from(*c), trial);
                trials.push(Trial {
                    id: trials.len() as i64 + 1,
                    run_id: 7,
                    system: s.to_string(),
                    point: Point::new(pi as u32, &[("connections", i64::from(*c).into())]),
                    trial,
                    status: if failed {
                        TrialStatus::Failed
                    } else {
                        TrialStatus::Ok
                    },
                    error: failed.then(|| "server exited with signal 9, \"OOM\"".to_string()),
                    failure_cause: None,
                    started_at: 1_714_564_800 + trials.len() as i64 * 10,
                    measurement: (!failed).then(|| Measurement {
                        requests: (r * 10.0) as u64,
                        duration_s: Seconds(10.0),
                        rps: PerSecond(r),
                        bytes: (r * 10.0 * 150.0) as u64,
                        gbit_s: r * 150.0 * 8.0 / 1e9,
                        latency_us: LatencySummary {
                            p50: Micros(100 + u64::from(*c) * 10 + u64::from(trial)),
                            p75: None,
                            p90: Micros(150 + u64::from(*c) * 20),
                            p99: Micros(300 + u64::from(*c) * 40 + u64::from(trial) * 7),
                            p999: Micros(500 + u64::from(*c) * 80),
                            max: Micros(900 + u64::from(*c) * 100),
                            mean: 120.0,
                            stdev: 30.0,
                        },
                        client_cpu_s: CpuSeconds(4.0),
                        ..Default::default()
                    }),
                    probe_unreadable: None,
                    probe: Some(ProbeSummary {
                        server_cpu_util: Some(0.3 * (pi as f64 + 1.0)),
                        server_cpu_s: Some(3.0 * (pi as f64 + 1.0)),
                        ctx_voluntary: Some(1000),
                        ctx_involuntary: Some(500),
                        cpu_busy: 0.2 * (pi as f64 + 1.0),
                        cpu: CpuSplit {
                            user: 0.1 * (pi as f64 + 1.0),
                            system: 0.05,
                            softirq: 0.02,
                            ..CpuSplit::default()
                        },
                        mem_per_worker_rss_bytes: Some(4_000_000 + si as u64 * 1_000_000),
                        freq_source: "cpufreq".into(),
                        ..ProbeSummary::default()
                    }),
                    timeline: vec![],
                    window: Default::default(),
                    context: if bound {
                        TrialContext {
                            client_bound: Some(true),
                            client_bound_reason: Some("client CPU 99% of its cores".into()),
                            ..TrialContext::default()
                        }
                    } else {
                        TrialContext::default()
                    },
                    place: None,
                });
            }
        }
    }
    RunData {
        run: Run {
            id: 7,
            name: "nginx <scaling>".into(),
            description: "two kernels, one nginx".into(),
            started_at: 1_714_564_800,
            finished_at: Some(1_714_565_400),
            status: crate::store::RunStatus::Finished,
            experiment: "[experiment]\nname = \"nginx <scaling>\"\n".into(),
            experiment_path: "recipes/nginx.toml".into(),
            environment: Some(crate::record::environment::Environment::local(
                crate::record::environment::Fingerprint {
                    kernel_release: "6.1.0".into(),
                    online_cpus: 2,
                    ..Default::default()
                },
            )),
            scalelab_version: "0.1.0".into(),
            server_version: Some("nginx/1.22.1".into()),
            baseline: Some(systems[0].to_string()),
            headline: "median".into(),
            load_kind: "http".into(),
            server_kind: "nginx".into(),
            rate_unit: Some(crate::units::RateUnit::Requests),
            // nginx's parallelism settings, as its registry entry declares
            // them (held to it by `the_fixtures_parallelism_is_nginxs`).
            parallelism: Some(NGINX_PARALLELISM.iter().map(|s| s.to_string()).collect()),
            noise: 0.02,
            quick: false,
            label: "Linux 6.1.0".into(),
            revision: None,
            order: None,
        },
        trials,
        profiles: Vec::new(),
    }
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Fills the aggregate's statistics with simple stand-ins (median, min,
/// max; a ratio with a made-up p; fixed fit parameters), so rendering can
/// be tested without the analysis module.
pub fn fake_analyse(agg: &mut Aggregate) {
    for c in &mut agg.cells {
        let v = sorted(&c.throughput);
        if v.is_empty() {
            continue;
        }
        let median = v[v.len() / 2];
        c.summary = Some(Summary {
            n: v.len(),
            median,
            mean: median,
            stdev: 0.0,
            min: v[0],
            max: v[v.len() - 1],
            median_ci: (v.len() >= 3).then(|| (v[0], v[v.len() - 1])),
            outliers: vec![],
            headline: median,
            notes: vec![],
        });
    }
    let base = agg.baseline.clone();
    let heads: Vec<(String, u32, f64)> = agg
        .cells
        .iter()
        .filter_map(|c| Some((c.system.clone(), c.point.index, c.headline()?)))
        .collect();
    for c in &mut agg.cells {
        let b = heads
            .iter()
            .find(|(s, i, _)| Some(s) == base.as_ref() && *i == c.point.index);
        if let (Some((_, _, b)), Some(v), false) =
            (b, c.headline(), Some(&c.system) == base.as_ref())
        {
            let ratio = v / b;
            c.comparison = Some(Comparison {
                ratio,
                ratio_ci: Some((ratio * 0.98, ratio * 1.02)),
                p_value: Some(0.01),
                verdict: if ratio > 1.02 {
                    Verdict::Faster
                } else {
                    Verdict::NoDifference
                },
                sentence: "stand-in".into(),
                ..Comparison::default()
            });
        }
    }
    agg.fits = agg
        .systems
        .iter()
        .map(|s| SeriesFit {
            system: s.clone(),
            group: 0,
            points: agg
                .cells
                .iter()
                .filter(|c| &c.system == s)
                .filter_map(|c| Some((c.x?, c.headline()?)))
                .collect(),
            usl: Some(Ok(usl(0.02, 0.00002, 9000.0))),
            usl_too_short: false,
            shape: Some(CurveShape {
                peak_n: 100.0,
                peak_x: 300_000.0,
                efficiency: vec![(1.0, 1.0), (10.0, 0.8), (100.0, 0.3)],
                past_peak: PastPeak::MildDecline { drop: 0.08 },
            }),
            caveat: Default::default(),
        })
        .collect();
    agg.ranking = rank(agg);
}

/// A USL fit with these parameters, as the fitter would report it.
pub fn usl(sigma: f64, kappa: f64, lambda: f64) -> UslFit {
    UslFit {
        sigma,
        kappa,
        lambda,
        sigma_se: 0.0,
        kappa_se: 0.0,
        lambda_se: 0.0,
        sigma_ci: (sigma, sigma),
        kappa_ci: (kappa, kappa),
        lambda_ci: (lambda, lambda),
        peak_concurrency: Some(((1.0 - sigma) / kappa).sqrt()),
        peak_throughput: 0.0,
        amdahl_ceiling: None,
        r_squared: 0.99,
        points: 5,
        measured_peak: 0.0,
        warnings: vec!["R² = 0.99 <fixture>".into()],
    }
}

/// The fixture's aggregate with stand-in statistics.
pub fn aggregate(systems: &[&str]) -> (RunData, Aggregate) {
    let data = run_data(systems);
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    (data, agg)
}

/// Gives every probed trial a load × frequency read from the nominal
/// frequency (`/proc/cpuinfo`, 2000) on a machine without cpufreq, as on
/// a VM: the case the seed figures warn about.
pub fn at_nominal_frequency(data: &mut RunData) {
    for t in &mut data.trials {
        if let Some(p) = t.probe.as_mut() {
            p.load_x_freq = Some(2000.0);
            p.freq_source = crate::record::probe::freq::FreqSource::Cpuinfo
                .as_str()
                .into();
        }
    }
    if let Some(env) = data.run.environment.as_mut() {
        env.machine.cpufreq_driver = "none: no cpufreq".into();
    }
}

/// [`run_data`] of one `system` whose every trial's limiter said the
/// server's CPU, with one profile (`role`, `folded`) of its first point:
/// what a profile's finding may rename. Also returns that point's index.
pub fn cpu_bound_with_profile(system: &str, role: &str, folded: &str) -> (RunData, u32) {
    use crate::record::probe::limiter::{Limiter, LimiterKind, LimiterNumbers};
    let mut data = run_data(&[system]);
    for t in &mut data.trials {
        t.context.limiter = Some(Limiter {
            kind: LimiterKind::ServerCpu,
            verdict: "server CPU saturated: 1.00 of 1 CPU".into(),
            crossed: vec![LimiterKind::ServerCpu],
            figures: LimiterNumbers::default(),
        });
    }
    let point = data.trials[0].point.clone();
    data.profiles.push(crate::store::ProfileRecord {
        system: system.into(),
        point: point.clone(),
        role: role.into(),
        samples: 100,
        folded: Some(folded.into()),
        plain_rps: None,
        profiled_rps: None,
        error: None,
        offcpu: None,
        offcpu_error: None,
    });
    (data, point.index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixtures_parallelism_is_nginxs() {
        let registry = scalelab_lab::catalog().parallelism_of("nginx");
        assert_eq!(registry, Some(&NGINX_PARALLELISM[..]));
    }
}
