//! The DNS [`SetupSession`]: the lab's zones are files its servers read at
//! start, so a session only checks that a server answers for them.

use super::ask::ask;
use crate::model::dataset::unsupported;
use crate::model::dns_names::FORWARD_ZONE;
use crate::model::{Dataset, Protocol, SetupAddr, SetupSession};
use hickory_proto::op::ResponseCode;
use hickory_proto::rr::RecordType;
use std::net::SocketAddr;
use std::time::Duration;

/// A session to the DNS server at `addr.uri` (`ADDR:PORT`), asked from
/// inside `addr.netns`. Nothing is sent until [`SetupSession::ready`].
pub fn connect(addr: &SetupAddr<'_>) -> Result<Box<dyn SetupSession>, String> {
    let server = addr
        .uri
        .parse()
        .map_err(|e| format!("bad DNS server address {}: {e}", addr.uri))?;
    Ok(Box::new(DnsSetup {
        server,
        netns: addr.netns.map(str::to_string),
        timeout: addr.timeout,
    }))
}

struct DnsSetup {
    server: SocketAddr,
    netns: Option<String>,
    timeout: Duration,
}

impl SetupSession for DnsSetup {
    /// Asks for the name server's own A record, `ns.bench.test.`.
    fn ready(&mut self) -> Result<(), String> {
        let name = format!("ns.{FORWARD_ZONE}");
        match ask(
            self.netns.as_deref(),
            self.server,
            &name,
            RecordType::A,
            self.timeout,
        )? {
            ResponseCode::NoError => Ok(()),
            rc => Err(format!("it answered {rc:?}")),
        }
    }

    /// The zones are written as files before the servers start; nothing is
    /// loaded over the wire.
    fn load(&mut self, data: &Dataset) -> Result<(), String> {
        Err(unsupported(Protocol::DNS, data))
    }

    fn size(&mut self) -> Result<u64, String> {
        Err("a DNS server does not report its zones' size".into())
    }

    fn settings_dump(&mut self, _names: &[String]) -> Result<String, String> {
        Err("a DNS server does not report its settings".into())
    }
}
