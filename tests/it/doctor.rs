//! `scalelab doctor`: the package list `scripts/setup.sh` installs comes
//! from the kinds' registries.

use crate::support::{run, stderr, stdout};

#[test]
fn doctor_lists_every_kinds_packages_for_setup() {
    let out = run(&["doctor", "--packages"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let packages: Vec<&str> = text.lines().collect();
    // nginx and postgres (with runuser) from the server kinds, the peer
    // tools from the benchmarks; one per line, sorted, no duplicates.
    for p in [
        "nginx",
        "postgresql",
        "util-linux",
        "wrk",
        "postgresql-contrib",
    ] {
        assert!(packages.contains(&p), "{p} missing from {packages:?}");
    }
    let mut sorted = packages.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, packages);
}

#[test]
fn doctor_names_what_each_recipe_needs() {
    let recipes = crate::support::fixture("../../recipes");
    let out = run(&["doctor", "--recipes", recipes.to_str().unwrap()]);
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("quickstart.toml"))
        .unwrap_or_else(|| panic!("{text}{}", stderr(&out)));
    assert!(line.contains("nginx ["), "{line}");
}
