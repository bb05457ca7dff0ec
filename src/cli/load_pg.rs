//! `scalelab load pg`.
use scalelab::shutdown::Shutdown;

#[derive(clap::Args, Debug)]
pub struct LoadPgArgs {
    pub conninfo: String,
}

pub fn run(_a: &LoadPgArgs, _shutdown: &Shutdown) -> anyhow::Result<i32> {
    anyhow::bail!("not yet")
}
