//! Two stored runs compared point by point (`scalelab compare`).
//!
//! Points are matched by system label and sweep coordinates (not by index,
//! so the sweeps may differ); when the runs share no system label but each
//! has exactly one system, those two are matched (an old and a new build
//! measured under different names). Each match compares the per-trial
//! throughputs with [`compare`](crate::analysis::compare::compare); the summary is
//! the geometric mean of the ratios of medians, as benchstat's "geomean"
//! row.
use super::judge::{by_run, judge, judged_runs, kept, run_values, whole, Rules};
use super::rows::Cell;
use crate::analysis::compare::{Comparison, Verdict};
use crate::analysis::stopping::relative_half_width;
use crate::analysis::summary::Headline;
use crate::model::Coord;
use crate::store::RunData;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One matched (system, point) of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointComparison {
    /// The system label in run A (and B, unless single systems were paired).
    pub system: String,
    /// The system label in run B: the same as `system`, or run B's only system when single
    /// systems were paired.
    pub system_b: String,
    /// `connections=100 server.worker_processes=2`
    pub point: String,
    /// The point's coordinates, one per sweep axis.
    pub coords: Vec<Coord>,
    /// Successful trials of run A at this point.
    pub trials_a: usize,
    /// Successful trials of run B at this point.
    pub trials_b: usize,
    /// The value side A's verdict divides by ([`value_name`] names it):
    /// each run's statistic ([`RunComparison::statistic`], its median or
    /// best trial over its judged trials), the geometric mean of them over
    /// the side's runs (for one run, its statistic itself). The verdict's
    /// ratio is `value_b / value_a`. `None` without a judged trial.
    #[serde(alias = "median_a")]
    pub value_a: Option<f64>,
    /// The same for side B.
    #[serde(alias = "median_b")]
    pub value_b: Option<f64>,
    /// Relative half-width of each median's 95% CI (benchstat's "±");
    /// `None` below 6 successful trials.
    pub spread_a: Option<f64>,
    /// The same for run B.
    pub spread_b: Option<f64>,
    /// B against A by [`super::judge`], with the run's noise floor.
    pub comparison: Comparison,
    /// Each of side A's runs' statistic here, by position (`None`: no
    /// usable trial).
    #[serde(default)]
    pub run_values_a: Vec<Option<f64>>,
    /// The same for side B.
    #[serde(default)]
    pub run_values_b: Vec<Option<f64>>,
}

/// One environment key whose value differs; `None` where a run lacks it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnvDifference {
    /// The dotted fingerprint key (`sysctls.net.core.somaxconn`).
    pub key: String,
    /// Run A's value.
    pub a: Option<String>,
    /// Run B's value.
    pub b: Option<String>,
}

/// Run B against run A (the baseline), point by point, as `scalelab compare` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    /// Run A's id in its store.
    pub run_a: i64,
    /// Run B's id in its store.
    pub run_b: i64,
    /// Run A's name.
    pub name_a: String,
    /// Run B's name.
    pub name_b: String,
    /// The noise floor the verdicts were drawn with (0.02 = 2%).
    pub noise: f64,
    /// The statistic compared and shown: run A's headline (median or best).
    #[serde(default)]
    pub statistic: Headline,
    /// The points measured in both runs, in run A's order.
    pub points: Vec<PointComparison>,
    /// `system point` of points measured in only one of the runs.
    pub only_in_a: Vec<String>,
    /// `system point` of points measured in run B only.
    pub only_in_b: Vec<String>,
    /// The fingerprint keys that differ between the two runs' environments.
    pub environment: Vec<EnvDifference>,
    /// Geometric mean of median(B) / median(A) over the comparable matched
    /// points with positive medians; `None` when there are none.
    pub geomean_ratio: Option<f64>,
    /// The verdict on the run as a whole between runs
    /// (`report::judge::whole`); `None` when no point is comparable.
    #[serde(default)]
    pub geomean: Option<Comparison>,
    /// Runs pooled on side A (repeats of one label).
    #[serde(default = "one")]
    pub runs_a: usize,
    /// Runs pooled on side B.
    #[serde(default = "one")]
    pub runs_b: usize,
}

