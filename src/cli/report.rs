//! `scalelab report`, `scalelab export` and `scalelab list`.

use anyhow::Context;
use scalelab::judging::check::is_same_run;
use scalelab::judging::multi::{merge, Pooling};
use scalelab::store::{RunData, Store};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Run id, `latest`, or `STORE:RUN` for a run in another store file
    /// (`linux.sqlite:1`). Give several to put them on one page: every
    /// series on every chart, named by its run's label, the first run the
    /// baseline.
    #[arg(default_value = "latest", value_name = "RUN")]
    pub runs: Vec<String>,
    /// Where to write the HTML (default: scalelab-report-<RUN_ID>.html,
    /// scalelab-report-<STORE>-<RUN_ID>.html for a run of a store other
    /// than scalelab.sqlite, or scalelab-report-<ID>-<ID>….html for several
    /// runs).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// With several runs: every run its own series, even where runs share
    /// a label (by default runs that share a label are pooled as repeats
    /// of one system and judged run by run).
    #[arg(long)]
    pub each_run: bool,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Run id, `latest`, or `STORE:RUN` for a run in another store file
    /// (`linux.sqlite:1`), as `report` and `compare` take it.
    #[arg(default_value = "latest", value_name = "RUN")]
    pub run: String,
    /// json: one object with the run, every trial, per-point summaries,
    /// verdicts, fits and the ranking (docs/report.md); csv: one row per
    /// trial, units in the column names; csv-schema: the CSV's columns and
    /// their types as a Frictionless Table Schema (JSON), so a column a run
    /// left empty still loads with its type.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    Json,
    Csv,
    CsvSchema,
}

/// `scalelab-report-<RUN_ID>.html` for a run of the default store,
/// `scalelab-report-<STORE>-<RUN_ID>.html` for one of another store (its
/// file name without `.sqlite`), so that the first runs of two stores do
/// not write one file.
pub fn default_html_path(store: &Path, run_id: i64) -> PathBuf {
    let stem = store
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let default_stem = Path::new(super::DEFAULT_STORE)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem.is_empty() || stem == default_stem {
        PathBuf::from(format!("scalelab-report-{run_id}.html"))
    } else {
        PathBuf::from(format!("scalelab-report-{stem}-{run_id}.html"))
    }
}

/// Opens an existing store; a missing file is an error, not a new store.
pub fn open_existing(store: &Path) -> anyhow::Result<Store> {
    Ok(Store::open_existing(store, scalelab::catalog())?)
}

/// A run named on the command line: where it was read from
/// (`linux.sqlite:1`, or `run 3` in the default store) and its data.
pub struct NamedRun {
    /// How the run was given, for the page's table of runs.
    pub source: String,
    /// The run and its trials.
    pub data: RunData,
}

/// Splits `STORE:RUN` into its store file and run selector; a plain
/// selector (`3`, `latest`) names a run in `default_store`.
pub fn run_ref(text: &str, default_store: &Path) -> (PathBuf, String) {
    match text.rsplit_once(':') {
        Some((path, run)) if !path.is_empty() => (PathBuf::from(path), run.to_string()),
        _ => (default_store.to_path_buf(), text.to_string()),
    }
}

/// Which argument an error is about, as it was given (`STORE:RUN`, a file,
/// or a run of `--store`), so a message never names only the default store.
pub fn selector_context(role: &str, given: &str) -> String {
    match given.rsplit_once(':') {
        Some((file, _)) if !file.is_empty() => format!("{role} `{given}` (store {file})"),
        _ if Path::new(given).exists() => format!("{role} `{given}`"),
        _ => format!("{role} `{given}`: no file of that name, so it was read as a run of --store"),
    }
}

