//! The PostgreSQL [`SetupSession`]: one [`Client`] connection a managed
//! server is checked, loaded with pgbench's dataset and described through.

use super::client::Client;
use super::{dataset, ConnConfig};
use crate::model::dataset::unsupported;
use crate::model::{Dataset, Protocol, SetupAddr, SetupSession};

/// Connects to the libpq connection string `addr.uri`.
pub fn connect(addr: &SetupAddr<'_>) -> Result<Box<dyn SetupSession>, String> {
    let cfg = ConnConfig::parse_with_env(addr.uri, |_| None).map_err(|e| e.to_string())?;
    let client = Client::connect(&cfg, addr.timeout).map_err(|e| e.to_string())?;
    Ok(Box::new(PgSetup { client }))
}

struct PgSetup {
    client: Client,
}

impl SetupSession for PgSetup {
    fn ready(&mut self) -> Result<(), String> {
        self.client.execute("select 1").map_err(|e| e.to_string())
    }

    /// pgbench's tables; any other dataset is refused (so a new dataset
    /// needs no line here).
    fn load(&mut self, data: &Dataset) -> Result<(), String> {
        let Dataset::Pgbench { scale } = *data else {
            return Err(unsupported(Protocol::POSTGRES, data));
        };
        dataset::create(&mut self.client, scale)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn size(&mut self) -> Result<u64, String> {
        dataset::database_size(&mut self.client).map_err(|e| e.to_string())
    }

    /// PostgreSQL tells its non-default settings itself (`pg_settings`), so
    /// `names` is not needed.
    fn settings_dump(&mut self, _names: &[String]) -> Result<String, String> {
        let sql = "select name, setting, coalesce(unit, '') from pg_settings \
                   where source not in ('default', 'override') order by name";
        let rows = self.client.query(sql).map_err(|e| e.to_string())?;
        let mut out = String::from("\n# Effective non-default settings (pg_settings):\n");
        for row in rows {
            let col = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
            out.push_str(&format!("# {} = {}{}\n", col(0), col(1), col(2)));
        }
        Ok(out)
    }
}
