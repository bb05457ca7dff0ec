//! `scalelab check BASELINE CANDIDATE`: the regression gate, with `git
//! bisect run`'s exit codes (0 good, 1 regression, 125 cannot say, 128
//! an error that is not about the candidate: the bisect aborts).

use super::report::{open_existing, run_ref, selector_context as named};
use anyhow::Context;
use scalelab::judging::check::{self, is_same_run, CANNOT_SAY};
use scalelab::judging::history::shape::Property;
use scalelab::store::RunData;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
#[command(after_help = "Exit codes:
  0    no point is significantly slower with the whole 95% CI of its
       slowdown beyond --max-regression
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
    /// Gate on a count per request instead of throughput: `syscalls`,
    /// `write_calls` or `read_calls` (counted in every trial),
    /// `context_switches`, or `instructions` where a PMU counts them (a
    /// rise whose whole 95% interval passes --max-regression of the
    /// baseline's count is a regression); or on a property of each
    /// system's curve: `n_star`, `peak`, `peak_x`, `collapse` (lower is
    /// worse), `sigma`, `kappa` (higher is worse), against the prediction
    /// interval of at least 3 baseline runs.
    #[arg(long, value_name = "COUNT")]
    pub on: Option<String>,
}

pub(crate) fn percent(text: &str) -> Result<f64, String> {
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
    let shape = match &a.on {
        Some(on) => on_shape(on)?,
        None => None,
    };
    // The baseline is read first, so a missing baseline is named before a
    // candidate in a default store that is not there either.
    baseline_exists(&a.baseline, store).with_context(|| named("baseline", &a.baseline))?;
    let candidate = load(&a.candidate, store).with_context(|| named("candidate", &a.candidate))?;
    let found = baselines(&a.baseline, store, &candidate)
        .with_context(|| named("baseline", &a.baseline))?;
    if found.runs.is_empty() {
        eprintln!(
            "cannot say: {}",
            empty_baseline(&a.baseline, &candidate, &found)
        );
        return Ok(CANNOT_SAY);
    }
    let baselines = found.runs;
    if let Some(property) = shape {
        let c = scalelab::judging::check_shape::check(
            &baselines,
            &candidate,
            property,
            a.max_regression,
        );
        if a.json {
            outln!("{}", serde_json::to_string_pretty(&c)?);
        } else {
            out!("{}", scalelab::report::check::render_shape(&c));
        }
        return Ok(c.exit_code);
    }
    if let Some(on) = &a.on {
        let c = scalelab::judging::check_work::check(&baselines, &candidate, on, a.max_regression);
        if a.json {
            outln!("{}", serde_json::to_string_pretty(&c)?);
        } else {
            out!("{}", scalelab::report::check::render_work(&c));
        }
        return Ok(c.exit_code);
    }
    let c = check::check(&baselines, &candidate, a.max_regression);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        out!("{}", scalelab::report::check::render(&c));
    }
    Ok(c.exit_code)
}

/// The curve property `on` names, `None` for a count per request, or the
/// error that lists both kinds of choice.
fn on_shape(on: &str) -> anyhow::Result<Option<Property>> {
    if let Ok(p) = Property::parse(on) {
        return Ok(Some(p));
    }
    match scalelab::judging::check_work::figure_of(on) {
        Ok(_) => Ok(None),
        Err(counts) => {
            let shapes: Vec<&str> = Property::ALL.iter().map(|p| p.name()).collect();
            anyhow::bail!("{counts}; or a curve property: {}", shapes.join(", "))
        }
    }
}

fn load(selector: &str, store: &Path) -> anyhow::Result<RunData> {
    match selector.rsplit_once(':') {
        Some((file, run)) if !file.is_empty() => Ok(open_existing(Path::new(file))?.load_run(run)?),
        _ => Ok(open_existing(store)?.load_run(selector)?),
    }
}

/// The baseline's store file, and its run where it names one, are there.
fn baseline_exists(selector: &str, store: &Path) -> anyhow::Result<()> {
    let path = Path::new(selector);
    if path.is_file() {
        open_existing(path)?;
        return Ok(());
    }
    let (file, run) = run_ref(selector, store);
    open_existing(&file)?.resolve_run(&run)?;
    Ok(())
}

/// The baseline runs a selector gave, and whether the candidate itself was
/// among the finished runs of its recipe (and so left out).
struct Baselines {
    runs: Vec<RunData>,
    candidate_left_out: bool,
}

/// Why a baseline store gave no run: the candidate was its only finished
/// run of the recipe (the baseline and candidate are the same run), or it
/// holds none.
fn empty_baseline(selector: &str, candidate: &RunData, found: &Baselines) -> String {
    let name = &candidate.run.name;
    if found.candidate_left_out {
        format!(
            "the baseline and the candidate are the same run: the only finished run of `{name}` \
             in {selector} is the candidate itself (run {}); name a baseline run other than \
             the candidate, or a store of earlier runs",
            candidate.run.id
        )
    } else {
        format!("{selector} holds no finished run of `{name}`")
    }
}

/// One run, or every finished run of the candidate's recipe in a store file
/// (the candidate itself left out).
fn baselines(selector: &str, store: &Path, candidate: &RunData) -> anyhow::Result<Baselines> {
    let path = PathBuf::from(selector);
    let mut found = Baselines {
        runs: Vec::new(),
        candidate_left_out: false,
    };
    if !path.is_file() {
        found.runs.push(load(selector, store)?);
        return Ok(found);
    }
    let s = open_existing(&path)?;
    for listing in s.list_runs()? {
        let run = &listing.run;
        if run.name == candidate.run.name && run.status == scalelab::store::RunStatus::Finished {
            let data = s.load_run(&run.id.to_string())?;
            if is_same_run(&data, candidate) {
                found.candidate_left_out = true;
            } else {
                found.runs.push(data);
            }
        }
    }
    Ok(found)
}
