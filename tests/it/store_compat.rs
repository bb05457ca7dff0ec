//! Stores written by older scalelab versions still open and report the same
//! numbers. `tests/fixtures/stores/quickstart-v1.sqlite` was written by the
//! binary at commit 653abb5 (schema version 1) with
//! `scalelab run recipes/quickstart.toml --quick`.

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
    let data = Store::open(&path).unwrap().load_run("1").unwrap();
    assert_eq!(data.systems(), vec!["1 worker", "2 workers"]);
    // Version 2 filled the run's load kind and noise from its experiment.
    assert_eq!(
        (data.run.load_kind.as_str(), data.run.noise),
        ("http", 0.02)
    );
    // Version 5 filled its server kind; the connections axis gets its fit.
    assert_eq!(data.run.server_kind, "nginx");
    let agg = scalelab::report::analyse::aggregate(&data);
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
    assert!(text.contains("+33.3%"), "{text}");
}

#[test]
fn the_binary_exports_a_version_1_store() {
    let (_dir, path) = copy_of("stores/quickstart-v1.sqlite");
    let out = support::run(&[
        "export",
        "1",
        "--format",
        "csv",
        "--store",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let csv = support::stdout(&out);
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
    let data = Store::open(&path).unwrap().load_run("1").unwrap();
    assert_eq!(data.run.noise, 0.3);
    let text = scalelab::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("30% noise floor"), "{text}");

    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = Store::open(&path).err().unwrap().to_string();
    assert!(err.contains("schema version 99, newer than"), "{err}");
}
