//! The documentation agrees with the code: the kind lists in
//! `docs/recipes.md` are the registries' kinds, every relative link in
//! the README and `docs/` names a file that exists, and every module path
//! CONTRIBUTING's add-a-kind steps name is defined where it says.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The backticked words on the line of `doc` that starts with `prefix`.
fn listed(doc: &str, prefix: &str) -> Vec<String> {
    let line = doc
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("docs/recipes.md has no line starting with {prefix:?}"));
    let (_, list) = line.split_once(':').expect("a colon before the list");
    let mut kinds: Vec<String> = list
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    kinds.sort();
    kinds
}

/// The registry's user kinds' names, sorted.
fn sorted(names: Vec<&str>) -> Vec<String> {
    let users = names.into_iter().filter(|n| crate::support::users_kind(n));
    let mut v: Vec<String> = users.map(str::to_string).collect();
    v.sort();
    v
}

#[test]
fn the_kind_lists_are_the_registries() {
    let doc = std::fs::read_to_string(repo().join("docs/recipes.md")).unwrap();
    assert_eq!(
        listed(&doc, "Server kinds"),
        sorted(scalelab::server::kind_names()),
        "docs/recipes.md's server kinds against server::KINDS"
    );
    assert_eq!(
        listed(&doc, "Load kinds"),
        sorted(scalelab::load::kind_names()),
        "docs/recipes.md's load kinds against load::KINDS"
    );
}

/// The targets of `[text](target)` links in `md` that are paths in this
/// repository (not URLs, not anchors), without any `#anchor`.
fn relative_links(md: &str) -> Vec<String> {
    md.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(t, _)| t))
        .map(|t| t.split('#').next().unwrap_or("").to_string())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut files = vec![repo().join("README.md"), repo().join("CONTRIBUTING.md")];
    markdown_files(&repo().join("docs"), &mut files);
    assert!(files.len() > 10, "the docs were found: {files:?}");
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for link in relative_links(&text) {
            checked += 1;
            let target = file.parent().unwrap().join(&link);
            if !target.exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(checked > 10, "links were found ({checked})");
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

#[test]
fn relative_links_are_told_from_urls_and_anchors() {
    let md = "[a](docs/x.md) [b](https://example.org/y) [c](#top) [d](guides/z.md#run)";
    assert_eq!(relative_links(md), ["docs/x.md", "guides/z.md"]);
}

/// `run`'s estimate of a recipe (`--quick` or not): `6m32s`, or `21m10s to
/// 35m05s`.
fn estimate(recipe: &str, quick: bool) -> String {
    let path = repo().join("recipes").join(recipe);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{recipe}: {e}"));
    let exp = scalelab::recipe::Experiment::parse(&path, &text, quick).unwrap();
    scalelab::runner::estimate::Estimate::of(&exp).span()
}

/// Issue 41: the times the docs give are `run`'s estimate: the guides'
/// table (full run and `--quick`) and every guide's `scalelab run
/// recipes/X.toml [--quick]   # TIME` line.
#[test]
fn the_docs_times_are_runs_estimates() {
    let guides = repo().join("docs/guides");
    let table = std::fs::read_to_string(guides.join("README.md")).unwrap();
    let mut rows = 0;
    for line in table.lines().filter(|l| l.contains(".toml` |")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let recipe = cells[3].trim_matches('`');
        assert_eq!(cells[4], estimate(recipe, false), "full run of {recipe}");
        assert_eq!(cells[5], estimate(recipe, true), "--quick of {recipe}");
        rows += 1;
    }
    assert_eq!(rows, 7, "the seven experiments");
    let mut commands = 0;
    for entry in std::fs::read_dir(&guides).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("scalelab run recipes/") else {
                continue;
            };
            let Some((command, comment)) = rest.split_once("# ") else {
                continue;
            };
            let recipe = command.split_whitespace().next().unwrap();
            let want = estimate(recipe, command.contains("--quick"));
            assert!(
                comment.starts_with(&format!("estimated {want}")),
                "{}: `{line}` should say `# estimated {want}`",
                path.display()
            );
            commands += 1;
        }
    }
    assert!(commands >= 14, "two per seed guide: {commands}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let quickstart = format!(
        "(estimated {}, as `scalelab run",
        estimate("quickstart.toml", false)
    );
    assert!(readme.contains(&quickstart), "README: {quickstart}");
}

