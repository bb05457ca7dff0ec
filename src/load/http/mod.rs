//! http load driver.
use crate::load::{Driver, LoadError, LoadResult, LoadSpec};
use crate::shutdown::Shutdown;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {}
impl HttpSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, LoadError> {
        crate::load::parse_settings(t)
    }
}
pub struct HttpDriver;
impl HttpDriver {
    pub fn from_settings(t: &toml::Table, _endpoint: &str) -> Result<Self, LoadError> {
        HttpSettings::parse(t)?;
        Ok(HttpDriver)
    }
}
impl Driver for HttpDriver {
    fn name(&self) -> &'static str {
        "http"
    }
    fn run(&self, _spec: &LoadSpec, _s: &Shutdown) -> Result<LoadResult, LoadError> {
        Err(LoadError::Setup("not yet".into()))
    }
}
