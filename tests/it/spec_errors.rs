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

/// [`check`], and the message also says each of `words`.
fn check_says(name: &str, words: &[&str]) {
    let err = check(name);
    for w in words {
        assert!(err.contains(w), "{name}: expected `{w}` in: {err}");
    }
}

fn check(name: &str) -> String {
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
    err
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

/// Recipes once declared the dataset in `[server]`; now the workload does.
#[test]
fn dataset_in_server_says_where_it_went() {
    check_says(
        "dataset_in_server.toml",
        &["move `scale` to [load]: the workload declares its dataset"],
    );
    check_says(
        "dataset_axis_in_server.toml",
        &["sweep \"load.tables\" instead"],
    );
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
fn type_error_names_the_field_and_a_whole_number() {
    check_says(
        "type_min_three.toml",
        &["a whole number such as 3", "got \"three\""],
    );
}

#[test]
fn type_error_in_a_server_setting_is_on_its_own_line() {
    check_says(
        "type_workers_two.toml",
        &["a number of workers or \"auto\"", "got \"two\""],
    );
}

#[test]
fn type_error_in_an_array_of_tables() {
    check_says("type_system_label.toml", &["text in quotes", "got 2"]);
}

#[test]
fn type_error_in_a_nested_setting() {
    check_says(
        "type_pg_setting.toml",
        &["`settings.work_mem`", "a PostgreSQL setting", "got a list"],
    );
}

#[test]
fn port_out_of_range() {
    check_says("port_out_of_range.toml", &["from 0 to 65535", "got 70000"]);
}

#[test]
fn huge_timeout_is_refused_not_a_panic() {
    check_says("huge_timeout.toml", &["too long", "720h"]);
}

#[test]
fn huge_cooldown_is_refused_before_the_run() {
    check_says("huge_cooldown.toml", &["too long", "720h"]);
}

/// Every fixture's error is free of Rust type names (i64, enum, ...).
#[test]
fn no_error_speaks_rust() {
    let dir = fixture("specs");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let err = scalelab::recipe::Experiment::load(&path, false)
            .expect_err("every spec fixture is broken")
            .to_string();
        let words = scalelab::kinds::plain::rust_words_in(&err);
        assert!(words.is_empty(), "{}: {words:?} in: {err}", path.display());
    }
}

#[test]
fn huge_cli_numbers_are_usage_errors_not_panics() {
    for args in [
        &[
            "load",
            "http",
            "http://127.0.0.1:9/",
            "-d",
            "99999999999999999999s",
        ][..],
        &[
            "load",
            "http",
            "http://127.0.0.1:9/",
            "--timeout",
            "18446744073709551615s",
        ],
        &["load", "pg", "host=127.0.0.1 port=9", "-d", "1e400"],
        &["load", "http", "http://127.0.0.1:9/", "-c", "99999999999"],
    ] {
        let out = run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains("error:"), "{args:?}: {err}");
    }
}

#[test]
fn missing_file_is_named() {
    let out = run(&["run", "/nonexistent/exp.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/exp.toml"));
}

#[test]
fn zero_timeout_is_refused_before_the_run() {
    check_says("zero_timeout.toml", &["greater than zero"]);
}

#[test]
fn pg_scale_and_mysql_tables_are_capped_as_the_load_flags_are() {
    check_says("pg_huge_scale.toml", &["`scale` must be 1 to 100000"]);
    check_says(
        "mysql_too_many_tables.toml",
        &["`tables` must be 1 to 10000"],
    );
}

/// `[probe] energy`: an unknown source lists the known ones; "command"
/// needs its command; a command with another source is named as unused.
#[test]
fn energy_settings_name_the_probe_field_and_the_fix() {
    check_says(
        "bad_energy.toml",
        &[
            "unknown energy source `ipmi`",
            "\"auto\", \"rapl\", \"hwmon\", \"command\", \"off\"",
        ],
    );
    check_says("energy_command_missing.toml", &["needs energy_command"]);
    check_says(
        "energy_command_unused.toml",
        &["only run with energy = \"command\""],
    );
}

#[test]
fn steady_window_keys() {
    check_says("bad_bucket.toml", &["whole number of 100ms", "150ms"]);
    check_says("bad_unsteady.toml", &["unknown choice `drop`", "exclude"]);
    check_says(
        "warmup_max_without_auto.toml",
        &["only an automatic warm-up", "warmup = \"auto\""],
    );
}
