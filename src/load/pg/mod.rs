//! pg load driver.
use crate::load::{Driver, LoadError, LoadResult, LoadSpec};
use crate::shutdown::Shutdown;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgSettings {}
impl PgSettings {
    pub fn parse(t: &toml::Table) -> Result<Self, LoadError> {
        crate::load::parse_settings(t)
    }
}
pub struct PgDriver;
impl PgDriver {
    pub fn from_settings(t: &toml::Table, _endpoint: &str) -> Result<Self, LoadError> {
        PgSettings::parse(t)?;
        Ok(PgDriver)
    }
}
impl Driver for PgDriver {
    fn name(&self) -> &'static str {
        "pg"
    }
    fn run(&self, _spec: &LoadSpec, _s: &Shutdown) -> Result<LoadResult, LoadError> {
        Err(LoadError::Setup("not yet".into()))
    }
}