fn one() -> usize {
    1
}

/// What [`PointComparison::value_a`] holds for a side of `runs` runs:
/// `median` (one run), `geomean of 3 runs' medians`; `best` alike.
pub fn value_name(runs: usize, statistic: Headline) -> String {
    let stat = statistic.as_str();
    match runs {
        1 => stat.to_string(),
        n => format!("geomean of {n} runs' {stat}s"),
    }
}

impl RunComparison {
    /// What side A's values are ([`value_name`]).
    pub fn value_name_a(&self) -> String {
        value_name(self.runs_a, self.statistic)
    }
    /// What side B's values are.
    pub fn value_name_b(&self) -> String {
        value_name(self.runs_b, self.statistic)
    }
}

/// Compares run B against run A (the baseline); `noise` as in [`compare`](crate::analysis::compare::compare).
/// Two runs are two sides of one run each: every verdict is `?` between
/// them ([`super::judge`]); [`compare_sides`] takes repeats.
pub fn compare_runs(a: &RunData, b: &RunData, noise: f64) -> RunComparison {
    let statistic = Headline::parse(&a.run.headline).unwrap_or_default();
    compare_sides(
        std::slice::from_ref(a),
        std::slice::from_ref(b),
        &Rules::symmetric(statistic, noise),
    )
}

/// Compares side B against side A (the baseline), each one or more runs
/// of one recipe (repeats of one system), point by point with
/// [`super::judge`]: between runs, each run's headline is one sample.
/// `rules.headline` should be run A's headline. Both sides need a run.
pub fn compare_sides(a: &[RunData], b: &[RunData], rules: &Rules) -> RunComparison {
    let (side_a, side_b) = (pooled_side(a, 0), pooled_side(b, 1));
    let cells_a = cells(&side_a, "run A");
    let cells_b = cells(&side_b, "run B");
    let pairing = system_pairing(&side_a, &side_b);
    let mut points = Vec::new();
    let mut only_in_a = Vec::new();
    for ((system, key), ca) in &cells_a {
        let system_b = pairing
            .get(system)
            .cloned()
            .unwrap_or_else(|| system.clone());
        match cells_b.get(&(system_b.clone(), key.clone())) {
            Some(cb) => points.push(compare_cells(
                (system, &system_b),
                (ca, cb),
                (a.len(), b.len()),
                rules,
            )),
            None => only_in_a.push(format!("{system} {}", ca.point.label())),
        }
    }
    let matched_b: Vec<(String, String)> = cells_a
        .keys()
        .map(|(s, k)| {
            (
                pairing.get(s).cloned().unwrap_or_else(|| s.clone()),
                k.clone(),
            )
        })
        .collect();
    let only_in_b = cells_b
        .iter()
        .filter(|(k, _)| !matched_b.contains(k))
        .map(|((s, _), c)| format!("{s} {}", c.point.label()))
        .collect();
    points.sort_by_key(|p| order_in(&side_a, &p.system, &p.coords));
    let pairs: Vec<(&Cell, &Cell)> = (cells_a.iter())
        .filter_map(|((system, key), ca)| {
            let system_b = pairing.get(system).unwrap_or(system);
            let cb = cells_b.get(&(system_b.clone(), key.clone()))?;
            let judged = judge(ca, cb, rules);
            let usable = !matches!(judged.verdict, Verdict::NotComparable { .. });
            usable.then_some((ca, cb))
        })
        .collect();
    let geomean = whole(&pairs, rules);
    RunComparison {
        run_a: a[0].run.id,
        run_b: b[0].run.id,
        runs_a: a.len(),
        runs_b: b.len(),
        name_a: a[0].run.name.clone(),
        name_b: b[0].run.name.clone(),
        noise: rules.noise,
        statistic: rules.headline,
        geomean_ratio: geomean.as_ref().map(|g| g.ratio),
        geomean,
        points,
        only_in_a,
        only_in_b,
        environment: environment_differences(&a[0], &b[0]),
    }
}

