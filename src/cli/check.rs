//! `scalelab check BASELINE CANDIDATE`: the regression gate, with `git
//! bisect run`'s exit codes (0 good, 1 regression, 125 cannot say, 128
//! an error that is not about the candidate: the bisect aborts).

use super::report::{open_existing, selector_context as named};
use anyhow::Context;
use scalelab::report::check::{self, is_same_run, CANNOT_SAY};
use scalelab::store::RunData;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Exit codes:
  0    no point is significantly slower by more than --max-regression
  1    a regression: the points, their sizes and CIs are printed
  125  cannot say: nothing checked (no point with a usable trial on
       both sides), the candidate as its own baseline, another recipe,
       a point the candidate lacks, a client-bound or erroring point,
       too few trials, or a failed candidate (`git bisect run` skips
       the revision)
  128  an error that is not about the candidate: a missing or corrupt
       store, a run that is not there, a bad flag (`git bisect run`
       aborts; 2 would name the revision bad)
  130  interrupted by SIGINT (143: SIGTERM); `git bisect run` aborts")]
pub struct CheckArgs {
    /// The baseline: a run (`3`, `latest`, `STORE:RUN`), or a store file
    /// whose finished runs of the candidate's recipe are pooled (the median
    /// of a saved set of baseline runs).
    pub baseline: String,
    /// The candidate run: `latest`, an id, or `STORE:RUN`.
    #[arg(default_value = "latest")]
    pub candidate: String,
    /// The largest slowdown tolerated, in percent (`5` or `5%`).
    #[arg(long, value_name = "PERCENT", default_value = "5", value_parser = percent)]
    pub max_regression: f64,
    /// Print JSON instead of the text.
    #[arg(long)]
    pub json: bool,
}

fn percent(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage (write 5 or 5%)"))?;
    if v.is_finite() && (0.0..100.0).contains(&v) {
        Ok(v / 100.0)
    } else {
        Err(format!("{v} is not between 0 and 100"))
    }
}

pub fn run(a: &CheckArgs, store: &Path) -> anyhow::Result<i32> {
    let candidate = load(&a.candidate, store).with_context(|| named("candidate", &a.candidate))?;
    let baselines = baselines(&a.baseline, store, &candidate)
        .with_context(|| named("baseline", &a.baseline))?;
    if baselines.is_empty() {
        eprintln!(
            "cannot say: {} holds no finished run of `{}`",
            a.baseline, candidate.run.name
        );
        return Ok(CANNOT_SAY);
    }
    let c = check::check(&baselines, &candidate, a.max_regression);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        out!("{}", check::render(&c));
    }
    Ok(c.exit_code)
}

fn load(selector: &str, store: &Path) -> anyhow::Result<RunData> {
    match selector.rsplit_once(':') {
        Some((file, run)) if !file.is_empty() => Ok(open_existing(Path::new(file))?.load_run(run)?),
        _ => Ok(open_existing(store)?.load_run(selector)?),
    }
}

/// One run, or every finished run of the candidate's recipe in a store file
/// (the candidate itself left out).
fn baselines(selector: &str, store: &Path, candidate: &RunData) -> anyhow::Result<Vec<RunData>> {
    let path = PathBuf::from(selector);
    if !path.is_file() {
        return Ok(vec![load(selector, store)?]);
    }
    let s = open_existing(&path)?;
    let mut out = Vec::new();
    for listing in s.list_runs()? {
        let run = &listing.run;
        if run.name == candidate.run.name && run.status == "finished" {
            let data = s.load_run(&run.id.to_string())?;
            if !is_same_run(&data, candidate) {
                out.push(data);
            }
        }
    }
    Ok(out)
}
