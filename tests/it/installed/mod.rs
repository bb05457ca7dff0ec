//! Every program the test suite and the scripts start is installed by
//! `scripts/setup.sh` or by a registry entry (issue 46: on a new machine 9
//! unit tests failed, because nothing installed `shellcheck` and `posh`).
//!
//! The programs: each `Command::new` (or [`STARTERS`]) of a string literal
//! in src/, crates/ and tests/, the shells the tests loop over ([`TEST_SHELLS`]), and the command
//! words of scripts/*.sh, bench/*.sh and .ci/run ([`shell_words`]). A
//! program started through a variable (a server kind's binary) is a path of
//! its kind's registry entry, and those paths are checked to be their
//! packages' files.
//!
//! Installed means: a path of a registry [`Requirement`] names it (the
//! `requires:` of server::KINDS and load::KINDS, BENCH_TOOLS, TEST_TOOLS,
//! PROFILER: the packages `scalelab doctor --packages` prints and
//! setup.sh installs), or its file in a system directory belongs (`dpkg
//! -S`) to a package that setup.sh's own lists, the registry's packages or
//! a fresh Debian (its `Essential: yes` and `Priority: required` packages)
//! pull in. A program found only in /usr/local or on a user's PATH is not
//! installed.

mod debian;
mod shell_words;

use scalelab::kinds::{Requirement, BENCH_TOOLS, PROFILER, TEST_SHELLS, TEST_TOOLS};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Programs the project provides itself, not Debian.
const NOT_DEBIAN: &[&str] = &[
    // Built by cargo from this repository.
    "scalelab", // The Rust toolchain: setup.sh checks for it and names the fix.
    "cargo",
];

/// Where each program is started: `file:line`, in the order found.
type Uses = BTreeMap<String, Vec<String>>;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn relative(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The calls that start the program named by their first argument:
/// `Command::new` and the fingerprint's and the DNS kinds' helpers.
const STARTERS: &[&str] = &["Command::new(\"", "run_quietly(\"", "version_line(\""];

/// Each starter called with a string literal in src/, crates/ and tests/ (less the
/// tests' programs under /nonexistent, missing on purpose).
fn rust_uses(uses: &mut Uses) {
    for file in ["src", "crates", "tests"]
        .iter()
        .flat_map(|d| rust_files(&repo().join(d)))
    {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            for (at, needle) in STARTERS.iter().flat_map(|n| line.match_indices(n)) {
                let rest = &line[at + needle.len()..];
                let program = rest.split('"').next().unwrap_or(rest);
                if program.starts_with("/nonexistent/") {
                    continue;
                }
                let place = format!("{}:{}", relative(&file), i + 1);
                uses.entry(program.to_string()).or_default().push(place);
            }
        }
    }
}

/// The shells of [`TEST_SHELLS`], at the line that lists them.
fn shell_uses(uses: &mut Uses) {
    let file = repo().join("crates/core/src/kinds/requirements.rs");
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("const TEST_SHELLS"))
        .expect("TEST_SHELLS is defined in crates/core/src/kinds/requirements.rs");
    for shell in TEST_SHELLS {
        let place = format!("{}:{} (TEST_SHELLS)", relative(&file), line + 1);
        uses.entry(shell.to_string()).or_default().push(place);
    }
}

