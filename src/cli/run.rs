//! `scalelab run`: validate, sweep, store, then print the table and write
//! the HTML report.

use anyhow::Context;
use scalelab::runner::{self, RunOptions};
use scalelab::shutdown::Shutdown;
use scalelab::spec::Experiment;
use scalelab::store::{Store, TrialStatus};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The experiment file (TOML); see docs/experiment-format.md.
    pub experiment: PathBuf,
    /// Continue an interrupted run: finished trials are kept, the rest run,
    /// and trials that failed for an environmental reason (lost host,
    /// server start, disk full) run again.
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<i64>,
    /// Apply the experiment's [quick] overrides (a short version of the sweep).
    #[arg(long)]
    pub quick: bool,
    /// Print how long the run would take (the estimate printed before the
    /// first trial: trials, server starts, first-run datasets) and exit,
    /// starting nothing.
    #[arg(long)]
    pub estimate: bool,
    /// Flame graphs of the server at each system's peak and collapse points
    /// (extra trials under `perf record`; as `[profile]` in the experiment).
    #[arg(long)]
    pub profile: bool,
    /// Where to write the HTML report (default: scalelab-report-<RUN_ID>.html,
    /// or scalelab-report-<STORE>-<RUN_ID>.html with a --store other than
    /// scalelab.sqlite).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// What legends, tables and verdicts call this run (default: the
    /// server host's OS and kernel release, e.g. "Linux 6.1.0-18-amd64").
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// The revision of the software under test (a commit, a version, a
    /// package build), stored with the run and shown in its reports
    /// [env: SCALELAB_COMMIT].
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// Run the whole sweep this many times, each its own run with one
    /// label, a fresh server start and a pause between (as `[trials]
    /// runs`): repeats of one system, which verdicts between runs need
    /// (3 or more; see `scalelab compare --help`).
    #[arg(long, value_name = "RUNS", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: Option<u32>,
}

/// The pause between repeats of a sweep (`--repeat`): the last one's
/// sockets in TIME_WAIT and dirty pages settle, and each repeat starts
/// its servers anew.
pub const REPEAT_PAUSE: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the experiment; `store_given` says whether `--store` was passed
/// (then the resume hint repeats it).
pub fn run(
    a: &RunArgs,
    store_path: &Path,
    store_given: bool,
    shutdown: &Shutdown,
) -> anyhow::Result<i32> {
    let label = non_empty("--label", a.label.as_deref())?;
    let revision = match &a.commit {
        Some(c) => non_empty("--commit", Some(c))?,
        None => non_empty(
            COMMIT_ENV,
            commit_from_env(std::env::var(COMMIT_ENV))?.as_deref(),
        )?,
    };
    let mut exp = Experiment::load(&a.experiment, a.quick)?;
    if a.profile && exp.profile.is_none() {
        exp.profile = Some(scalelab::spec::ProfilePolicy::default());
    }
    if a.estimate {
        outln!("{}", runner::estimate::Estimate::of(&exp).sentence());
        return Ok(0);
    }
    let mut store = Store::open(store_path)?;
    let points = exp.points().len();
    eprintln!(
        "{}: {} system(s) x {} point(s) x {}..{} trial(s) of {} (+{} warmup); store {}",
        exp.name,
        exp.systems.len(),
        points,
        exp.trials.min_trials,
        exp.trials.max_trials,
        scalelab::units::format_duration(exp.trials.duration),
        scalelab::units::format_duration(exp.trials.warmup),
        store_path.display()
    );
    eprintln!("{}", runner::estimate::Estimate::of(&exp).sentence());
    let repeats = a.repeat.unwrap_or(exp.trials.runs);
    if repeats > 1 {
        eprintln!(
            "{repeats} repeats of the whole sweep, each its own run, {}s apart: {repeats} times that",
            REPEAT_PAUSE.as_secs()
        );
    }
    if let Some(server) = &exp.hosts.server {
        eprintln!("server on {server} (over ssh)");
    }
    for (i, sys) in exp.systems.iter().enumerate() {
        if let Some(host) = &sys.host {
            let kind = exp.server_kind_of(i);
            eprintln!("system `{}`: {kind} server on {host} (over ssh)", sys.label);
        }
    }
    if !exp.hosts.clients.is_empty() {
        let names: Vec<String> = exp.hosts.clients.iter().map(|h| h.to_string()).collect();
        eprintln!(
            "load split evenly over {} client hosts ({}): connections and rate are totals",
            names.len(),
            names.join(", ")
        );
    }
    let opts = RunOptions {
        resume: a.resume,
        base_dir: runner::default_base_dir(),
        progress: std::io::stderr().is_terminal(),
        label,
        revision,
    };
    if repeats > 1 && a.resume.is_some() {
        anyhow::bail!(
            "--resume continues one run; run it without --repeat (and [trials] runs = 1), then \
             make the other repeats with `scalelab run --repeat N`"
        );
    }
    let mut ids = Vec::new();
    let mut code = super::exit::OK;
    for k in 0..repeats {
        if k > 0 {
            eprintln!(
                "repeat {} of {repeats}: pausing {}s before a fresh start",
                k + 1,
                REPEAT_PAUSE.as_secs()
            );
            if shutdown.sleep(REPEAT_PAUSE) {
                return Ok(super::exit::INTERRUPTED);
            }
        }
        let last = k + 1 == repeats;
        let (id, c) = one_run(
            a,
            (&exp, &mut store, &opts),
            (store_path, store_given),
            last,
            shutdown,
        )?;
        ids.push(id);
        if c == super::exit::INTERRUPTED {
            return Ok(c);
        }
        if code == super::exit::OK {
            code = c;
        }
    }
    if repeats > 1 {
        print_repeats(&store, store_path, &ids)?;
    }
    Ok(code)
}

