//! `scalelab model`.
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// CSV with concurrency N and throughput X columns.
    pub file: PathBuf,
    #[arg(long)]
    pub json: bool,
}

pub fn run(_a: &ModelArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