/// scripts/*.sh, bench/*.sh and .ci/run.
fn scripts() -> Vec<PathBuf> {
    let mut out = vec![repo().join(".ci/run")];
    for dir in ["scripts", "bench"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "sh") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The command words of the scripts, less the functions any of them
/// defines (bench scripts source each other's), the repository's own
/// scripts (a relative path) and [`NOT_DEBIAN`].
fn script_uses(uses: &mut Uses) {
    let read: Vec<(PathBuf, shell_words::Script)> = scripts()
        .into_iter()
        .map(|f| {
            let s = shell_words::read(&std::fs::read_to_string(&f).unwrap());
            (f, s)
        })
        .collect();
    let functions: BTreeSet<&str> = read
        .iter()
        .flat_map(|(_, s)| s.functions.iter().map(String::as_str))
        .collect();
    for (file, script) in &read {
        for s in &script.started {
            let p = s.program.as_str();
            let own = p.contains('/') && !p.starts_with('/');
            if own || functions.contains(p) || NOT_DEBIAN.contains(&p) {
                continue;
            }
            let place = format!("{}:{}", relative(file), s.line);
            uses.entry(s.program.clone()).or_default().push(place);
        }
    }
}

/// Every registry entry: the kinds' `requires:`, the benchmarks' and the
/// tests' tools, the profiler.
fn registry() -> Vec<Requirement> {
    let users = |name| crate::support::users_kind(name);
    let servers = (scalelab::server::KINDS.iter())
        .filter(|k| users(k.name))
        .flat_map(|k| k.requires);
    let loads = (scalelab::load::KINDS.iter())
        .filter(|k| users(k.name))
        .flat_map(|k| k.requires);
    servers
        .chain(loads)
        .chain(BENCH_TOOLS)
        .chain(TEST_TOOLS)
        .chain([&PROFILER])
        .copied()
        .collect()
}

/// The packages scripts/setup.sh installs from its own lists: each array
/// it passes to `install_missing` (the registry's come from `doctor
/// --packages`, read here from the registry itself).
fn setup_packages() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("scripts/setup.sh")).unwrap();
    let arrays: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("install_missing \"${"))
        .filter_map(|l| l.split_once('['))
        .map(|(name, _)| name)
        .collect();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once("=(") else {
            continue;
        };
        if arrays.contains(&name.trim()) {
            let words = rest.split(')').next().unwrap_or(rest);
            out.extend(words.split_whitespace().map(str::to_string));
        }
    }
    assert!(
        out.iter().any(|p| p == "iproute2"),
        "scripts/setup.sh's `base` list was not read: {out:?}"
    );
    out
}

/// `path` matches `pattern`, whose `*` components match any one component.
fn glob_match(pattern: &str, path: &str) -> bool {
    let (p, q): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    p.len() == q.len() && p.iter().zip(&q).all(|(a, b)| *a == "*" || a == b)
}

/// The registry entry one of whose paths is `program` (by file name, or
/// the whole path for an absolute one).
fn registry_entry<'a>(registry: &'a [Requirement], program: &str) -> Option<&'a Requirement> {
    registry.iter().find(|r| {
        r.paths.iter().any(|p| match program.starts_with('/') {
            true => glob_match(p, program),
            false => p.rsplit('/').next() == Some(program),
        })
    })
}

const FIX: &str = "scripts/setup.sh's `base` list, or the registry entry of what runs it \
                   (crates/core/src/kinds/requirements.rs BENCH_TOOLS or TEST_TOOLS, or the kind's \
                   `requires:`), so that scripts/setup.sh installs it";

/// Why `program` is installed by nothing, or `None` when something
/// installs it.
fn uninstalled(
    program: &str,
    owners: &BTreeMap<String, String>,
    installed: &debian::Installed,
    covered: &BTreeSet<String>,
) -> Option<String> {
    let files = debian::files_of(program);
    if files.is_empty() {
        return Some(format!(
            "it is on no system path here ({}) and no registry path names it; fix: add a \
             Requirement with its Debian package and path to {FIX}",
            debian::SYSTEM_DIRS.join(", ")
        ));
    }
    let owner = files
        .iter()
        .flat_map(|f| debian::dpkg_names(f))
        .find_map(|n| owners.get(&n));
    let Some(package) = owner else {
        return Some(format!(
            "{} belongs to no Debian package (installed by hand?); fix: add the package that \
             provides it to {FIX}",
            files[0].display()
        ));
    };
    (!covered.contains(package)).then(|| {
        format!(
            "it is Debian's package {package} (Priority: {}, not Essential), which neither a \
             fresh Debian nor scripts/setup.sh nor any registry entry installs; fix: add \
             package {package} to {FIX}",
            installed.priority(package)
        )
    })
}

/// One line per program: where it is started, why nothing installs it.
fn problem(program: &str, places: &[String], why: &str) -> String {
    let more = match places.len() {
        1 => String::new(),
        n => format!(" (and {} more: {})", n - 1, places[1..].join(", ")),
    };
    format!("`{program}`, started at {}{more}: {why}", places[0])
}

