//! `scalelab run`: validate, sweep, store, then print the table and write
//! the HTML report.

use anyhow::Context;
use scalelab::recipe::Experiment;
use scalelab::runner::{self, RunOptions};
use scalelab::shutdown::Shutdown;
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
    /// Tune this machine for the run and put it back after, however the
    /// run ends (as `[machine] tune = true`): governor `performance`, turbo
    /// off, IRQs off the server's CPUs, irqbalance paused, ASLR 2, where
    /// each exists; see `scalelab doctor --machine`.
    #[arg(long)]
    pub tune: bool,
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
    /// The seed of the random trial order (printed at the start of every
    /// run): the same seed and recipe run the same order again. With
    /// --repeat, repeat k (from 0) gets SEED + k. Default: a fresh seed.
    /// A resumed run keeps its own.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

/// The pause between repeats of a sweep (`--repeat`): see
/// [`runner::estimate::REPEAT_PAUSE`].
pub const REPEAT_PAUSE: std::time::Duration = runner::estimate::REPEAT_PAUSE;

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
        exp.profile = Some(scalelab::recipe::ProfilePolicy::default());
    }
    exp.machine.tune |= a.tune;
    let repeats = a.repeat.unwrap_or(exp.trials.runs);
    let estimate = runner::estimate::Estimate::of(&exp).with_repeats(repeats);
    if a.estimate {
        outln!("{}", estimate.sentence());
        return Ok(0);
    }
    let mut store = Store::open(store_path, scalelab::catalog())?;
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
    eprintln!("{}", estimate.sentence());
    let asked = a.repeat.unwrap_or(exp.trials.runs);
    let plan = super::run_repeats::plan(&store, a.resume, asked, a.repeat == Some(1))?;
    if let Some((first, _)) = &plan.group {
        // New repeats of a resumed group are checked against its recipe
        // even when every run made so far is finished.
        runner::check_resumable(&exp, &store, *first)?;
    }
    if let Some(note) = &plan.note {
        eprintln!("{note}");
    }
    let repeats = plan.repeats;
    if repeats > 1 && a.resume.is_none() {
        eprintln!(
            "{repeats} repeats of the whole sweep, each its own run, {}s apart",
            REPEAT_PAUSE.as_secs()
        );
    }
    print_hosts(&exp);
    // A resumed group's new repeats keep its label and revision, so they
    // pool with its other runs.
    let (label, revision) = match &plan.group {
        Some((first, _)) => {
            let run = store.run(*first)?;
            (label.or(Some(run.label)), revision.or(run.revision))
        }
        None => (label, revision),
    };
    let mut ids: Vec<i64> = plan
        .group
        .iter()
        .flat_map(|(_, done)| done.clone())
        .collect();
    let mut group = plan.group.as_ref().map(|(first, _)| *first);
    let mut code = super::exit::OK;
    let made = ids.len();
    for (k, step) in plan.steps.iter().enumerate() {
        if k > 0 {
            eprintln!(
                "repeat {} of {repeats}: pausing {}s before a fresh start",
                made + k + 1,
                REPEAT_PAUSE.as_secs()
            );
            if shutdown.sleep(REPEAT_PAUSE) {
                let last = ids.last().copied().unwrap_or_default();
                eprintln!(
                    "interrupted between repeats; continue with\n  {}",
                    resume_command(a, store_path, store_given, last)
                );
                return Ok(super::exit::INTERRUPTED);
            }
        }
        let opts = RunOptions {
            resume: match step {
                super::run_repeats::Step::Resume(id) => Some(*id),
                super::run_repeats::Step::New => None,
            },
            base_dir: runner::default_base_dir(),
            progress: std::io::stderr().is_terminal(),
            label: label.clone(),
            revision: revision.clone(),
            repeat_of: (repeats > 1).then_some((group, repeats)),
            seed: match step {
                // The run `--resume` names is checked against `--seed`; the
                // rest of its group keep their own seeds.
                super::run_repeats::Step::Resume(id) => a.seed.filter(|_| a.resume == Some(*id)),
                super::run_repeats::Step::New => a.seed.map(|s| s.wrapping_add((made + k) as u64)),
            },
        };
        let last = k + 1 == plan.steps.len();
        let (id, c) = one_run(
            a,
            (&exp, &mut store, &opts),
            (store_path, store_given),
            last,
            shutdown,
        )?;
        group.get_or_insert(id);
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

/// Says where the sweep's systems and clients run.
fn print_hosts(exp: &Experiment) {
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
}

/// The command that resumes run `id` (and the rest of its repeat group).
fn resume_command(a: &RunArgs, store_path: &Path, store_given: bool, id: i64) -> String {
    let store = if store_given {
        format!("--store {} ", shell_word(&store_path.display().to_string()))
    } else {
        String::new()
    };
    format!(
        "scalelab {store}run {} --resume {id}{}",
        shell_word(&a.experiment.display().to_string()),
        if a.quick { " --quick" } else { "" }
    )
}

/// After `--repeat`: the runs made, and the drift between them.
fn print_repeats(store: &Store, store_path: &Path, ids: &[i64]) -> anyhow::Result<()> {
    let runs = ids
        .iter()
        .map(|id| store.load_run(&id.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let file = store_path.display().to_string();
    let sources: Vec<String> = ids.iter().map(|id| format!("{file}:{id}")).collect();
    let merged = scalelab::judging::multi::merge(runs, sources.clone(), Default::default())?;
    let drift = scalelab::judging::multi::drift::of_sides(&merged);
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
        let what = match summary.trials_discarded {
            0 => "interrupted: every finished trial is stored; continue with".to_string(),
            n => format!(
                "{n} trial(s) discarded: scalelab was stopped during their window (the `!` lines \
                 say when); every other trial is stored; run them with"
            ),
        };
        eprintln!(
            "{what}\n  {}",
            resume_command(a, store_path, store_given, summary.run_id)
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
    } else if let Some(why) = scalelab::judging::analyse::nothing_comparable(&data) {
        eprintln!("run {}: {why}", summary.run_id);
        return Ok((summary.run_id, super::exit::NOTHING_COMPARABLE));
    }
    Ok((summary.run_id, code))
}

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

///
/// A value that holds a control character (a newline, an ESC that starts a
/// terminal sequence, a tab) is refused by name: it is stored as given and
/// shown in every table, where it would break the table's lines or move
/// the terminal's cursor.
pub(crate) fn non_empty(flag: &str, value: Option<&str>) -> anyhow::Result<Option<String>> {
    match value.map(str::trim) {
        Some("") => anyhow::bail!("{flag} is empty: give a non-empty name, or leave {flag} out"),
        Some(v) if v.chars().any(char::is_control) => {
            let shown = v.escape_debug();
            anyhow::bail!(
                "{flag} holds a control character (\"{shown}\"): give it as one line of \
                 printable text, without newlines, tabs or escape sequences"
            )
        }
        other => Ok(other.map(str::to_string)),
    }
}

/// `word` as one shell word: quoted when it holds anything but safe characters.
pub(crate) fn shell_word(word: &str) -> String {
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

    /// Issue 46: `--commit` text reached the terminal raw (an ESC sequence,
    /// a newline that broke the `compare` table); it is refused by name.
    #[test]
    fn control_characters_are_refused_by_flag() {
        for (flag, value, shown) in [
            ("--commit", "abc\ndef", "abc\\ndef"),
            ("--commit", "\u{1b}[31mred", "\\u{1b}[31mred"),
            ("--label", "a\tb", "a\\tb"),
            (COMMIT_ENV, "v1\rb", "v1\\rb"),
        ] {
            let e = non_empty(flag, Some(value)).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("{flag} holds a control character")),
                "{e}"
            );
            assert!(e.contains(shown), "{e}");
            assert!(
                !e.contains('\u{1b}') && !e.contains('\n'),
                "shown escaped: {e:?}"
            );
        }
        assert_eq!(
            non_empty("--commit", Some(" v1.2-3 (Debian) "))
                .unwrap()
                .as_deref(),
            Some("v1.2-3 (Debian)")
        );
        assert_eq!(
            non_empty("--label", Some("Linux 6.1 ü"))
                .unwrap()
                .as_deref(),
            Some("Linux 6.1 ü")
        );
    }
}
