//! `scalelab load http`.
use scalelab::shutdown::Shutdown;

#[derive(clap::Args, Debug)]
pub struct LoadHttpArgs {
    pub url: String,
}

pub fn run(_a: &LoadHttpArgs, _shutdown: &Shutdown) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
