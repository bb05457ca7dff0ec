//! `scalelab agent` (hidden): the far end of a coordinator's ssh session.
//! Speaks line-delimited JSON on stdin/stdout; see `scalelab::remote`.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct AgentArgs {
    /// Where servers started by this agent get their private directories.
    #[arg(long, value_name = "DIR", default_value = "/var/tmp/scalelab")]
    pub workdir: PathBuf,
}

pub fn run(a: &AgentArgs, shutdown: &scalelab::shutdown::Shutdown) -> anyhow::Result<i32> {
    Ok(scalelab::remote::agent::run(a.workdir.clone(), shutdown))
}
