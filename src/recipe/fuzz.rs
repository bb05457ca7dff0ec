//! Fuzzing the experiment parser with proptest, in the normal test suite
//! with a fixed budget (a few seconds): random text, random edits of a
//! valid file, and every field set to hostile values (huge, negative, NaN,
//! wrong types). The parser must never panic; every error names a line,
//! has no Rust type names, and a type or range error names its field; an
//! accepted file has durations that can be added to an `Instant`.

use super::Experiment;
use crate::kinds::plain::rust_words_in;
use proptest::prelude::*;
use std::path::Path;
use std::time::Instant;

const BASE: &str = r#"name = "fuzz"
description = "every section"

[server]
kind = "nginx"
worker_processes = 1
files = { "64k.bin" = "64K" }

[load]
kind = "http"
path = "/"
connections = 4
timeout = "2s"

[sweep]
connections = [1, 2]
server_cpus = [1]

[trials]
duration = "1s"
warmup = "0s"
cooldown = "0s"
min = 2
max = 3
target_ci = 0.05
noise = 0.02
budget = "1m"
sample_interval = "1s"

[[system]]
label = "a"

[[system]]
label = "b"
server = { worker_processes = 2 }

[quick]
trials = { min = 1 }
"#;

/// Every (table, key) a hostile value is written to.
const FIELDS: &[(&str, &str)] = &[
    ("", "name"),
    ("", "description"),
    ("trials", "duration"),
    ("trials", "warmup"),
    ("trials", "cooldown"),
    ("trials", "min"),
    ("trials", "max"),
    ("trials", "target_ci"),
    ("trials", "noise"),
    ("trials", "budget"),
    ("trials", "sample_interval"),
    ("trials", "restart"),
    ("trials", "headline"),
    ("trials", "order"),
    ("load", "connections"),
    ("load", "threads"),
    ("load", "rate"),
    ("load", "timeout"),
    ("load", "connreqs"),
    ("load", "path"),
    ("server", "worker_processes"),
    ("server", "worker_connections"),
    ("server", "port"),
    ("server", "backlog"),
    ("server", "files"),
    ("server", "server_memory"),
    ("sweep", "connections"),
    ("sweep", "server_cpus"),
    ("sweep", "server_memory"),
    ("sweep", "rate"),
];

fn hostile_value() -> impl Strategy<Value = toml_edit::Value> {
    let durations = "[0-9]{1,25}(\\.[0-9]{0,3})?(ms|s|m|h|x|)".prop_map(toml_edit::Value::from);
    prop_oneof![
        any::<i64>().prop_map(toml_edit::Value::from),
        prop_oneof![
            Just(i64::MAX),
            Just(i64::MIN),
            Just(0),
            Just(-1),
            Just(u32::MAX as i64 + 1)
        ]
        .prop_map(toml_edit::Value::from),
        any::<f64>().prop_map(toml_edit::Value::from),
        prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(1e300), Just(-0.0)]
            .prop_map(toml_edit::Value::from),
        durations,
        "[a-z0-9 ]{0,8}".prop_map(toml_edit::Value::from),
        any::<bool>().prop_map(toml_edit::Value::from),
        proptest::collection::vec(any::<i64>(), 0..3)
            .prop_map(|v| toml_edit::Value::Array(v.into_iter().collect())),
        Just(toml_edit::Value::InlineTable(
            [("x", toml_edit::Value::from(1))].into_iter().collect()
        )),
    ]
}

/// Parses `text`; checks what every outcome must satisfy.
fn check(text: &str) -> Result<(), TestCaseError> {
    match Experiment::parse(Path::new("f.toml"), text, false) {
        Ok(exp) => {
            let t = &exp.trials;
            for d in [t.duration, t.warmup, t.cooldown, exp.load_common.timeout] {
                prop_assert!(Instant::now().checked_add(d * 2).is_some(), "{d:?}");
            }
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(rust_words_in(&msg).is_empty(), "{msg}");
            prop_assert!(e.line.is_some() || text.trim().is_empty(), "no line: {msg}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,300}") {
        let _ = Experiment::parse(Path::new("f.toml"), &text, false);
    }

    #[test]
    fn random_edits_of_a_valid_file_never_panic(
        edits in proptest::collection::vec((any::<usize>(), "\\PC{0,3}", 0usize..4), 1..6)
    ) {
        let mut text = BASE.to_string();
        for (at, insert, delete) in edits {
            let mut at = at % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + delete).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(at..end, &insert);
        }
        check(&text)?;
    }

    #[test]
    fn hostile_values_are_errors_that_name_their_field(
        field in proptest::sample::select(FIELDS),
        value in hostile_value(),
        quick in any::<bool>(),
    ) {
        let mut doc: toml_edit::DocumentMut = BASE.parse().unwrap();
        let (table, key) = field;
        let item = toml_edit::Item::Value(value);
        if table.is_empty() {
            doc[key] = item;
        } else {
            doc[table][key] = item;
        }
        let text = doc.to_string();
        check(&text)?;
        if let Err(e) = Experiment::parse(Path::new("f.toml"), &text, quick) {
            prop_assert!(!e.field.is_empty(), "no field: {e}");
        }
    }
}

#[test]
fn the_base_file_is_valid() {
    Experiment::parse(Path::new("f.toml"), BASE, false).unwrap();
    Experiment::parse(Path::new("f.toml"), BASE, true).unwrap();
}
