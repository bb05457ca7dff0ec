//! `scalelab plan`: a randomised schedule of boots and runs between runs,
//! so that a user comparing systems that need a reboot each (three OSes)
//! does not run all of A, then all of B: blocks with every label once, in
//! a seeded random order ([`scalelab::runner::order::schedule`]).

use scalelab::runner::order::{fresh_seed, schedule};

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// The systems to compare, comma-separated: "A,B,C" (one label each,
    /// as given to `run --label`).
    #[arg(long, value_name = "A,B,...")]
    pub labels: String,
    /// Runs of each label (3 or more for a verdict between runs).
    #[arg(long, value_name = "N")]
    pub runs: u32,
    /// The seed of the schedule: the same seed prints the same schedule.
    /// Default: a fresh seed (printed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// The experiment file to name in each step's `scalelab run` line.
    #[arg(long, value_name = "FILE", default_value = "EXPERIMENT.toml")]
    pub experiment: String,
}

/// Prints the schedule; bad input is an error (exit 2).
pub fn run(a: &PlanArgs) -> anyhow::Result<i32> {
    let labels: Vec<String> = a.labels.split(',').map(str::to_string).collect();
    for l in &labels {
        // A label with a control character is refused as `run --label` refuses it.
        super::run::non_empty("--labels", Some(l)).or_else(|e| match l.trim() {
            "" => Ok(None), // said by the schedule, with its place in the list
            _ => Err(e),
        })?;
    }
    let seed = a.seed.unwrap_or_else(fresh_seed);
    let steps = schedule(&labels, a.runs, seed)?;
    outln!(
        "{} runs of each of {} labels, in {} blocks with every label once, seed {seed} \
         (`scalelab plan ... --seed {seed}` prints it again):",
        a.runs,
        labels.len(),
        a.runs
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
            a.runs
        );
    }
    outln!(
        "then compare them: scalelab compare with the runs of one label as one side \
         (see `scalelab compare --help`)"
    );
    Ok(super::exit::OK)
}
