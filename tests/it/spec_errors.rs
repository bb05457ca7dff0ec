//! Bad experiment files: a clear error naming file, line, field and fix,
//! a non-zero exit, and never a panic. Each fixture marks its bad line with
//! `# ERROR <field>`; the expected line and field are read from there.

use crate::support::{fixture, run, stderr};

fn expected(file: &std::path::Path) -> (usize, String) {
    let text = std::fs::read_to_string(file).unwrap();
    let (i, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("# ERROR"))
        .expect("fixture marks its error");
    let field = line.split("# ERROR").nth(1).unwrap().trim().to_string();
    (i + 1, field)
}

fn check(name: &str) {
    let file = fixture(&format!("specs/{name}"));
    let (line, field) = expected(&file);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let out = run(&[
        "--store",
        store.to_str().unwrap(),
        "run",
        file.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name} panicked: {err}");
    assert!(
        err.contains(&format!("{name}:{line}")),
        "{name}: expected line {line} in: {err}"
    );
    if !field.is_empty() {
        assert!(
            err.contains(&format!("`{field}`")),
            "{name}: expected field {field} in: {err}"
        );
        assert!(err.contains("fix:"), "{name}: no fix in: {err}");
    }
    assert!(!store.exists(), "{name}: a bad file must not create a run");
}

#[test]
fn unknown_axis() {
    check("unknown_axis.toml");
}

#[test]
fn bad_duration() {
    check("bad_duration.toml");
}

#[test]
fn missing_kind() {
    check("missing_kind.toml");
}

#[test]
fn unknown_server_setting() {
    check("unknown_server_setting.toml");
}

#[test]
fn duplicate_label() {
    check("duplicate_label.toml");
}

#[test]
fn zero_connections() {
    check("zero_connections.toml");
}

#[test]
fn max_below_min() {
    check("max_below_min.toml");
}

#[test]
fn syntax_error() {
    check("syntax_error.toml");
}

#[test]
fn too_many_cpus() {
    check("too_many_cpus.toml");
}

#[test]
fn missing_file_is_named() {
    let out = run(&["run", "/nonexistent/exp.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/exp.toml"));
}
