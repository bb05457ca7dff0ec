//! Stores written by older scalelab versions still open and report the same
//! numbers. `tests/fixtures/stores/quickstart-v1.sqlite` was written by the
//! binary at commit 653abb5 (schema version 1) with
//! `scalelab run recipes/quickstart.toml --quick`.
//! `tests/fixtures/stores/quickstart-v2.sqlite` was written by the binary of
//! branch i25-typed (schema version 6, environment fingerprint version 2)
//! with `scalelab run tests/fixtures/stores/quickstart-v2.toml`, then
//! `VACUUM`ed.
//! `tests/fixtures/contexts/*-v2.json` are trial contexts the binary at
//! 7f75775 stored (before a kind's facts were `load::TrialExtras` and the
//! router's `server::ServerFacts`): a DNS ramp trial of `recipes/bind-threads.toml
//! --quick`, and a trial of `recipes/ipv4-forwarding.toml --quick` whose
//! search was cut to its best step.

use crate::support;
use scalelab::model::AxisTarget;
use scalelab::store::Store;

/// A private copy of a fixture store: opening may migrate it in place.
fn copy_of(fixture: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    std::fs::copy(support::fixture(fixture), &path).unwrap();
    (dir, path)
}

/// The throughputs as the old schema stored them, read with plain SQL.
fn raw_rps(path: &std::path::Path) -> Vec<f64> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT m.rps FROM measurements m JOIN trials t ON t.id = m.trial_id ORDER BY t.id",
        )
        .unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, f64>(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn a_version_1_store_opens_and_reports_its_numbers() {
    let (_dir, path) = copy_of("stores/quickstart-v1.sqlite");
    let before = raw_rps(&path);
    assert_eq!(before.len(), 8);
    let data = Store::open(&path, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    assert_eq!(data.systems(), vec!["1 worker", "2 workers"]);
    // Version 2 filled the run's load kind and noise from its experiment.
    assert_eq!(
        (data.run.load_kind.as_str(), data.run.noise),
        ("http", 0.02)
    );
    // Version 5 filled its server kind; the connections axis gets its fit.
    assert_eq!(data.run.server_kind, "nginx");
    // Version 7's label is empty for old runs: it falls back to the OS and
    // kernel of the stored fingerprint; no revision was recorded.
    let kernel = data
        .run
        .environment
        .as_ref()
        .unwrap()
        .machine
        .kernel_release
        .clone();
    assert!(!kernel.is_empty());
    assert_eq!(data.run.label, format!("Linux {kernel}"));
    assert_eq!(data.run.revision, None);
    let agg = scalelab::judging::analyse::aggregate(&data);
    assert!(agg.usl_axis);
    assert_eq!(agg.points[0].coords[0].target, AxisTarget::Connections);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, scalelab::store::SCHEMA_VERSION);
    let typed: Vec<f64> = data.trials.iter().filter_map(|t| t.throughput()).collect();
    assert_eq!(typed, before);
    let text = scalelab::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("throughput in requests/s"), "{text}");
    assert!(text.contains("2% noise floor"), "{text}");
    // 2 workers at connections=4: its 66.42k trial was client-bound and is
    // left out of the verdict (it measured the load generator), so the
    // change is its other trial's 51.46k over 44.22k.
    assert!(text.contains("? +16.4%"), "{text}");
}

#[test]
fn the_binary_exports_a_version_1_store() {
    let (_dir, path) = copy_of("stores/quickstart-v1.sqlite");
    let csv = support::stdout(&export(&path, "1", "csv"));
    assert_eq!(csv.lines().count(), 9, "{csv}");
    assert!(csv.contains("43775.89"), "{csv}");
}

#[test]
fn upgrading_keeps_a_declared_noise_and_refuses_newer_stores() {
    let (_dir, path) = copy_of("stores/quickstart-v1.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let text: String = conn
            .query_row("SELECT experiment FROM runs WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        let text = text.replace(
            "restart = \"per_point\"",
            "restart = \"per_point\"\nnoise = 0.3",
        );
        conn.execute("UPDATE runs SET experiment = ?1 WHERE id = 1", [text])
            .unwrap();
    }
    let data = Store::open(&path, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    assert_eq!(data.run.noise, 0.3);
    let text = scalelab::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("30% noise floor"), "{text}");

    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = Store::open(&path, scalelab::catalog())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("schema version 99, newer than"), "{err}");
}