/// Loads run `text` (`3`, `latest`, `STORE:RUN`), reading a plain selector
/// from `default_store`.
pub fn load_named(text: &str, default_store: &Path) -> anyhow::Result<NamedRun> {
    let (store, selector) = run_ref(text, default_store);
    let data = open_existing(&store)
        .and_then(|s| Ok(s.load_run(&selector)?))
        .with_context(|| match run_ref(text, default_store) {
            (_, ref run) if run == text && Path::new(text).is_file() => format!(
                "run `{text}` is a file, read as a run of --store; for a run in that store \
                 write `{text}:latest` or `{text}:ID`"
            ),
            _ => selector_context("run", text),
        })?;
    warn_unreadable(&data);
    let file = store.file_name().map_or_else(
        || store.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    Ok(NamedRun {
        source: format!("{file}:{}", data.run.id),
        data,
    })
}

pub fn report(a: &ReportArgs, store: &Path) -> anyhow::Result<i32> {
    let runs = (a.runs.iter())
        .map(|r| load_named(r, store))
        .collect::<anyhow::Result<Vec<NamedRun>>>()?;
    let (path, page) = match runs.as_slice() {
        [one] => (
            default_html_path(&run_ref(&a.runs[0], store).0, one.data.run.id),
            scalelab::report::html::render(&one.data),
        ),
        _ => {
            refuse_repeated(&runs)?;
            let ids: Vec<String> = runs.iter().map(|r| r.data.run.id.to_string()).collect();
            let sources: Vec<String> = runs.iter().map(|r| r.source.clone()).collect();
            let pooling = if a.each_run {
                Pooling::EachRun
            } else {
                Pooling::ByLabel
            };
            let merged = merge(runs.into_iter().map(|r| r.data).collect(), sources, pooling)?;
            (
                PathBuf::from(format!("scalelab-report-{}.html", ids.join("-"))),
                {
                    let rules = scalelab::judging::multi::verdicts::rules(&merged, None);
                    scalelab::report::multi::page::render(&merged, &rules)
                },
            )
        }
    };
    let path = a.output.clone().unwrap_or(path);
    std::fs::write(&path, page)
        .with_context(|| format!("cannot write the report to {}", path.display()))?;
    outln!("{}", path.display());
    Ok(0)
}

/// Refuses a run named twice (from one store or from a copy of it): it
/// would be compared with itself, or pooled as its own repeat.
pub fn refuse_repeated(runs: &[NamedRun]) -> anyhow::Result<()> {
    for (i, r) in runs.iter().enumerate() {
        if let Some(o) = runs[..i].iter().find(|o| is_same_run(&o.data, &r.data)) {
            anyhow::bail!(
                "{} and {} are the same run; name each run once (a run compared with itself, \
                 or pooled as its own repeat, says nothing)",
                o.source,
                r.source
            );
        }
    }
    Ok(())
}

/// Names, on stderr, every trial of `data` whose stored probe summary could
/// not be read, so that a missing figure is never a silent null.
fn warn_unreadable(data: &RunData) {
    for t in &data.trials {
        if let Some(why) = &t.probe_unreadable {
            eprintln!("warning: run {}: {why}", data.run.id);
        }
    }
}

pub fn export(a: &ExportArgs, store: &Path) -> anyhow::Result<i32> {
    let data = load_named(&a.run, store)?.data;
    warn_unreadable(&data);
    let text = match a.format {
        Format::Json => {
            serde_json::to_string_pretty(&scalelab::report::json::export(&data))? + "\n"
        }
        Format::Csv => scalelab::report::csv::export(&data),
        Format::CsvSchema => {
            serde_json::to_string_pretty(&scalelab::report::csv::schema(&data))? + "\n"
        }
    };
    match &a.output {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => out!("{text}"),
    }
    Ok(0)
}

pub fn list(store: &Path) -> anyhow::Result<i32> {
    let runs = open_existing(store)?.list_runs()?;
    if runs.is_empty() {
        outln!("no runs in {}", store.display());
        return Ok(0);
    }
    outln!(
        "{:>4}  {:<24} {:<23} {:>6} {:>7}  {:<20} server",
        "id",
        "name",
        "status",
        "ok",
        "failed",
        "started (UTC)"
    );
    for r in runs {
        outln!(
            "{:>4}  {:<24} {:<23} {:>6} {:>7}  {:<20} {}",
            r.run.id,
            r.run.name,
            r.shown_status(),
            r.trials_ok,
            r.trials_failed,
            utc(r.run.started_at),
            r.run.server_version.unwrap_or_default()
        );
    }
    Ok(0)
}

/// `2026-11-22 10:04:05` from unix seconds (civil-from-days, H. Hinnant).
pub fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::default_html_path;
    use std::path::{Path, PathBuf};

    #[test]
    fn a_report_is_named_after_its_store_unless_it_is_the_default() {
        let name = |store: &str| default_html_path(Path::new(store), 1);
        assert_eq!(
            name("scalelab.sqlite"),
            PathBuf::from("scalelab-report-1.html")
        );
        assert_eq!(
            name("/tmp/x/scalelab.sqlite"),
            PathBuf::from("scalelab-report-1.html")
        );
        assert_eq!(
            name("linux.sqlite"),
            PathBuf::from("scalelab-report-linux-1.html")
        );
        assert_eq!(
            name("runs/bsd"),
            PathBuf::from("scalelab-report-bsd-1.html")
        );
    }
}
