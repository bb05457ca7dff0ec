//! A server under test on another host: a [`Server`] whose lifecycle runs in
//! that host's agent, with the same guarantees as locally (the agent's own
//! target stops the server; the agent stops it when its session ends).

use super::cluster::SharedAgent;
use super::conn::CALL_TIMEOUT;
use super::protocol::{Reply, Request, ServerInfo, ServerRequest};
use crate::model::Dataset;
use crate::placement::Placement;
use crate::server::{DatasetInfo, Endpoint, Server, ServerError};
use crate::shutdown::Shutdown;
use std::time::Duration;

/// Longest a remote server start may take (a dataset load included).
const START_TIMEOUT: Duration = Duration::from_secs(600);

pub struct RemoteServer {
    agent: SharedAgent,
    request: ServerRequest,
    info: Option<ServerInfo>,
}

impl RemoteServer {
    /// A server of `kind` whose settings (TOML text, compiled by the agent
    /// once per start) already carry `listen` = the host's address.
    pub fn new(
        agent: SharedAgent,
        kind: &str,
        settings: &str,
        server_cpus: Option<Vec<usize>>,
        server_memory: Option<u64>,
    ) -> RemoteServer {
        RemoteServer {
            agent,
            request: ServerRequest {
                kind: kind.to_string(),
                settings: settings.to_string(),
                server_cpus,
                server_memory,
                dataset: None,
            },
            info: None,
        }
    }

    fn call(&self, request: Request, limit: Duration) -> Result<Reply, ServerError> {
        let mut a = super::lock(&self.agent);
        a.call(request, limit).map_err(|e| ServerError::Start {
            kind: "remote",
            message: e.to_string(),
        })
    }
}

impl Server for RemoteServer {
    fn kind(&self) -> &'static str {
        "remote"
    }

    /// The placement is made on the server host by its agent, from the
    /// CPUs and memory in the request; the local one is unused.
    fn start(
        &mut self,
        _placement: &Placement,
        dataset: Option<&Dataset>,
        shutdown: &Shutdown,
    ) -> Result<Endpoint, ServerError> {
        if shutdown.is_triggered() {
            return Err(ServerError::Interrupted);
        }
        let request = ServerRequest {
            dataset: dataset.cloned(),
            ..self.request.clone()
        };
        match self.call(Request::StartServer(request), START_TIMEOUT)? {
            Reply::ServerStarted(info) => {
                let uri = info.endpoint.clone();
                self.info = Some(info);
                Ok(Endpoint { ca_pem: None, uri })
            }
            other => Err(ServerError::Start {
                kind: "remote",
                message: format!("unexpected reply to start_server: {other:?}"),
            }),
        }
    }

    fn stop(&mut self) -> Result<(), ServerError> {
        if self.info.take().is_some() {
            self.call(Request::StopServer, CALL_TIMEOUT)?;
        }
        Ok(())
    }

    fn is_running(&self) -> bool {
        self.info.is_some()
            && matches!(
                self.call(Request::ServerStatus, CALL_TIMEOUT),
                Ok(Reply::ServerStatus { running: true })
            )
    }

    /// The server's processes are on another host: the local probe has no
    /// tree to follow (the runner asks the agent's probe instead).
    fn root_pid(&self) -> Option<u32> {
        None
    }

    fn version(&self) -> Option<String> {
        self.info.as_ref().and_then(|i| i.version.clone())
    }

    fn effective_config(&self) -> Option<String> {
        self.info.as_ref().and_then(|i| i.config.clone())
    }

    fn dataset(&self) -> Option<DatasetInfo> {
        self.info.as_ref().and_then(|i| i.dataset.clone())
    }
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
