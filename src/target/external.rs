//! external lifecycle.
use super::*;
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSettings {}
impl ExternalSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, TargetError> {
        parse_settings("external", t)
    }
}
pub struct External;
impl External {
    pub fn new(t: &toml::Table) -> Result<Self, TargetError> {
        ExternalSettings::parse(t)?;
        Err(TargetError::Start {
            kind: "external",
            message: "not yet".into(),
        })
    }
}
impl Target for External {
    fn kind(&self) -> &'static str {
        "external"
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
