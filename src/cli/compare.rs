//! `scalelab compare`.
use std::path::Path;

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// The baseline run id.
    pub run_a: String,
    /// The run compared against it.
    pub run_b: String,
    #[arg(long)]
    pub json: bool,
}

pub fn run(_a: &CompareArgs, _store: &Path) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
