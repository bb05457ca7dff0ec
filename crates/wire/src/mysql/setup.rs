//! The MySQL/MariaDB [`SetupSession`]: one [`Client`] connection a managed
//! server is checked, loaded with sysbench's dataset and described through.

use super::client::Client;
use super::{dataset, MysqlUrl};
use crate::model::dataset::unsupported;
use crate::model::{Dataset, Protocol, SetupAddr, SetupSession};

/// Connects to the `mysql://` URL `addr.uri`.
pub fn connect(addr: &SetupAddr<'_>) -> Result<Box<dyn SetupSession>, String> {
    let url = MysqlUrl::parse(addr.uri).map_err(|e| e.to_string())?;
    let client = Client::connect(&url, addr.timeout).map_err(|e| e.to_string())?;
    Ok(Box::new(MysqlSetup { client }))
}

struct MysqlSetup {
    client: Client,
}

impl SetupSession for MysqlSetup {
    /// The handshake that opened the session is the readiness check.
    fn ready(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn server_version(&self) -> Option<String> {
        Some(self.client.server_version().to_string())
    }

    /// sysbench's tables; any other dataset is refused (so a new dataset
    /// needs no line here).
    fn load(&mut self, data: &Dataset) -> Result<(), String> {
        let Dataset::Sysbench { tables, table_size } = *data else {
            return Err(unsupported(Protocol::MYSQL, data));
        };
        dataset::create(&mut self.client, tables, table_size)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn size(&mut self) -> Result<u64, String> {
        dataset::size(&mut self.client).map_err(|e| e.to_string())
    }

    /// `SHOW GLOBAL VARIABLES` for `names` (the variables the settings set).
    fn settings_dump(&mut self, names: &[String]) -> Result<String, String> {
        let quoted: Vec<String> = names
            .iter()
            .map(|n| format!("'{}'", n.replace('\'', "")))
            .collect();
        let sql = format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
            quoted.join(", ")
        );
        let rows = self.client.query(&sql).map_err(|e| e.to_string())?;
        let mut text = String::from("\n# Effective values (SHOW GLOBAL VARIABLES):\n");
        for row in rows {
            let col = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
            text.push_str(&format!("# {} = {}\n", col(0), col(1)));
        }
        Ok(text)
    }
}
