//! The agent protocol: one JSON object per line each way. Every request
//! carries the protocol version `v`; an agent of another version answers
//! with an error naming both versions and exits.

use super::wire::WireResult;
use crate::load::LoadSpec;
use crate::probe::{Fingerprint, ProbeData};
use crate::record::server::DatasetInfo;
use serde::{Deserialize, Serialize};

/// Bumped on any incompatible change to [`Request`] or [`Reply`].
pub const PROTOCOL_VERSION: u32 = 1;

/// What the coordinator sends: the version and one operation.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    pub v: u32,
    #[serde(flatten)]
    pub request: Request,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// First message: the agent answers with its version and facts.
    Hello,
    /// The agent's realtime clock, for the offset estimate.
    Clock,
    /// Start (or restart) the server under test on this host.
    StartServer(ServerRequest),
    ServerStatus,
    StopServer,
    /// Start sampling the server (and this host) now.
    ProbeStart {
        interval_ms: u64,
        /// The energy source (`[probe] energy`); absent from an older
        /// coordinator: `auto`.
        #[serde(default)]
        energy: crate::probe::energy::EnergyConfig,
        /// How the server's system calls are counted (`[probe]
        /// syscalls`); absent from an older coordinator: not counted.
        #[serde(default)]
        syscalls: crate::probe::work::SyscallMode,
    },
    /// Stop sampling and return what was measured.
    ProbeStop,
    /// This host's environment fingerprint.
    Fingerprint,
    /// Run one load and return its result.
    RunLoad(LoadRequest),
    /// Stop the load in progress at once (sent while `RunLoad` runs).
    Cancel,
    /// Stop the server and exit.
    Exit,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerRequest {
    pub kind: String,
    /// The server's settings table, as TOML text.
    pub settings: String,
    pub server_cpus: Option<Vec<usize>>,
    pub server_memory: Option<u64>,
    /// The dataset the workload declares, for the server to hold.
    #[serde(default)]
    pub dataset: Option<crate::model::Dataset>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoadRequest {
    pub kind: String,
    /// The load's kind-specific settings, as TOML text.
    pub settings: String,
    pub endpoint: String,
    pub spec: LoadSpec,
    /// Start generating load at this instant of the agent's own clock (ns
    /// since the Unix epoch); `None`: at once.
    pub start_at_ns: Option<i64>,
    /// Non-loopback addresses this load may go to (the `[hosts]` the
    /// coordinator checked). Anything else is refused, as locally.
    pub allowed: Vec<std::net::IpAddr>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerInfo {
    pub endpoint: String,
    pub version: Option<String>,
    pub config: Option<String>,
    pub dataset: Option<DatasetInfo>,
    pub root_pid: Option<u32>,
    pub placement: crate::placement::PlacementFacts,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Hello {
        protocol: u32,
        version: String,
        hostname: String,
        cpus: usize,
        /// The agent's PID on its host: a reconnect stops this agent if it
        /// outlived its session (a partition that healed). Absent from
        /// agents before it.
        #[serde(default)]
        pid: Option<u32>,
    },
    Clock {
        unix_ns: i64,
    },
    ServerStarted(ServerInfo),
    ServerStatus {
        running: bool,
    },
    Done,
    Probe(Box<ProbeData>),
    Fingerprint(Box<Fingerprint>),
    Load(Box<LoadReply>),
    Error {
        message: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
pub struct LoadReply {
    pub result: WireResult,
    /// When the measured window began on the agent's clock (ns since the
    /// epoch), so the coordinator can report the clients' start skew.
    pub started_ns: i64,
}

/// Serializes a request as one line.
pub fn request_line(request: Request) -> String {
    let mut s = serde_json::to_string(&Envelope {
        v: PROTOCOL_VERSION,
        request,
    })
    .unwrap_or_default();
    s.push('\n');
    s
}

/// Parses a request line; a version mismatch or a malformed line is the
/// error text the agent sends back.
pub fn parse_request(line: &str) -> Result<Request, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("malformed request: {e}"))?;
    let v = value.get("v").and_then(serde_json::Value::as_u64);
    if v != Some(PROTOCOL_VERSION as u64) {
        return Err(format!(
            "protocol version mismatch: the coordinator speaks {}, this agent ({}) speaks {PROTOCOL_VERSION}",
            v.map_or("no version".to_string(), |v| v.to_string()),
            env!("CARGO_PKG_VERSION")
        ));
    }
    serde_json::from_value::<Envelope>(value)
        .map(|e| e.request)
        .map_err(|e| format!("malformed request: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_with_their_version() {
        let line = request_line(Request::ProbeStart {
            interval_ms: 250,
            energy: Default::default(),
            syscalls: crate::probe::work::SyscallMode::Exact,
        });
        assert!(line.contains("\"v\":1"), "{line}");
        match parse_request(&line).unwrap() {
            Request::ProbeStart {
                interval_ms,
                syscalls,
                ..
            } => {
                assert_eq!(interval_ms, 250);
                assert_eq!(syscalls, crate::probe::work::SyscallMode::Exact);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn another_version_is_named() {
        let e = parse_request(r#"{"v":99,"op":"hello"}"#).unwrap_err();
        assert!(e.contains("99") && e.contains("mismatch"), "{e}");
        let e = parse_request(r#"{"op":"hello"}"#).unwrap_err();
        assert!(e.contains("no version"), "{e}");
        assert!(parse_request("not json").unwrap_err().contains("malformed"));
    }
}