#[test]
fn every_program_the_tests_and_scripts_start_is_installed_by_setup_or_a_registry() {
    let mut uses = Uses::new();
    rust_uses(&mut uses);
    shell_uses(&mut uses);
    script_uses(&mut uses);
    // The sources were read: the programs issue 46 found missing are among them.
    for p in ["shellcheck", "posh", "ip", "ssh-keygen"] {
        assert!(
            uses.contains_key(p),
            "{p} not found among {:?}",
            uses.keys()
        );
    }
    let registry = registry();
    let installed = debian::Installed::read();
    let setup = setup_packages();
    let listed = setup
        .iter()
        .map(String::as_str)
        .chain(registry.iter().map(|r| r.package));
    let covered = installed.closure(listed);
    let unregistered: Vec<(&String, &Vec<String>)> = uses
        .iter()
        .filter(|(p, _)| registry_entry(&registry, p).is_none())
        .collect();
    let names: BTreeSet<String> = unregistered
        .iter()
        .flat_map(|(p, _)| debian::files_of(p))
        .flat_map(|f| debian::dpkg_names(&f))
        .collect();
    let owners = debian::owners(&names);
    let problems: Vec<String> = unregistered
        .iter()
        .filter_map(|(p, places)| {
            let why = uninstalled(p, &owners, &installed, &covered)?;
            Some(problem(p, places, &why))
        })
        .collect();
    eprintln!(
        "{} programs checked: {}",
        uses.len(),
        uses.keys().cloned().collect::<Vec<_>>().join(" ")
    );
    assert!(
        problems.is_empty(),
        "{} program(s) that the tests or scripts start are installed by nothing:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The files a registry path names here (its `*` components expanded).
fn expand(pattern: &str) -> Vec<PathBuf> {
    let Some((head, tail)) = pattern.split_once("/*/") else {
        return [PathBuf::from(pattern)]
            .into_iter()
            .filter(|p| p.exists())
            .collect();
    };
    let Ok(entries) = std::fs::read_dir(if head.is_empty() { "/" } else { head }) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| expand(&format!("{}/{tail}", e.path().display())))
        .collect()
}

/// A registry entry's paths are its package's files (or those of a package
/// it pulls in: postgresql's binaries are postgresql-15's), where installed.
#[test]
fn each_registry_path_found_here_is_its_packages_file() {
    let installed = debian::Installed::read();
    let registry = registry();
    let found: Vec<(&Requirement, PathBuf)> = registry
        .iter()
        .flat_map(|r| r.paths.iter().flat_map(|p| expand(p)).map(move |f| (r, f)))
        .collect();
    assert!(
        found.iter().any(|(r, _)| r.package == "posh"),
        "setup.sh has run: {found:?}"
    );
    let names: BTreeSet<String> = found
        .iter()
        .flat_map(|(_, f)| debian::dpkg_names(f))
        .collect();
    let owners = debian::owners(&names);
    let mut problems = Vec::new();
    for (r, file) in &found {
        let owner = debian::dpkg_names(file)
            .into_iter()
            .find_map(|n| owners.get(&n).cloned());
        let pulled_in = installed.closure_of(r.package);
        match owner {
            Some(o) if pulled_in.contains(&o) => {}
            Some(o) => problems.push(format!(
                "{} ({}): {} is package {o}'s, which package {} does not install",
                r.what,
                r.package,
                file.display(),
                r.package
            )),
            None => problems.push(format!(
                "{} ({}): {} belongs to no Debian package",
                r.what,
                r.package,
                file.display()
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The shells are listed once, in [`TEST_SHELLS`]: a test that loops over
/// shells of its own would start programs this guard does not see.
#[test]
fn tests_loop_over_test_shells_not_a_list_of_their_own() {
    let mut found = Vec::new();
    for file in ["src", "crates", "tests"]
        .iter()
        .flat_map(|d| rust_files(&repo().join(d)))
    {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let lists = TEST_SHELLS
                .iter()
                .any(|s| line.contains(&format!("(\"{s}\"")))
                || TEST_SHELLS
                    .iter()
                    .any(|s| line.contains(&format!("[\"{s}\"")));
            if line.contains(" in [") && lists {
                found.push(format!("{}:{}: {}", relative(&file), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "loop over scalelab::kinds::TEST_SHELLS instead:\n{}",
        found.join("\n")
    );
}
