//! postgres lifecycle.
use super::*;
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSettings {}
impl PostgresSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, TargetError> {
        parse_settings("postgres", t)
    }
}
pub struct Postgres;
impl Postgres {
    pub fn new(t: &toml::Table, _base: &Path) -> Result<Self, TargetError> {
        PostgresSettings::parse(t)?;
        Err(TargetError::Start {
            kind: "postgres",
            message: "not yet".into(),
        })
    }
}
impl Target for Postgres {
    fn kind(&self) -> &'static str {
        "postgres"
    }
    fn start(&mut self, _p: &Placement, _s: &Shutdown) -> Result<Endpoint, TargetError> {
        unimplemented!()
    }
    fn stop(&mut self) -> Result<(), TargetError> {
        Ok(())
    }
    fn is_running(&self) -> bool {
        false
    }
    fn root_pid(&self) -> Option<u32> {
        None
    }
    fn version(&self) -> Option<String> {
        None
    }
    fn effective_config(&self) -> Option<String> {
        None
    }
}
