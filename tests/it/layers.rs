//! `scripts/module-loops.py` (run by `scripts/test.sh`) holds the library
//! to CONTRIBUTING.md's layer diagram: it passes on the real tree and fails,
//! naming the edge, on an import that points up, across peers, out of a
//! leaf, or into a module the diagram does not draw.

use std::path::Path;
use std::process::Command;

fn check(src: &Path) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/module-loops.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(src)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success(), text)
}

/// A tree of `modules` (name, source) beside a copy of CONTRIBUTING.md.
fn tree(modules: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("CONTRIBUTING.md"),
        dir.path().join("CONTRIBUTING.md"),
    )
    .unwrap();
    for (name, text) in modules {
        let module = dir.path().join("src").join(name);
        std::fs::create_dir_all(&module).unwrap();
        std::fs::write(module.join("mod.rs"), text).unwrap();
    }
    dir
}

#[test]
fn the_library_follows_the_layers() {
    let (ok, text) = check(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(ok, "{text}");
    assert!(
        text.contains("every top-level import points down"),
        "{text}"
    );
}

#[test]
fn an_import_against_the_diagram_fails_and_is_named() {
    let down = tree(&[("runner", "use crate::sys::x;"), ("sys", "")]);
    let (ok, text) = check(&down.path().join("src"));
    assert!(ok, "an import that points down is fine: {text}");
    for (modules, want) in [
        (
            [("sys", "use crate::runner::x;"), ("runner", "")],
            "sys -> runner: runner is drawn above sys",
        ),
        (
            [("server", "fn f() { crate::load::g() }"), ("load", "")],
            "server -> load: peers on one line do not import each other",
        ),
        (
            [("model", "use crate::units::Bytes;"), ("units", "")],
            "model -> units: a leaf imports no other module",
        ),
        (
            [("newthing", "use crate::sys::x;"), ("sys", "")],
            "newthing is not in the diagram",
        ),
    ] {
        let dir = tree(&modules);
        let (ok, text) = check(&dir.path().join("src"));
        assert!(!ok, "{text}");
        assert!(
            text.contains(&format!("against the layers: {want}")),
            "{text}"
        );
    }
    let leaf = tree(&[("analysis", "use crate::rng::SplitMix64;"), ("rng", "")]);
    assert!(
        check(&leaf.path().join("src")).0,
        "analysis -> rng is the named exception"
    );
}

/// The workspace crates a crate's manifest names (path or `scalelab*`).
fn workspace_deps(crate_dir: &str) -> Vec<String> {
    workspace_deps_in(
        crate_dir,
        &["dependencies", "dev-dependencies", "build-dependencies"],
    )
}

/// The workspace crates `crate_dir`'s manifest names in `sections`.
fn workspace_deps_in(crate_dir: &str, sections: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join(crate_dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let mut named = Vec::new();
    for section in sections {
        let deps = manifest.get(*section).and_then(|d| d.as_table());
        for (name, spec) in deps.into_iter().flatten() {
            if spec.get("path").is_some() || name.starts_with("scalelab") {
                named.push(name.clone());
            }
        }
    }
    named
}

#[test]
fn the_core_crate_depends_on_no_other_crate_of_the_workspace() {
    assert_eq!(workspace_deps("crates/core"), Vec::<String>::new());
    assert_eq!(workspace_deps("crates/wire"), ["scalelab-core"]);
}

/// The lab (server, load, probe, profile) stands on core, wire and record:
/// the recipe, store, report, remote and runner above it are the top
/// crate's, and the compiler refuses an import of them.
#[test]
fn the_lab_crate_stands_on_core_wire_and_record_alone() {
    assert_eq!(
        workspace_deps_in("crates/lab", &["dependencies", "build-dependencies"]),
        ["scalelab-core", "scalelab-wire", "scalelab-record"]
    );
    // Its tests turn on the wire's test protocols, and nothing more.
    assert_eq!(
        workspace_deps_in("crates/lab", &["dev-dependencies"]),
        ["scalelab-wire"]
    );
    // The record, which the store and the report read, stands on core.
    assert_eq!(workspace_deps("crates/record"), ["scalelab-core"]);
    // The top crate depends on all three, and on the lab's test support
    // for its tests only.
    let mut top = workspace_deps(".");
    top.sort();
    assert_eq!(
        top,
        [
            "scalelab-core",
            "scalelab-lab",
            "scalelab-lab",
            "scalelab-record",
            "scalelab-report",
            "scalelab-results",
            "scalelab-wire"
        ]
    );
}

/// The store and the judging layer (`crates/results`) stand on core and
/// the record alone: they never name the lab that runs a trial, so the
/// crate that holds them does not depend on the one that holds `load`,
/// `server` and `probe` (`cargo tree -e normal`). Their tests build
/// fixtures with the lab's kinds, a dev-dependency only.
#[test]
fn the_results_crate_does_not_depend_on_the_lab() {
    assert_eq!(
        workspace_deps_in("crates/results", &["dependencies", "build-dependencies"]),
        ["scalelab-core", "scalelab-record"]
    );
    assert_eq!(
        workspace_deps_in("crates/results", &["dev-dependencies"]),
        ["scalelab-lab"]
    );
}

/// The renderers (`crates/report`) stand on the judging layer's crate and
/// never the other way: the results crate names no renderer, so judging
/// cannot import one (hyperfine's exporters only format what its
/// `benchmark/` computed). Neither does the report crate depend on the
/// lab: its tests reach the lab's kinds through a dev-dependency only.
#[test]
fn the_judging_layer_does_not_depend_on_the_renderers() {
    assert_eq!(
        workspace_deps_in("crates/report", &["dependencies", "build-dependencies"]),
        ["scalelab-core", "scalelab-record", "scalelab-results"]
    );
    assert_eq!(
        workspace_deps_in("crates/report", &["dev-dependencies"]),
        ["scalelab-results", "scalelab-lab", "scalelab-wire"]
    );
    let results = workspace_deps_in(
        "crates/results",
        &["dependencies", "build-dependencies", "dev-dependencies"],
    );
    assert!(
        !results.iter().any(|d| d == "scalelab-report"),
        "{results:?}"
    );
}
