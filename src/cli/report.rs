//! `scalelab report`, `scalelab export` and `scalelab list`.
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Run id, or `latest`.
    #[arg(default_value = "latest")]
    pub run: String,
    /// Where to write the HTML (default: scalelab-report-<RUN_ID>.html).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Run id, or `latest`.
    #[arg(default_value = "latest")]
    pub run: String,
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
}

pub fn report(_a: &ReportArgs, _store: &Path) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
pub fn export(_a: &ExportArgs, _store: &Path) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
pub fn list(_store: &Path) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
