//! `scalelab run`.
use scalelab::shutdown::Shutdown;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The experiment file (TOML); see docs/experiment-format.md.
    pub experiment: PathBuf,
    /// Continue an interrupted run: finished trials are kept, the rest run.
    #[arg(long, value_name = "RUN_ID")]
    pub resume: Option<i64>,
}

pub fn run(_a: &RunArgs, _store: &Path, _shutdown: &Shutdown) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
