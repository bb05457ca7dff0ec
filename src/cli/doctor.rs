//! `scalelab doctor`: which servers and tools each recipe needs, which are
//! missing, and (`--install`) installing them with apt.

use scalelab::kinds::{Requirement, BENCH_TOOLS, PROFILER, TEST_TOOLS};
use scalelab::recipe::Experiment;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Install the missing Debian packages (needs root and apt).
    #[arg(long)]
    pub install: bool,
    /// Directory of recipes to check; by default the `recipes` directory
    /// next to the binary (or its source tree), else `./recipes`.
    #[arg(long)]
    pub recipes: Option<PathBuf>,
    /// Print the Debian packages every registered kind and benchmark needs,
    /// one per line, and nothing else (`scripts/setup.sh` reads this).
    #[arg(long, conflicts_with = "install")]
    pub packages: bool,
    /// Read this machine's knobs that bias a measurement (governor, turbo,
    /// C-states, IRQs, irqbalance, ASLR, THP, NUMA balancing, swap, steal,
    /// load, busy processes), as every run does at its start, with a
    /// warning and its fix for each that can bias a comparison.
    #[arg(long, conflicts_with_all = ["install", "packages"])]
    pub machine: bool,
    /// With --machine: put back what a killed `run --tune` left changed
    /// (its state under the base directory, `$SCALELAB_WORKDIR`).
    #[arg(long, requires = "machine")]
    pub reset: bool,
}

pub fn run(a: &DoctorArgs) -> anyhow::Result<i32> {
    if a.machine {
        return super::doctor_machine::run(a.reset);
    }
    if a.packages {
        for p in all_packages() {
            outln!("{p}");
        }
        return Ok(0);
    }
    // What each kind needs comes from the registries, wherever we run.
    let mut rows: Vec<(String, Vec<Requirement>)> = scalelab::server::KINDS
        .iter()
        .map(|k| (format!("server kind `{}`", k.name), k.requires.to_vec()))
        .chain(
            scalelab::load::KINDS
                .iter()
                .filter(|k| !k.requires.is_empty())
                .map(|k| (format!("load kind `{}`", k.name), k.requires.to_vec())),
        )
        .collect();
    match recipes_dir(a.recipes.as_deref()) {
        Some(dir) => rows.extend(recipe_requirements(&dir)?),
        None => outln!("no recipes directory found next to the binary or here; pass --recipes DIR to check recipes\n"),
    }
    rows.push(("benchmarks (bench/)".into(), BENCH_TOOLS.to_vec()));
    rows.push(("profiling (run --profile)".into(), vec![PROFILER]));
    rows.push((
        "the test suite (scripts/test.sh)".into(),
        TEST_TOOLS.to_vec(),
    ));
    // The first column is as wide as its longest entry, so long paths
    // never push the requirements out of line.
    let width = rows
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let mut needed: Vec<Requirement> = Vec::new();
    for (name, reqs) in rows {
        let marks: Vec<String> = reqs.iter().map(mark).collect();
        let marks = if marks.is_empty() {
            "nothing to install".to_string()
        } else {
            marks.join(", ")
        };
        outln!("{name:<width$}  {marks}");
        needed.extend(reqs);
    }
    let mut missing: Vec<&str> = needed
        .iter()
        .filter(|r| !r.installed())
        .map(|r| r.package)
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if missing.is_empty() {
        outln!("\neverything is installed");
        return Ok(0);
    }
    outln!("\nmissing Debian packages: {}", missing.join(" "));
    if !a.install {
        outln!("install them with: scalelab doctor --install");
        return Ok(1);
    }
    install(&missing)?;
    Ok(0)
}

fn mark(r: &Requirement) -> String {
    format!(
        "{} [{}]",
        r.what,
        if r.installed() { "ok" } else { "MISSING" }
    )
}

/// `--recipes`, else the first of `recipes` next to the binary, in the
/// source tree above `target/<profile>/`, and in the current directory.
fn recipes_dir(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = given {
        return Some(dir.to_path_buf());
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(d) = exe_dir {
        candidates.push(d.join("recipes"));
        candidates.extend(d.ancestors().nth(2).map(|root| root.join("recipes")));
    }
    candidates.push(PathBuf::from("recipes"));
    candidates.into_iter().find(|d| d.is_dir())
}

/// Each recipe file with what its server kind needs.
fn recipe_requirements(dir: &Path) -> anyhow::Result<Vec<(String, Vec<Requirement>)>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the recipes directory {}: {e}; pass --recipes DIR",
            dir.display()
        )
    })?;
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let exp = Experiment::load(&f, false)?;
        let server = scalelab::server::kind(&exp.server.kind)?.requires;
        let load = scalelab::load::kind(&exp.load.kind)?.requires;
        out.push((f.display().to_string(), [server, load].concat()));
    }
    Ok(out)
}

/// Every package any registered server or load kind, or a benchmark, needs:
/// sorted, without duplicates.
fn all_packages() -> Vec<&'static str> {
    let servers = scalelab::server::KINDS.iter().flat_map(|k| k.requires);
    let loads = scalelab::load::KINDS.iter().flat_map(|k| k.requires);
    let mut out: Vec<&str> = servers
        .chain(loads)
        .chain(BENCH_TOOLS)
        .chain(TEST_TOOLS)
        .chain([&PROFILER])
        .map(|r| r.package)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn install(packages: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("apt-get").args(["update", "-q"]).status()?;
    if !status.success() {
        anyhow::bail!("apt-get update failed; run as root with the Debian mirrors reachable");
    }
    // Installing starts no daemon where a policy-rc.d forbids it; scalelab starts servers itself.
    let status = Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()?;
    if !status.success() {
        anyhow::bail!("apt-get install {} failed", packages.join(" "));
    }
    outln!("installed: {}", packages.join(" "));
    Ok(())
}
