//! The registry of setup sessions: one per [`SetupProtocol`], each
//! implemented by the load driver that speaks it. Server targets open their
//! sessions here, so they never import a driver's modules.

use crate::model::{SetupAddr, SetupProtocol, SetupSession};

/// Opens a setup session in `protocol` to `addr`.
pub fn connect(
    protocol: SetupProtocol,
    addr: &SetupAddr<'_>,
) -> Result<Box<dyn SetupSession>, String> {
    match protocol {
        SetupProtocol::Postgres => crate::load::pg::setup::connect(addr),
        SetupProtocol::Mysql => crate::load::mysql::setup::connect(addr),
        SetupProtocol::Dns => crate::load::dns::setup::connect(addr),
    }
}
