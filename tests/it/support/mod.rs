//! Shared test helpers.

pub mod json_schema;
pub mod run;
pub mod stored;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Whether a registry kind is a user's: not one of the lab's test kinds
/// (`fake`, `fake-rule`), which its `test-support` feature registers in
/// the suite's build (the top crate's dev-dependency turns it on) and a
/// user's build never has.
pub fn users_kind(name: &str) -> bool {
    !name.starts_with("fake")
}

/// The built `scalelab` binary.
pub fn scalelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scalelab"))
}

/// Runs `scalelab` with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    scalelab()
        .args(args)
        .output()
        .expect("the scalelab binary runs")
}

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[allow(dead_code)] // used by some test modules only
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `docs/export-schema.json`, the JSON export's documented schema.
#[allow(dead_code)] // used by some test modules only
pub fn export_schema() -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/export-schema.json");
    let text = std::fs::read_to_string(&path).expect("docs/export-schema.json");
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// The network namespaces named after scalelab process `pid`
/// (`scalelab-<purpose>-<pid>-<n>`, as `scalelab::sys::netns` names them).
#[allow(dead_code)] // used by some test modules only
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let infix = format!("-{pid}-");
    std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("scalelab-") && n.contains(&infix))
        .collect()
}

/// The latency fields every `scalelab load` kind's JSON carries (issue 27):
/// `latency_us` with these keys, and `schedule_lag_us` with the same keys in
/// rate mode, `null` in a closed loop.
#[allow(dead_code)] // used by some test modules only
pub const LATENCY_FIELDS: [&str; 8] = ["p50", "p75", "p90", "p99", "p999", "max", "mean", "stdev"];

/// Checks a `scalelab load ... --json` object's latency fields: every one
/// of [`LATENCY_FIELDS`] and no other, percentiles in order, and the
/// schedule lag present exactly in rate mode.
#[allow(dead_code)] // used by some test modules only
pub fn assert_latency_fields(v: &serde_json::Value, rate_mode: bool) {
    let check = |key: &str| {
        let o = v[key].as_object().unwrap_or_else(|| panic!("{key}: {v}"));
        let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut want = LATENCY_FIELDS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want, "{key}: {v}");
        let p: Vec<u64> = ["p50", "p75", "p90", "p99", "p999", "max"]
            .iter()
            .map(|k| o[*k].as_u64().unwrap_or_else(|| panic!("{key}.{k}: {v}")))
            .collect();
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{key} in order: {p:?}");
        assert!(p[0] > 0, "{key}: {v}");
        assert!(o["stdev"].as_f64().is_some() && o["mean"].as_f64().unwrap() > 0.0);
    };
    check("latency_us");
    if rate_mode {
        check("schedule_lag_us");
    } else {
        assert!(v["schedule_lag_us"].is_null(), "closed loop: {v}");
    }
}

/// A loopback TCP port free at the time of asking (the kernel's pick).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