/// The runs of one side as one run: the first run's record with every
/// run's trials, each trial's `run_id` made the run's key on this side
/// (`2 · position + side`), so the two sides' runs never share a key.
fn pooled_side(runs: &[RunData], side: i64) -> RunData {
    let mut out = runs[0].clone();
    out.trials = (runs.iter().enumerate())
        .flat_map(|(i, r)| {
            r.trials.iter().map(move |t| {
                let mut t = t.clone();
                t.run_id = 2 * i as i64 + side;
                t
            })
        })
        .collect();
    out
}

/// The run's cells by (system, canonical coordinates), named `who` in the
/// engine's reasons (`client-bound at 4 of 4 trials in run B`).
fn cells(run: &RunData, who: &str) -> BTreeMap<(String, String), Cell> {
    super::rows::collect(run)
        .cells
        .into_iter()
        .map(|mut c| {
            let key = (c.system.clone(), canonical(&c.point.coords));
            c.system = who.to_string();
            (key, c)
        })
        .collect()
}

/// Coordinates in axis order, so `a=1 b=2` matches `b=2 a=1`.
pub fn canonical(coords: &[Coord]) -> String {
    let mut parts: Vec<String> = coords
        .iter()
        .map(|c| format!("{}={}", c.target, c.json()))
        .collect();
    parts.sort();
    parts.join(" ")
}

/// System of A -> system of B when the runs share no label but have one
/// system each; empty otherwise (labels match themselves).
fn system_pairing(a: &RunData, b: &RunData) -> BTreeMap<String, String> {
    let (sa, sb) = (a.systems(), b.systems());
    let shared = sa.iter().any(|s| sb.contains(s));
    match (sa.as_slice(), sb.as_slice()) {
        ([x], [y]) if !shared => BTreeMap::from([(x.clone(), y.clone())]),
        _ => BTreeMap::new(),
    }
}

fn compare_cells(
    (system, system_b): (&str, &str),
    (a, b): (&Cell, &Cell),
    (runs_a, runs_b): (usize, usize),
    rules: &Rules,
) -> PointComparison {
    let per_run_a = per_run(a, runs_a, rules);
    let per_run_b = per_run(b, runs_b, rules);
    PointComparison {
        system: system.to_string(),
        system_b: system_b.to_string(),
        point: a.point.label(),
        coords: a.point.coords.clone(),
        trials_a: a.trials(),
        trials_b: b.trials(),
        value_a: geometric_mean(&per_run_a),
        value_b: geometric_mean(&per_run_b),
        spread_a: relative_half_width(&a.throughput),
        spread_b: relative_half_width(&b.throughput),
        comparison: judge(a, b, rules),
        run_values_a: per_run_a,
        run_values_b: per_run_b,
    }
}

/// Each run's statistic over its kept trials at the point, by the run's
/// position on its side (`None` where it has none), over the runs the
/// verdict uses ([`super::judge::judged_runs`]).
fn per_run(c: &Cell, runs: usize, rules: &Rules) -> Vec<Option<f64>> {
    let mut out = vec![None; runs];
    for (key, samples) in by_run(&judged_runs(&kept(&c.samples), rules).samples) {
        if let Some(slot) = out.get_mut((key / 2) as usize) {
            *slot = run_values(&samples, rules).first().copied();
        }
    }
    out
}

/// The geometric mean of the values present; `None` without one.
fn geometric_mean(values: &[Option<f64>]) -> Option<f64> {
    crate::analysis::summary::geometric_mean(values.iter().flatten().copied())
}

