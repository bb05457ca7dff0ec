//! Shared test helpers.

pub mod json_schema;
pub mod run;

use std::path::PathBuf;
use std::process::{Command, Output};

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
