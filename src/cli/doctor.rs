//! `scalelab doctor`.

#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Install the missing Debian packages (needs root and apt).
    #[arg(long)]
    pub install: bool,
}

pub fn run(_a: &DoctorArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