/// A run made when recipes declared the dataset in `[server]` (`scale`,
/// swept as `"server.scale"`) is history, not input: its store still opens
/// and reports, its axis keeps its old name, and the dataset recorded with
/// each trial is still shown.
#[test]
fn a_run_with_the_dataset_in_server_settings_still_reports() {
    let (_dir, path) = copy_of("stores/quickstart-v1.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let old = "name = \"pg-old\"\n[server]\nkind = \"postgres\"\nscale = 2\n\
                   [load]\nkind = \"pg\"\n[sweep]\n\"server.scale\" = [2, 4]\n";
        conn.execute("UPDATE runs SET experiment = ?1 WHERE id = 1", [old])
            .unwrap();
        conn.execute(
            "UPDATE trials SET point = json_array(json_object('axis', 'server.scale', \
             'value', 2 * (point_index + 1))), context = json_set(context, '$.dataset', \
             json_object('description', 'pgbench scale ' || (2 * (point_index + 1)), \
             'bytes', 30000000 * (point_index + 1)))",
            [],
        )
        .unwrap();
    }
    let data = Store::open(&path, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    assert_eq!(
        (data.run.server_kind.as_str(), data.run.load_kind.as_str()),
        ("postgres", "pg")
    );
    let axis = &data.trials[0].point.coords[0];
    assert_eq!(axis.target, AxisTarget::Server("scale".into()));
    let dataset = data.trials[0].context.dataset.clone().unwrap();
    assert_eq!(dataset.description, "pgbench scale 2");
    let text = scalelab::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("throughput in transactions/s"), "{text}");
    assert!(text.contains("server.scale"), "{text}");
    let store = path.to_str().unwrap();
    let out = support::run(&["export", "1", "--format", "json", "--store", store]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(support::stdout(&out).contains("pgbench scale 4"));
    let html = path.with_extension("html");
    let html = html.to_str().unwrap();
    let out = support::run(&["--store", store, "report", "1", "-o", html]);
    assert!(out.status.success(), "{}", support::stderr(&out));
}

/// `scalelab export RUN --format FORMAT` of the store at `path`, which
/// must succeed.
fn export(path: &std::path::Path, run: &str, format: &str) -> std::process::Output {
    let store = path.to_str().unwrap();
    let out = support::run(&["export", run, "--format", format, "--store", store]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    out
}

/// The run's `environment` column exactly as stored.
fn raw_environment(path: &std::path::Path) -> serde_json::Value {
    let conn = rusqlite::Connection::open(path).unwrap();
    let text: String = conn
        .query_row("SELECT environment FROM runs WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_version_1_fingerprint_reads_typed_and_shows_the_same() {
    let (_dir, path) = copy_of("stores/quickstart-v1.sqlite");
    let raw = raw_environment(&path);
    assert!(raw.get("version").is_none(), "version 1 wrote no version");
    let data = Store::open(&path, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    let env = data.run.environment.clone().expect("a typed fingerprint");
    assert_eq!(env.version, 1);
    assert_eq!(env.machine.kernel_release, raw["kernel_release"]);
    assert_eq!(env.machine.sysctls["net.core.somaxconn"], "4096");
    // What the report, compare and the export show is the stored JSON.
    assert_eq!(data.run.environment_facts(), raw);
}

#[test]
fn a_store_written_by_this_version_round_trips_its_fingerprint_typed() {
    let (_dir, path) = copy_of("stores/quickstart-v2.sqlite");
    let raw = raw_environment(&path);
    assert_eq!(raw["version"], scalelab::probe::ENVIRONMENT_VERSION);
    let data = Store::open(&path, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    let env = data.run.environment.clone().expect("a typed fingerprint");
    let m = &env.machine;
    assert_eq!(env.version, 2);
    assert_eq!(m.kernel_release, raw["kernel_release"]);
    assert_eq!(m.kernel_version, raw["kernel_version"]);
    assert_eq!(m.cpu_model, raw["cpu_model"]);
    assert_eq!(serde_json::json!(m.online_cpus), raw["online_cpus"]);
    assert_eq!(serde_json::json!(m.mem_total_bytes), raw["mem_total_bytes"]);
    let sysctls: std::collections::BTreeMap<String, String> =
        serde_json::from_value(raw["sysctls"].clone()).unwrap();
    assert_eq!(m.sysctls, sysctls);
    assert_eq!(m.sysctls.len(), scalelab::probe::SYSCTLS.len());
    assert!(env.hosts.is_empty());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&env.to_stored().unwrap()).unwrap(),
        raw
    );
    assert_eq!(data.trials.len(), 1);
    assert!(data.trials[0].throughput().unwrap_or(0.0) > 0.0);
}

/// Comparing a version-1 run with a version-2 run diffs facts only: the
/// format version is no difference between the machines.
#[test]
fn comparing_across_fingerprint_versions_diffs_facts_only() {
    let (_d1, v1) = copy_of("stores/quickstart-v1.sqlite");
    let (_d2, v2) = copy_of("stores/quickstart-v2.sqlite");
    let a = Store::open(&v1, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    let b = Store::open(&v2, scalelab::catalog())
        .unwrap()
        .load_run("1")
        .unwrap();
    let d = scalelab::judging::runs::environment_differences(&a, &b);
    assert!(d.iter().all(|e| e.key != "version"), "{d:?}");
    assert!(d.iter().any(|e| e.key == "kernel_release"), "{d:?}");
}

/// Issue 41: `export` takes `STORE:RUN` as `report` and `compare` do, and
/// `report` of a run in a store other than the default names its file
/// after the store, so the first runs of two stores do not overwrite one
/// report.
#[test]
fn export_takes_store_run_and_reports_of_two_stores_get_two_files() {
    let (dir, path) = copy_of("stores/quickstart-v1.sqlite");
    let other = dir.path().join("linux.sqlite");
    std::fs::copy(&path, &other).unwrap();
    let run_ref = format!("{}:1", path.display());
    let out = support::scalelab()
        .args(["export", &run_ref, "--format", "csv"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", support::stderr(&out));
    let csv = support::stdout(&out);
    assert_eq!(csv.lines().count(), 9, "{csv}");
    assert!(csv.contains("43775.89"), "{csv}");
    let mut written = Vec::new();
    for store in ["old.sqlite:1", "linux.sqlite:1"] {
        let out = support::scalelab()
            .args(["report", store])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", support::stderr(&out));
        written.push(support::stdout(&out).trim().to_string());
    }
    assert_eq!(
        written,
        ["scalelab-report-old-1.html", "scalelab-report-linux-1.html"]
    );
    for file in &written {
        assert!(dir.path().join(file).is_file(), "{file}");
    }
}

#[test]
fn kind_facts_stored_before_they_were_typed_read_back_the_same() {
    use scalelab::load::dns::facts::Datagrams;
    use scalelab::load::forward::ForwardReport;
    use scalelab::store::TrialContext;
    for (name, text) in [
        ("dns", include_str!("../fixtures/contexts/dns-ramp-v2.json")),
        (
            "forward",
            include_str!("../fixtures/contexts/forward-router-v2.json"),
        ),
    ] {
        let context = TrialContext::from_stored(text, scalelab::catalog());
        let back = serde_json::to_value(&context).unwrap();
        let stored: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, stored, "{name}: written back as it was stored");
        assert!(!context.extras.is_none(), "{name}: the kind's facts read");
    }
    let dns = TrialContext::from_stored(
        include_str!("../fixtures/contexts/dns-ramp-v2.json"),
        scalelab::catalog(),
    );
    let d = dns.extras.get::<Datagrams>().unwrap();
    assert_eq!((d.sent, d.lost), (485_406, 244_522));
    assert_eq!(
        dns.extras.throughput(),
        Some(d.ramp.as_ref().unwrap().max_throughput)
    );
    let fwd = TrialContext::from_stored(
        include_str!("../fixtures/contexts/forward-router-v2.json"),
        scalelab::catalog(),
    );
    assert_eq!(fwd.extras.get::<ForwardReport>().unwrap().frame_size, 64);
    let router = fwd.server_settings.as_ref().unwrap();
    let link = scalelab::record::server::ServerFigure {
        name: scalelab::model::topology::LINK_GBIT,
        value: 10.0,
    };
    assert_eq!(router.chart_figures(), [link]);
    assert!(router
        .get::<scalelab::server::router::RouterFacts>()
        .is_some());
}

/// The version-2 store's JSON export, as the binary at 7f75775 gave it
/// (`tests/fixtures/stores/quickstart-v2.export.json`). A change to the
/// export's types that changes it bumps `json::SCHEMA` and rewrites the
/// file with `SCALELAB_BLESS=1 cargo test --test it store_compat`.
#[test]
fn a_version_2_store_exports_the_same_json_as_before() {
    let (_dir, path) = copy_of("stores/quickstart-v2.sqlite");
    let out = export(&path, "latest", "json");
    let golden = support::fixture("stores/quickstart-v2.export.json");
    if std::env::var_os("SCALELAB_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&golden, &out.stdout).unwrap();
    }
    let now: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let before: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&golden).unwrap()).unwrap();
    assert!(now == before, "the export of an old store changed");
}