/// The file(s) of module `path` (`["load", "kind"]`) under `src/`, under
/// `crates/core/src/` for the modules the top crate re-exports, or under
/// `crates/NAME/src/` for a crate mounted as module NAME (`wire`).
fn module_files(path: &[&str]) -> Vec<PathBuf> {
    let under = |root: PathBuf, path: &[&str]| path.iter().fold(root, |d, p| d.join(p));
    let mut dirs = vec![
        under(repo().join("src"), path),
        under(repo().join("crates/core/src"), path),
        under(repo().join("crates/lab/src"), path),
    ];
    let mut files = Vec::new();
    if let Some((name, rest)) = path.split_first() {
        let root = repo().join("crates").join(name).join("src");
        match rest {
            [] => files.push(root.join("lib.rs")),
            _ => dirs.push(under(root, rest)),
        }
    }
    let modules = dirs
        .into_iter()
        .flat_map(|dir| [dir.with_extension("rs"), dir.join("mod.rs")]);
    files
        .into_iter()
        .chain(modules)
        .filter(|f| f.is_file())
        .collect()
}

/// Whether one of `files` defines or re-exports `name`.
fn defines(files: &[PathBuf], name: &str) -> bool {
    let kinds = [
        "fn", "struct", "enum", "trait", "type", "const", "static", "mod",
    ];
    files.iter().any(|f| {
        let text = std::fs::read_to_string(f).unwrap();
        let defined = kinds.iter().any(|k| {
            [
                format!("{k} {name}("),
                format!("{k} {name}<"),
                format!("{k} {name} "),
                format!("{k} {name};"),
                format!("{k} {name}:"),
            ]
            .iter()
            .any(|d| text.contains(d.as_str()))
        });
        let reexported = text
            .lines()
            .any(|l| l.trim_start().starts_with("pub use") && l.contains(name));
        defined || reexported
    })
}

/// Every `a::b::c` path in backticks in the section of CONTRIBUTING.md
/// headed `heading`, as segments, with `super::` read as `base`.
fn section_paths(heading: &str, base: &str) -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(repo().join("CONTRIBUTING.md")).unwrap();
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| {
            let path = quoted.split(['(', '<', ' ', ',']).next()?;
            let path = path.strip_prefix("crate::").unwrap_or(path);
            let path = path.replace("super::", &format!("{base}::"));
            let segs: Vec<String> = path.split("::").map(str::to_string).collect();
            let plain = segs
                .iter()
                .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'));
            (segs.len() > 1 && plain).then_some(segs)
        })
        .collect()
}

#[test]
fn the_add_a_kind_steps_name_real_items() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for (heading, base) in [
        ("## Add a load kind", "load"),
        ("## Add a server kind", "server"),
    ] {
        for segs in section_paths(heading, base) {
            // The longest leading run of segments that is a module; the
            // next segment must be defined in it (items of a type, as in
            // `Server::start`, are the compiler's to check).
            let modules: Vec<&str> = segs.iter().map(String::as_str).collect();
            let Some(k) = (1..segs.len())
                .rev()
                .find(|k| !module_files(&modules[..*k]).is_empty())
            else {
                continue;
            };
            if modules[k]
                .chars()
                .next()
                .is_some_and(|c| c.is_lowercase() && modules[k] != "<kind>")
            {
                checked += 1;
                if !defines(&module_files(&modules[..k]), modules[k]) {
                    missing.push(segs.join("::"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "CONTRIBUTING names items that do not exist: {missing:?}"
    );
    assert!(checked >= 10, "only {checked} paths checked");
}
