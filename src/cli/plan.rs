//! `scalelab plan`: two plans.
//! - `plan RECIPE [--detect 5%] [--power 80%] [--budget 30m]`: how many
//!   runs and trials resolve a change, from the variance the recipe's
//!   stored runs measured between runs and between trials, and what each
//!   cost on this host (Kalibera & Jones; `judging::planner`).
//! - `plan --labels A,B,C --runs N`: a randomised schedule of boots and
//!   runs between runs, so that a user comparing systems that need a
//!   reboot each (three OSes) does not run all of A, then all of B: blocks
//!   with every label once, in a seeded random order
//!   ([`scalelab::runner::order::schedule`]).

use scalelab::runner::order::{fresh_seed, schedule};

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// The recipe to plan runs of (its `name = "…"`): prints the runs a
    /// side and trials a point that resolve --detect, from the runs of it
    /// in --store.
    pub recipe: Option<String>,
    /// The change to resolve, in percent.
    #[arg(long, value_name = "PERCENT", default_value = "5%", value_parser = super::check::percent)]
    pub detect: f64,
    /// The chance of calling a change of exactly that size, in percent
    /// (50% is an interval only as narrow as the change).
    #[arg(long, value_name = "PERCENT", default_value = "80%", value_parser = super::check::percent)]
    pub power: f64,
    /// The most time the plan may take, both sides together ("30m",
    /// "2h"): also prints what the best plan within it resolves.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Print JSON instead of the text (with RECIPE).
    #[arg(long)]
    pub json: bool,
    /// The systems to compare, comma-separated: "A,B,C" (one label each,
    /// as given to `run --label`).
    #[arg(long, value_name = "A,B,...")]
    pub labels: Option<String>,
    /// Runs of each label (3 or more for a verdict between runs).
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,
    /// The seed of the schedule: the same seed prints the same schedule.
    /// Default: a fresh seed (printed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The experiment file to name in each step's `scalelab run` line.
    #[arg(long, value_name = "FILE", default_value = "EXPERIMENT.toml")]
    pub experiment: String,
}

/// `plan RECIPE`: the planner, from the runs of the store.
fn plan_recipe(a: &PlanArgs, recipe: &str, store: &std::path::Path) -> anyhow::Result<i32> {
    use scalelab::judging::planner::{plan, Ask};
    let budget = match &a.budget {
        Some(b) => Some(
            scalelab::units::parse_duration(b)
                .map_err(|e| anyhow::anyhow!("--budget {b}: {e} (write it as \"30m\" or \"2h\")"))?
                .as_secs_f64(),
        ),
        None => None,
    };
    let s = super::report::open_existing(store)?;
    let mut runs = Vec::new();
    for listing in s.list_runs()? {
        if listing.run.name == recipe {
            runs.push(s.load_run(&listing.run.id.to_string())?);
        }
    }
    let ask = Ask {
        detect: a.detect,
        power: a.power,
        budget,
    };
    let r = plan(recipe, &runs, ask);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        out!("{}", scalelab::report::plan::render(&r));
    }
    Ok(super::exit::OK)
}

/// Prints the plan or the schedule; bad input is an error (exit 2).
pub fn run(a: &PlanArgs, store: &std::path::Path) -> anyhow::Result<i32> {
    if let Some(recipe) = &a.recipe {
        return plan_recipe(a, recipe, store);
    }
    let (Some(labels), Some(runs)) = (&a.labels, a.runs) else {
        anyhow::bail!(
            "plan needs a RECIPE (the runs and trials that resolve a change) or --labels A,B \
             --runs N (a schedule of boots and runs)"
        );
    };
    let labels: Vec<String> = labels.split(',').map(str::to_string).collect();
    for l in &labels {
        // A label with a control character is refused as `run --label` refuses it.
        super::run::non_empty("--labels", Some(l)).or_else(|e| match l.trim() {
            "" => Ok(None), // said by the schedule, with its place in the list
            _ => Err(e),
        })?;
    }
    let seed = a.seed.unwrap_or_else(fresh_seed);
    let steps = schedule(&labels, runs, seed)?;
    outln!(
        "{} runs of each of {} labels, in {} blocks with every label once, seed {seed} \
         (`scalelab plan ... --seed {seed}` prints it again):",
        runs,
        labels.len(),
        runs
    );
    let width = steps.len().to_string().len();
    for (i, s) in steps.iter().enumerate() {
        outln!(
            "{:>width$}. boot {}; then scalelab run {} --label {}   (run {} of {})",
            i + 1,
            s.label,
            a.experiment,
            super::run::shell_word(&s.label),
            s.run,
            runs
        );
    }
    outln!(
        "then compare them: scalelab compare with the runs of one label as one side \
         (see `scalelab compare --help`)"
    );
    Ok(super::exit::OK)
}