/// Sort key: the system's first appearance, then the point's sweep index.
fn order_in(run: &RunData, system: &str, coords: &[Coord]) -> (usize, u32) {
    let systems = run.systems();
    let s = systems
        .iter()
        .position(|x| x == system)
        .unwrap_or(usize::MAX);
    let key = canonical(coords);
    let index = run
        .trials
        .iter()
        .find(|t| canonical(&t.point.coords) == key)
        .map_or(u32::MAX, |t| t.point.index);
    (s, index)
}

/// Keys of the flattened environments (and the server and scalelab
/// versions) whose values differ, sorted by key.
pub fn environment_differences(a: &RunData, b: &RunData) -> Vec<EnvDifference> {
    let mut fa = crate::record::environment::flatten(&a.run.environment_facts());
    let mut fb = crate::record::environment::flatten(&b.run.environment_facts());
    for (map, run) in [(&mut fa, &a.run), (&mut fb, &b.run)] {
        if let Some(v) = &run.server_version {
            map.insert("server_version".to_string(), v.clone());
        }
        map.insert("scalelab_version".to_string(), run.scalelab_version.clone());
    }
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| EnvDifference {
            key: k.clone(),
            a: fa.get(k).cloned(),
            b: fb.get(k).cloned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Point;
    use crate::record::environment::{
        Environment, Fingerprint, HostFingerprint, PortableFingerprint,
    };
    use crate::store::{Measurement, Run, Trial, TrialStatus};
    use crate::units::PerSecond;

    fn run(id: i64, env: Option<Environment>, server: Option<&str>) -> Run {
        Run {
            id,
            name: format!("run{id}"),
            description: String::new(),
            started_at: 0,
            finished_at: None,
            status: crate::store::RunStatus::Finished,
            experiment: String::new(),
            experiment_path: String::new(),
            environment: env,
            scalelab_version: "0.1.0".into(),
            server_version: server.map(str::to_string),
            baseline: None,
            headline: "median".into(),
            load_kind: "http".into(),
            server_kind: "nginx".into(),
            rate_unit: Some(crate::units::RateUnit::Requests),
            parallelism: scalelab_lab::catalog()
                .parallelism_of("nginx")
                .map(|p| p.iter().map(|s| s.to_string()).collect()),
            noise: 0.02,
            quick: false,
            label: format!("run{id}"),
            revision: None,
            order: None,
        }
    }

    fn point(index: u32, conns: i64) -> Point {
        Point {
            index,
            coords: vec![Coord {
                target: crate::model::AxisTarget::Connections,
                value: conns.into(),
            }],
        }
    }

    fn trials(system: &str, p: &Point, rps: &[f64]) -> Vec<Trial> {
        rps.iter()
            .enumerate()
            .map(|(i, &r)| Trial {
                id: 0,
                run_id: 0,
                system: system.into(),
                point: p.clone(),
                trial: i as u32 + 1,
                status: if r > 0.0 {
                    TrialStatus::Ok
                } else {
                    TrialStatus::Failed
                },
                error: None,
                failure_cause: None,
                started_at: 0,
                measurement: Some(Measurement {
                    rps: PerSecond(r),
                    ..Default::default()
                }),
                probe: None,
                probe_unreadable: None,
                timeline: vec![],
                window: Default::default(),
                context: Default::default(),
                place: None,
            })
            .collect()
    }

    const BASE: [f64; 5] = [1000.0, 1010.0, 990.0, 1005.0, 995.0];

    fn scaled(f: f64) -> Vec<f64> {
        BASE.iter().map(|v| v * f).collect()
    }

    #[test]
    fn matches_by_system_and_coordinates() {
        let (p1, p2, p3) = (point(0, 10), point(1, 100), point(2, 1000));
        let mut a_trials = trials("nginx", &p1, &BASE);
        a_trials.extend(trials("nginx", &p2, &BASE));
        a_trials.extend(trials("nginx", &p3, &BASE));
        // B's sweep indexes differ and lacks connections=1000, adds 5000.
        let mut b_trials = trials("nginx", &point(7, 100), &scaled(0.9));
        b_trials.extend(trials("nginx", &point(3, 10), &scaled(1.2)));
        b_trials.extend(trials("nginx", &point(9, 5000), &BASE));
        let a = RunData {
            run: run(1, None, None),
            trials: a_trials,
            profiles: Vec::new(),
        };
        let b = RunData {
            run: run(2, None, None),
            trials: b_trials,
            profiles: Vec::new(),
        };
        let c = compare_runs(&a, &b, 0.02);
        assert_eq!(c.points.len(), 2);
        assert_eq!(c.points[0].point, "connections=10");
        // One run a side: the change is shown, nothing is claimed.
        let one_a_side = Verdict::NeedsMoreRuns {
            at_least: (3, 3),
            runs: (1, 1),
        };
        assert_eq!(c.points[0].comparison.verdict, one_a_side);
        assert!((c.points[0].comparison.ratio - 1.2).abs() < 1e-9);
        assert_eq!(c.points[1].comparison.p_value, None);
        // Three repeats a side that drift by a few percent: judged.
        let drift = |d: &RunData, f: f64, id: i64| {
            let mut r = d.clone();
            r.run.id = id;
            for t in &mut r.trials {
                if let Some(m) = &mut t.measurement {
                    m.rps.0 *= f;
                }
            }
            r
        };
        let sides = |d: &RunData, first: i64| {
            [1.0, 1.03, 0.98]
                .iter()
                .enumerate()
                .map(|(i, f)| drift(d, *f, first + i as i64))
                .collect::<Vec<_>>()
        };
        let rules = Rules::symmetric(Headline::Median, 0.02);
        let c = compare_sides(&sides(&a, 1), &sides(&b, 4), &rules);
        assert_eq!(c.points[0].comparison.verdict, Verdict::Faster);
        assert_eq!(c.points[1].comparison.verdict, Verdict::Slower);
        assert_eq!(c.points[0].comparison.runs, Some((3, 3)));
        assert_eq!((c.runs_a, c.runs_b), (3, 3));
        assert_eq!(c.only_in_a, vec!["nginx connections=1000"]);
        assert_eq!(c.only_in_b, vec!["nginx connections=5000"]);
        let g = c.geomean_ratio.unwrap();
        assert!((g - (1.2f64 * 0.9).sqrt()).abs() < 1e-12, "{g}");
    }

    #[test]
    fn single_differently_named_systems_are_paired() {
        let p = point(0, 10);
        let a = RunData {
            run: run(1, None, None),
            trials: trials("old", &p, &BASE),
            profiles: Vec::new(),
        };
        let b = RunData {
            run: run(2, None, None),
            trials: trials("new", &p, &BASE),
            profiles: Vec::new(),
        };
        let c = compare_runs(&a, &b, 0.02);
        assert_eq!(c.points.len(), 1);
        assert_eq!(
            (c.points[0].system.as_str(), c.points[0].system_b.as_str()),
            ("old", "new")
        );
        assert!(matches!(
            c.points[0].comparison.verdict,
            Verdict::NeedsMoreRuns { .. }
        ));
        assert_eq!(c.points[0].comparison.ratio, 1.0);
    }

    #[test]
    fn failed_trials_are_counted_but_give_no_sample() {
        let p = point(0, 10);
        let a = RunData {
            run: run(1, None, None),
            trials: trials("s", &p, &BASE),
            profiles: Vec::new(),
        };
        let b = RunData {
            run: run(2, None, None),
            trials: trials("s", &p, &[1000.0, 0.0, 0.0, 0.0, 0.0]),
            profiles: Vec::new(),
        };
        let c = compare_runs(&a, &b, 0.02);
        assert_eq!(
            (c.points[0].trials_b, c.points[0].value_b),
            (5, Some(1000.0))
        );
        assert_eq!(
            c.points[0].comparison.verdict,
            Verdict::NeedsMoreRuns {
                at_least: (3, 3),
                runs: (1, 1)
            }
        );
    }

    #[test]
    fn environment_differences_are_flattened() {
        let machine = |kernel: &str, somaxconn: &str| Fingerprint {
            kernel_release: kernel.into(),
            sysctls: [("net.core.somaxconn".to_string(), somaxconn.to_string())].into(),
            ..Fingerprint::default()
        };
        let env_a = Some(Environment::local(machine("6.1.0-18", "4096")));
        let mut env_b = Environment::local(machine("6.1.0-21", "128"));
        env_b.machine.cpufreq_governor = "performance".into();
        env_b.hosts.insert(
            "h".into(),
            HostFingerprint::Portable(PortableFingerprint::parse("uname=FreeBSD 14.0")),
        );
        let env_b = Some(env_b);
        let a = RunData {
            run: run(1, env_a, Some("nginx/1.22.1")),
            trials: vec![],
            profiles: Vec::new(),
        };
        let b = RunData {
            run: run(2, env_b, Some("nginx/1.25.3")),
            trials: vec![],
            profiles: Vec::new(),
        };
        let d = environment_differences(&a, &b);
        let keys: Vec<&str> = d.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "cpufreq_governor",
                "hosts.h.uname",
                "kernel_release",
                "server_version",
                "sysctls.net.core.somaxconn"
            ]
        );
        assert_eq!(d[0].a.as_deref(), Some(""));
        assert_eq!(d[1].a, None);
        assert_eq!(d[2].b.as_deref(), Some("6.1.0-21"));
        assert_eq!(d[4].a.as_deref(), Some("4096"));
    }

    /// A BSD host's offload changed between two runs (pfSense's re1
    /// before and after `ifconfig re1 tso`, both captured) is one
    /// differing row, named by interface and flag.
    #[test]
    fn a_changed_bsd_offload_is_a_differing_row() {
        let fixture = crate::probe::nic_bsd::fixture;
        let env = |id: i64, name: &str| {
            let text = format!("#nic re1\n{}#sysctl re1\n", fixture(name));
            let mut fp = PortableFingerprint::parse("uname=FreeBSD 10.3-RELEASE-p5 amd64");
            fp.nics = crate::probe::nic_script::parse_nics(&text);
            let mut env = Environment::local(Fingerprint::default());
            env.hosts
                .insert("root@fw".into(), HostFingerprint::Portable(fp));
            RunData {
                run: run(id, Some(env), None),
                trials: vec![],
                profiles: Vec::new(),
            }
        };
        let a = env(1, "pfsense-2.3.2-ifconfig-m-re1-before-tso.txt");
        let b = env(2, "pfsense-2.3.2-ifconfig-m-re1-options-capabilities.txt");
        let d = environment_differences(&a, &b);
        let keys: Vec<&str> = d.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["hosts.root@fw.nics.re1.offloads.TSO4"]);
        assert_eq!(
            (d[0].a.as_deref(), d[0].b.as_deref()),
            (Some("off"), Some("on"))
        );
    }

    #[test]
    fn no_common_points_gives_no_geomean() {
        let a = RunData {
            run: run(1, None, None),
            trials: trials("a", &point(0, 1), &BASE),
            profiles: Vec::new(),
        };
        let b = RunData {
            run: run(2, None, None),
            trials: [
                trials("b", &point(0, 1), &BASE),
                trials("c", &point(0, 1), &BASE),
            ]
            .concat(),
            profiles: Vec::new(),
        };
        let c = compare_runs(&a, &b, 0.02);
        assert!(c.points.is_empty());
        assert_eq!(c.geomean_ratio, None);
        assert_eq!(c.only_in_b.len(), 2);
    }
}
