//! `scalelab model` (and later `scalelab compare`) through the built binary.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/usl")
        .join(name)
}

fn scalelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scalelab"))
        .args(args)
        .output()
        .expect("the scalelab binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to a CSV in a fresh temp dir (kept alive by the guard).
fn csv(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("points.csv");
    std::fs::write(&path, text).expect("write csv");
    let p = path.to_string_lossy().into_owned();
    (dir, p)
}

fn model_json(path: &str) -> serde_json::Value {
    let out = scalelab(&["model", path, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn model_fits_specsdm91_like_r_usl() {
    // R usl 3.0.3 tests/summary.Rout.save: alpha 2.773e-02, beta 1.044e-04,
    // gamma 9.000e+01, peak 1884 at load 96.52, limit 3246.
    let path = fixture("specsdm91.csv");
    let v = model_json(&path.to_string_lossy());
    let close = |a: f64, b: f64| (a - b).abs() <= 5e-4 * b;
    assert!(close(num(&v, "sigma"), 2.773e-2), "{v}");
    assert!(close(num(&v, "kappa"), 1.044e-4), "{v}");
    assert!(close(num(&v, "lambda"), 90.00), "{v}");
    assert!(close(num(&v, "peak_concurrency"), 96.52), "{v}");
    assert!(close(num(&v, "peak_throughput"), 1884.0), "{v}");
    assert!(close(num(&v, "amdahl_ceiling"), 3246.0), "{v}");
    assert!(close(num(&v, "sigma_se"), 9.122e-3), "{v}");
    assert!(num(&v, "r_squared") > 0.98 && num(&v, "r_squared") <= 1.0);
    assert_eq!(v["points"], 7);
    assert_eq!(v["sigma_ci"].as_array().map(|a| a.len()), Some(2));
}

#[test]
fn model_prints_a_readable_summary() {
    let out = scalelab(&["model", &fixture("specsdm91.csv").to_string_lossy()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("USL fit of 7 points"), "{text}");
    assert!(text.contains("0.02773"), "{text}");
    assert!(text.contains("N* = 96.52, X(N*) = 1884"), "{text}");
    assert!(text.contains("3246 (lambda / sigma)"), "{text}");
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
}

#[test]
fn model_reports_amdahl_without_a_peak() {
    let v = model_json(&fixture("raytracer.csv").to_string_lossy());
    assert_eq!(v["kappa"], 0.0);
    assert!(v["peak_concurrency"].is_null(), "{v}");
    assert_eq!(v["peak_throughput"], v["amdahl_ceiling"]);
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("Amdahl"), "{warnings}");
    let out = scalelab(&["model", &fixture("raytracer.csv").to_string_lossy()]);
    assert!(
        stdout(&out).contains("peak                   none"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn three_points_fit_with_nulls_for_errors() {
    let (_dir, path) = csv("n,x\n1,100\n4,350\n16,800\n");
    let v = model_json(&path);
    for key in [
        "sigma_se",
        "kappa_se",
        "lambda_se",
        "sigma_ci",
        "residual_standard_error",
    ] {
        assert!(v[key].is_null(), "{key} in {v}");
    }
    assert!(v["warnings"].to_string().contains("only 3 points"), "{v}");
    let text = stdout(&scalelab(&["model", &path]));
    assert!(!text.contains("NaN"), "{text}");
}

/// An export CSV of pgbench's select-only and tpcb-like scripts: `model`
/// fits each script on its own (together they gave R² = 0.03).
#[test]
fn model_fits_each_curve_of_an_export_on_its_own() {
    let mut text = String::from(
        "run_id,system,point_index,load.script,connections,trial,status,throughput_transactions_per_s\n",
    );
    let usl = |lambda: f64, sigma: f64, kappa: f64, n: f64| {
        lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
    };
    for (i, n) in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0].iter().enumerate() {
        let select = usl(7000.0, 0.05, 0.001, *n);
        let tpcb = usl(900.0, 0.2, 0.01, *n);
        text += &format!("1,pg,{i},select-only,{n},1,ok,{select:.1}\n");
        text += &format!("1,pg,{},tpcb-like,{n},1,ok,{tpcb:.1}\n", i + 6);
    }
    text += "1,pg,11,tpcb-like,32,2,failed,\n";
    let (_dir, path) = csv(&text);
    let out = scalelab(&["model", &path, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fits = v
        .as_array()
        .unwrap_or_else(|| panic!("one fit per curve: {v}"));
    assert_eq!(fits.len(), 2, "{v}");
    assert_eq!(fits[0]["curve"], "load.script=select-only");
    assert_eq!(fits[1]["curve"], "load.script=tpcb-like");
    for f in fits {
        assert!(num(f, "r_squared") > 0.99, "{f}");
        assert_eq!(f["points"], 6, "the failed trial is left out: {f}");
    }
    assert!((num(&fits[1], "sigma") - 0.2).abs() < 1e-3, "{v}");
    let text = stdout(&scalelab(&["model", &path]));
    assert!(
        text.contains(&format!("{path} (load.script=tpcb-like)")),
        "{text}"
    );
}

#[test]
fn bad_rows_are_named_by_file_and_line() {
    let (_dir, path) = csv("clients,tps\n1,100\n2,abc\n4,300\n");
    let out = scalelab(&["model", &path]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{path}: line 3")), "{err}");
    assert!(err.contains("`abc`") && err.contains("`tps`"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn unusable_inputs_fail_clearly() {
    let cases = [
        ("1,100\n2,190\n", "at least 3"),
        ("1,0\n2,0\n4,0\n", "must be positive"),
        ("1,100\n1,110\n2,190\n", "distinct"),
        ("", "no data"),
    ];
    for (text, expected) in cases {
        let (_dir, path) = csv(text);
        let out = scalelab(&["model", &path]);
        assert_eq!(out.status.code(), Some(2), "{text:?}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{text:?}: {err}");
        assert!(stdout(&out).is_empty());
    }
    let out = scalelab(&["model", "/nonexistent/points.csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read /nonexistent/points.csv"));
}

mod compare {
    use super::{scalelab, stderr, stdout};
    use scalelab::model::Point;
    use scalelab::probe::{Environment, Fingerprint};
    use scalelab::store::{Measurement, NewRun, NewTrial, Store, TrialStatus};

    /// A two-CPU machine running `kernel`.
    fn machine(kernel: &str) -> Environment {
        Environment::local(Fingerprint {
            kernel_release: kernel.into(),
            online_cpus: 2,
            ..Fingerprint::default()
        })
    }

    /// A run with one system at three connection counts; `scale` multiplies
    /// the throughput per point.
    fn add_run(store: &mut Store, env: Environment, scale: [f64; 3]) -> i64 {
        add_run_with_noise(store, env, scale, 0.02)
    }

    /// [`add_run`] with the run's `[trials] noise`.
    fn add_run_with_noise(store: &mut Store, env: Environment, scale: [f64; 3], noise: f64) -> i64 {
        // Six trials per point, spread about ±1% (synthetic, as the brief allows).
        let jitter = [1.0, 1.01, 0.99, 1.005, 0.995, 1.002];
        add_shaped(store, env, scale, noise, Shape::default(), &jitter)
    }

    /// What else a synthetic run may vary.
    #[derive(Default)]
    struct Shape {
        /// The recipe's name (default `synthetic`).
        name: Option<&'static str>,
        /// Timeouts per trial, beside its 10,000 requests.
        timeouts: u64,
    }

    /// A run with one trial per `jitter` value at each point.
    fn add_shaped(
        store: &mut Store,
        env: Environment,
        scale: [f64; 3],
        noise: f64,
        shape: Shape,
        jitter: &[f64],
    ) -> i64 {
        let name = shape.name.unwrap_or("synthetic");
        let run_id = store
            .create_run(&NewRun {
                name,
                description: "two runs for scalelab compare",
                experiment: "name = \"synthetic\"",
                experiment_path: "synthetic.toml",
                quick: false,
                environment: &env,
                baseline: "nginx",
                headline: "median",
                load_kind: "http",
                server_kind: "nginx",
                rate_unit: scalelab::catalog().rate_unit_of("http"),
                parallelism: scalelab::catalog().parallelism_of("nginx"),
                noise,
                label: None,
                revision: None,
            })
            .expect("create run");
        for (index, (conns, f)) in [10, 100, 1000].into_iter().zip(scale).enumerate() {
            let point = Point::new(index as u32, &[("connections", conns.into())]);
            for (trial, j) in jitter.iter().enumerate() {
                let m = Measurement {
                    requests: 10_000,
                    duration_s: scalelab::units::Seconds(1.0),
                    rps: scalelab::units::PerSecond(10_000.0 * f * j),
                    errors: scalelab::load::result::ErrorCounts {
                        timeout: shape.timeouts,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                store
                    .insert_trial(&NewTrial {
                        run_id,
                        system: "nginx",
                        point: &point,
                        trial: trial as u32 + 1,
                        status: TrialStatus::Ok,
                        error: None,
                        failure_cause: None,
                        started_at: 0,
                        context: &Default::default(),
                        measurement: Some(&m),
                        timeline: &[],
                        window: &Default::default(),
                        histogram: None,
                        probe_summary: None,
                        probe_timeline: None,
                        probe_refused: None,
                    })
                    .expect("insert trial");
            }
        }
        run_id
    }

    fn out_json(out: &std::process::Output) -> serde_json::Value {
        serde_json::from_slice(&out.stdout).expect("JSON")
    }

    /// How three repeats of one system drift as whole runs: a few percent,
    /// while each run's six trials agree within 1%.
    const DRIFT: [f64; 3] = [1.0, 1.03, 0.98];

    /// Three repeats of `kernel` (one label) into `store`, each run's
    /// throughput `scale` per point times its drift.
    fn add_repeats(store: &mut Store, kernel: &str, scale: [f64; 3], noise: f64) {
        for d in DRIFT {
            add_run_with_noise(store, machine(kernel), scale.map(|s| s * d), noise);
        }
    }

    /// Runs 1–3: `Linux 6.1.0-18`; runs 4–6: `Linux 6.1.0-21`, 15% faster at
    /// 10, 10% slower at 100, the same at 1000.
    fn three_and_three() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("store.sqlite");
        let mut store = Store::open(&path, scalelab::catalog()).expect("open store");
        add_repeats(&mut store, "6.1.0-18", [1.0, 1.0, 1.0], 0.02);
        add_repeats(&mut store, "6.1.0-21", [1.15, 0.9, 1.0], 0.02);
        (dir, path.to_string_lossy().into_owned())
    }

    fn two_runs() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("store.sqlite");
        let mut store = Store::open(&path, scalelab::catalog()).expect("open store");
        add_run(&mut store, machine("6.1.0-18"), [1.0, 1.0, 1.0]);
        // B: 15% faster at 10, 10% slower at 100, the same at 1000.
        add_run(&mut store, machine("6.1.0-21"), [1.15, 0.9, 1.0]);
        (dir, path.to_string_lossy().into_owned())
    }

    #[test]
    fn verdicts_per_point_in_json() {
        let (_dir, store) = three_and_three();
        let out = scalelab(&[
            "--store", &store, "compare", "1", "2", "3", "4", "5", "6", "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v["baseline"], "Linux 6.1.0-18", "{v}");
        let v = &v["comparisons"][0];
        assert_eq!(v["label"], "Linux 6.1.0-21", "{v}");
        assert_eq!(v["too_few_trials"], 0, "{v}");
        let verdicts: Vec<&str> = v["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|p| {
                p["comparison"]["verdict"]["verdict"]
                    .as_str()
                    .unwrap_or("?")
            })
            .collect();
        assert_eq!(verdicts, ["faster", "slower", "no_difference"], "{v}");
        let ratio = v["points"][0]["comparison"]["ratio"]
            .as_f64()
            .unwrap_or(0.0);
        assert!((ratio - 1.15).abs() < 1e-9, "{ratio}");
        assert_eq!(v["points"][0]["comparison"]["test"], "runs", "{v}");
        assert_eq!(
            v["points"][0]["comparison"]["runs"],
            serde_json::json!([3, 3]),
            "{v}"
        );
        // geomean of 1.15, 0.9, 1.0, judged as one value per run
        let g = v["geomean_ratio"].as_f64().unwrap_or(0.0);
        assert!((g - (1.15f64 * 0.9).cbrt()).abs() < 1e-9, "{g}");
        assert_eq!(v["geomean"]["runs"], serde_json::json!([3, 3]), "{v}");
        assert_eq!(v["runs_a"], 3, "{v}");
        let env = out_json(&out)["environment"].to_string();
        assert!(
            env.contains("6.1.0-18") && env.contains("6.1.0-21"),
            "{env}"
        );
        assert!(!env.contains("cpus"), "{env}");
    }

    #[test]
    fn benchstat_style_table() {
        let (_dir, store) = three_and_three();
        let out = scalelab(&[
            "--store", &store, "compare", "1", "2", "3", "4", "5", "latest",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let line = |needle: &str| {
            text.lines()
                .find(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no `{needle}` in\n{text}"))
                .to_string()
        };
        assert!(
            line("connections=10 ").contains("+15.0% (3 v 3 runs, p=0.002)"),
            "{text}"
        );
        assert!(
            line("connections=100 ").contains("-10.0% (3 v 3 runs, p=0.007)"),
            "{text}"
        );
        assert!(
            line("connections=1000").contains("~ (3 v 3 runs, p=1.000"),
            "{text}"
        );
        // (1.15 * 0.9 * 1.0)^(1/3) = 1.0115: under the drift, one test for
        // the run as a whole.
        let geomean = text
            .lines()
            .find(|l| l.starts_with("geomean"))
            .unwrap_or("");
        assert!(geomean.contains("~ (3 v 3 runs"), "{text}");
        assert!(
            text.contains("`Linux 6.1.0-18`: 3 runs pooled by label as repeats of one system"),
            "{text}"
        );
        assert!(
            text.contains("drift between the 3 runs of `Linux 6.1.0-18`"),
            "{text}"
        );
        // One run against one: the change is shown, nothing is claimed.
        let (_dir1, one) = two_runs();
        let out = scalelab(&["--store", &one, "compare", "1", "2"]);
        let single = stdout(&out);
        assert!(single.contains("? +15.0% (1 run a side)"), "{single}");
        assert!(
            !single.contains("p="),
            "no p-value between single runs: {single}"
        );
        assert!(line("kernel_release").contains("6.1.0-21"), "{text}");
        assert!(
            text.contains("Linux 6.1.0-21 is 15.0% faster (95% CI"),
            "{text}"
        );
        assert!(!text.contains("NaN"), "{text}");
    }

    #[test]
    fn unknown_runs_and_missing_stores_are_clear_errors() {
        let (_dir, store) = two_runs();
        let out = scalelab(&["--store", &store, "compare", "1", "9"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("no run `9`"), "{}", stderr(&out));
        let out = scalelab(&["--store", "/nonexistent/s.sqlite", "compare", "1", "2"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("no store at /nonexistent/s.sqlite"));
        let out = scalelab(&["--store", &store, "compare", "1", "2", "--noise=-3"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("--noise"), "{}", stderr(&out));
    }

    /// Three repeats a side, each side in its own store file, A with
    /// `noise` as its `[trials] noise`: the six runs' references.
    fn two_stores_of_three(noise: f64) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = dir.path().join("linux-6.1.sqlite");
        let b = dir.path().join("linux-6.12.sqlite");
        add_repeats(
            &mut Store::open(&a, scalelab::catalog()).unwrap(),
            "6.1.0-18",
            [1.0; 3],
            noise,
        );
        add_repeats(
            &mut Store::open(&b, scalelab::catalog()).unwrap(),
            "6.12.0-1",
            [1.15, 0.9, 1.0],
            0.02,
        );
        let runs = [&a, &b]
            .iter()
            .flat_map(|p| (1..=3).map(move |i| format!("{}:{i}", p.display())))
            .collect();
        (dir, runs)
    }

    /// Runs A and B of [`two_runs`], each in its own store file, A with
    /// `noise` as its `[trials] noise`.
    fn two_stores(noise: f64) -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = dir.path().join("linux-6.1.sqlite");
        let b = dir.path().join("linux-6.12.sqlite");
        let env = machine;
        add_run_with_noise(
            &mut Store::open(&a, scalelab::catalog()).unwrap(),
            env("6.1.0-18"),
            [1.0; 3],
            noise,
        );
        add_run(
            &mut Store::open(&b, scalelab::catalog()).unwrap(),
            env("6.12.0-1"),
            [1.15, 0.9, 1.0],
        );
        let s = |p: std::path::PathBuf| p.to_string_lossy().into_owned();
        (dir, s(a), s(b))
    }

    #[test]
    fn runs_from_two_stores_compare_as_the_readme_shows() {
        let (_dir, a, b) = two_stores(0.02);
        let out = scalelab(&["compare", &format!("{a}:1"), &format!("{b}:1")]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.starts_with(
                "Linux 6.12.0-1 (synthetic, run 1) against Linux 6.1.0-18 (synthetic, run 1, the baseline)"
            ),
            "{text}"
        );
        // Named by label, not by store file.
        assert!(!text.contains("sqlite"), "{text}");
        assert!(text.contains("? +15.0% (1 run a side)"), "{text}");
        assert!(text.contains("6.12.0-1"), "{text}");
        // The same with --store-b.
        let out = scalelab(&["--store", &a, "compare", "1", "latest", "--store-b", &b]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), text);
    }

    #[test]
    fn the_baseline_runs_noise_judges_unless_overridden() {
        // A declared 20% noise: +15% and -10% are noise.
        let (_dir, runs) = two_stores_of_three(0.2);
        let runs: Vec<&str> = runs.iter().map(String::as_str).collect();
        let out = scalelab(&[&["compare"], runs.as_slice()].concat());
        let text = stdout(&out);
        assert!(text.contains("differences under 20% are noise"), "{text}");
        assert!(
            !text.contains("faster") && !text.contains("slower"),
            "{text}"
        );
        let out = scalelab(&[&["compare"], runs.as_slice(), &["--noise", "2"]].concat());
        let text = stdout(&out);
        assert!(text.contains("differences under 2% are noise"), "{text}");
        assert!(text.contains("15.0% faster"), "{text}");
    }

    /// One store per run in `dir`, each with a run shaped by `shape`.
    fn store_with(
        dir: &std::path::Path,
        file: &str,
        kernel: &str,
        scale: [f64; 3],
        shape: Shape,
        jitter: &[f64],
    ) -> String {
        let path = dir.join(file);
        let mut store = Store::open(&path, scalelab::catalog()).unwrap();
        add_shaped(&mut store, machine(kernel), scale, 0.02, shape, jitter);
        format!("{}:1", path.display())
    }

    /// A run of six trials per point in its own store.
    fn six_trials(dir: &std::path::Path, file: &str, kernel: &str, scale: [f64; 3]) -> String {
        store_with(dir, file, kernel, scale, Shape::default(), &SIX)
    }

    /// Six trials about ±1% apart.
    const SIX: [f64; 6] = [1.0, 1.01, 0.99, 1.005, 0.995, 1.002];

    /// Issue 27: two runs of two trials each give a percentage that the
    /// test cannot back; every percentage in the table is marked `?`.
    #[test]
    fn too_few_trials_leave_no_percentage_unmarked() {
        let dir = tempfile::tempdir().unwrap();
        let two = [1.0, 1.01];
        let a = store_with(
            dir.path(),
            "a.sqlite",
            "6.1.0-18",
            [1.0; 3],
            Shape::default(),
            &two,
        );
        let b = store_with(
            dir.path(),
            "b.sqlite",
            "6.1.0-18",
            [1.232; 3],
            Shape::default(),
            &two,
        );
        // Both runs have one label: pooled they would be one side, so
        // `--each-run` keeps them apart.
        let out = scalelab(&["compare", &a, &b]);
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        assert!(stderr(&out).contains("--each-run"), "{}", stderr(&out));
        let out = scalelab(&["compare", "--each-run", &a, &b]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("nginx ") || l.starts_with("geomean"))
            .collect();
        assert_eq!(rows.len(), 4, "{text}");
        for row in rows {
            assert!(
                !row.contains('%') || row.contains('?'),
                "unmarked %: {row}\n{text}"
            );
        }
        assert!(text.contains("? +23.2% (1 run a side)"), "{text}");
        // The same label on both sides: each gets its source.
        assert!(
            text.starts_with("Linux 6.1.0-18 (b.sqlite:1) (synthetic, run 1) against Linux 6.1.0-18 (a.sqlite:1)"),
            "{text}"
        );
        let v: serde_json::Value =
            serde_json::from_slice(&scalelab(&["compare", "--each-run", &a, &b, "--json"]).stdout)
                .unwrap();
        assert_eq!(v["comparisons"][0]["too_few_trials"], 3, "{v}");
    }

    /// Issue 27: another recipe is refused with exit 2, naming it.
    #[test]
    fn another_recipe_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = six_trials(dir.path(), "a.sqlite", "6.1", [1.0; 3]);
        let other = Shape {
            name: Some("nginx-static"),
            ..Shape::default()
        };
        let b = store_with(dir.path(), "b.sqlite", "6.12", [1.0; 3], other, &SIX);
        let out = scalelab(&["compare", &a, &b]);
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        assert!(
            stderr(&out).contains(
                "`Linux 6.12` ran another recipe: `nginx-static`, where `Linux 6.1` ran `synthetic`"
            ),
            "{}",
            stderr(&out)
        );
        let out = scalelab(&[
            "report",
            &a,
            &b,
            "-o",
            &dir.path().join("r.html").display().to_string(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    }

    /// A compare in which one run has errors at every point has nothing
    /// comparable for it: exit 5, and stderr says which.
    #[test]
    fn nothing_comparable_exits_5() {
        let dir = tempfile::tempdir().unwrap();
        let a = six_trials(dir.path(), "a.sqlite", "6.1", [1.0; 3]);
        let b = six_trials(dir.path(), "b.sqlite", "6.12", [1.1; 3]);
        let errors = Shape {
            timeouts: 100, // 1% of attempts, above the 0.1% threshold
            ..Shape::default()
        };
        let c = store_with(dir.path(), "c.sqlite", "6.18", [1.2; 3], errors, &SIX);
        let out = scalelab(&["compare", &a, &b, &c]);
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("nothing comparable: `Linux 6.18` shares no point"),
            "{}",
            stderr(&out)
        );
        // Two sets of verdicts: B's and C's.
        let text = stdout(&out);
        assert!(
            text.contains("Linux 6.12 (synthetic, run 1) against Linux 6.1"),
            "{text}"
        );
        assert!(
            text.contains("Linux 6.18 (synthetic, run 1) against Linux 6.1"),
            "{text}"
        );
        assert!(text.contains("? +10.0% (1 run a side)"), "{text}");
        assert!(text.contains("not comparable: 600 errors"), "{text}");
        let out = scalelab(&["compare", &a, &b]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let help = scalelab(&["--help"]);
        assert!(stdout(&help).contains("5    nothing comparable"));
    }
}
