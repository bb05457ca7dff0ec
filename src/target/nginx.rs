//! nginx lifecycle.
use super::*;
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NginxSettings {}
impl NginxSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, TargetError> {
        parse_settings("nginx", t)
    }
}
pub struct Nginx;
impl Nginx {
    pub fn new(t: &toml::Table, _base: &Path) -> Result<Self, TargetError> {
        NginxSettings::parse(t)?;
        Err(TargetError::Start {
            kind: "nginx",
            message: "not yet".into(),
        })
    }
}
impl Target for Nginx {
    fn kind(&self) -> &'static str {
        "nginx"
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
