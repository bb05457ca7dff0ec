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

/// From any directory: the requirements come from the server kinds, the
/// recipes are found from the binary's place, and the columns line up.
#[test]
fn doctor_works_from_the_root_directory() {
    let out = crate::support::scalelab()
        .arg("doctor")
        .current_dir("/")
        .output()
        .unwrap();
    let text = stdout(&out);
    // Exit 1 only means something is missing; never an error.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{text}{}",
        stderr(&out)
    );
    for kind in scalelab::server::KINDS {
        assert!(
            text.contains(&format!("server kind `{}`", kind.name)),
            "{} missing:\n{text}",
            kind.name
        );
    }
    assert!(text.contains("quickstart.toml"), "{text}");
    // Every requirement column starts at the same place.
    let starts: Vec<usize> = text
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            l.find("  ").unwrap() + l[l.find("  ").unwrap()..].find(|c: char| c != ' ').unwrap()
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{text}");
}