/// After `--repeat`: the runs made, and the drift between them.
fn print_repeats(store: &Store, store_path: &Path, ids: &[i64]) -> anyhow::Result<()> {
    let runs = ids
        .iter()
        .map(|id| store.load_run(&id.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let file = store_path.display().to_string();
    let sources: Vec<String> = ids.iter().map(|id| format!("{file}:{id}")).collect();
    let merged = scalelab::report::multi::merge(runs, sources.clone(), Default::default())?;
    let drift = scalelab::report::multi::drift::of_sides(&merged);
    outln!(
        "\n{} repeats of `{}`: runs {}; compare them with another label's repeats by naming \
         them all (`scalelab compare {} OTHER...`)",
        ids.len(),
        merged.sides[0].name,
        ids.iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        sources.join(" ")
    );
    out!("{}", scalelab::report::multi::drift::render(&drift));
    Ok(())
}

/// One run of the sweep: its table and report; its id and exit code.
fn one_run(
    a: &RunArgs,
    (exp, store, opts): (&Experiment, &mut Store, &RunOptions),
    (store_path, store_given): (&Path, bool),
    last: bool,
    shutdown: &Shutdown,
) -> anyhow::Result<(i64, i32)> {
    let summary = runner::run(exp, store, opts, shutdown)?;
    for line in &summary.profile_lines {
        eprintln!("{line}");
    }
    let data = store.load_run(&summary.run_id.to_string())?;
    out!(
        "{}",
        scalelab::report::terminal::render(&data, std::io::stdout().is_terminal())
    );
    let html = (a.output.clone())
        .filter(|_| last)
        .unwrap_or_else(|| super::report::default_html_path(store_path, summary.run_id));
    std::fs::write(&html, scalelab::report::html::render(&data))
        .with_context(|| format!("cannot write the report to {}", html.display()))?;
    outln!(
        "\nrun {}: {} trial(s), {} failed",
        summary.run_id,
        summary.trials_run,
        summary.trials_failed
    );
    outln!("report: {}", html.display());
    if summary.interrupted {
        let store = if store_given {
            format!("--store {} ", shell_word(&store_path.display().to_string()))
        } else {
            String::new()
        };
        let what = match summary.trials_discarded {
            0 => "interrupted: every finished trial is stored; continue with".to_string(),
            n => format!(
                "{n} trial(s) discarded: scalelab was stopped during their window (the `!` lines \
                 say when); every other trial is stored; run them with"
            ),
        };
        eprintln!(
            "{what}\n  scalelab {store}run {} --resume {}{}",
            shell_word(&a.experiment.display().to_string()),
            summary.run_id,
            if a.quick { " --quick" } else { "" }
        );
        return Ok((summary.run_id, super::exit::INTERRUPTED));
    }
    let ok = data
        .trials
        .iter()
        .filter(|t| t.status == TrialStatus::Ok)
        .count();
    let code = super::exit::for_trials(ok, data.trials.len() - ok);
    if code == super::exit::NOTHING_MEASURED {
        eprintln!(
            "nothing was measured: every trial of run {} failed",
            summary.run_id
        );
    } else if let Some(why) = scalelab::report::analyse::nothing_comparable(&data) {
        eprintln!("run {}: {why}", summary.run_id);
        return Ok((summary.run_id, super::exit::NOTHING_COMPARABLE));
    }
    Ok((summary.run_id, code))
}

/// `value` trimmed; an empty or blank value is an error naming `flag`.
/// The environment variable `--commit` defaults to.
const COMMIT_ENV: &str = "SCALELAB_COMMIT";

/// `SCALELAB_COMMIT`, checked as `--commit` is: bytes that are not UTF-8
/// are refused by name (they were dropped silently, where `--commit`
/// refused them).
fn commit_from_env(value: Result<String, std::env::VarError>) -> anyhow::Result<Option<String>> {
    match value {
        Ok(v) => Ok(Some(v)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(raw)) => anyhow::bail!(
            "{COMMIT_ENV} is not valid UTF-8 ({:?}); set it to a commit or version in UTF-8, \
             or unset it",
            raw
        ),
    }
}

fn non_empty(flag: &str, value: Option<&str>) -> anyhow::Result<Option<String>> {
    match value.map(str::trim) {
        Some("") => anyhow::bail!("{flag} is empty: give a non-empty name, or leave {flag} out"),
        other => Ok(other.map(str::to_string)),
    }
}

/// `word` as one shell word: quoted when it holds anything but safe characters.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalelab_commit_is_checked_as_commit_is() {
        use std::os::unix::ffi::OsStringExt;
        let bad = std::ffi::OsString::from_vec(vec![b'a', 0xff, b'b']);
        let e = commit_from_env(Err(std::env::VarError::NotUnicode(bad))).unwrap_err();
        assert!(
            e.to_string().contains("SCALELAB_COMMIT is not valid UTF-8"),
            "{e}"
        );
        assert_eq!(
            commit_from_env(Ok("abc1234".into())).unwrap().as_deref(),
            Some("abc1234")
        );
        assert_eq!(
            commit_from_env(Err(std::env::VarError::NotPresent)).unwrap(),
            None
        );
        assert!(non_empty(COMMIT_ENV, Some(" "))
            .unwrap_err()
            .to_string()
            .contains(COMMIT_ENV));
    }
}
