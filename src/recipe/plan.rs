//! The compiled experiment: for every system and sweep point, the kind
//! records, their typed settings (each kind's [`ServerPlan`] and
//! [`LoadPlan`]), the load shape, the dataset and the server's restart
//! key. Validation compiles every (system, point) pair once, so a bad
//! point fails before the run starts; the runner then executes the plan
//! and reads no TOML and looks no kind up by its name.

use super::locate::{refs, Ctx, FORMAT_DOC};
use super::sweep::{resolve, Resolved};
use super::{Experiment, LoadCommon, SpecError};
use crate::load::{LoadKind, LoadPlan};
use crate::model::{Dataset, Host};
use crate::server::{ServerKind, ServerPlan};
use crate::units::Bytes;

/// Every system's compiled points.
pub struct Plan {
    /// One per `[[system]]`, in the order written.
    pub systems: Vec<SystemPlan>,
}

/// One system, compiled.
pub struct SystemPlan {
    /// Its label.
    pub label: String,
    /// Its server kind's registry entry.
    pub server_kind: &'static ServerKind,
    /// Its load kind's registry entry.
    pub load_kind: &'static LoadKind,
    /// The host its server runs on (`user@address`); `None`: this machine.
    pub host: Option<Host>,
    /// Whether its server runs under the host's agent; `false`: a managed
    /// server run over plain ssh by the host's `sh` (`agent = false`).
    pub agent: bool,
    /// Its sweep points, by point index.
    pub points: Vec<PointPlan>,
}

/// One (system, point) pair, compiled: everything one trial needs.
pub struct PointPlan {
    /// The server kind's typed settings at this point, which build the server.
    pub server: Box<dyn ServerPlan>,
    /// The same settings as TOML text, for an agent on the server host
    /// (with the host's address to listen on when the kind takes one),
    /// which compiles them once per start request.
    pub server_text: String,
    /// The load kind's typed settings at this point, which build the driver.
    pub load: Box<dyn LoadPlan>,
    /// The same settings as TOML text, for the client hosts' agents.
    pub load_text: String,
    /// The load settings every driver shares.
    pub common: LoadCommon,
    /// CPUs the server may use; `None`: all.
    pub server_cpus: Option<u32>,
    /// The server's cgroup memory limit; `None`: none.
    pub server_memory: Option<Bytes>,
    /// The dataset the workload declares at this point.
    pub dataset: Option<Dataset>,
    /// Identifies the server's configuration: a server started with
    /// another key is restarted, whatever the restart policy.
    pub restart_key: String,
}

impl SystemPlan {
    /// This system's compiled pair at `point`.
    pub fn at(&self, point: &crate::model::Point) -> &PointPlan {
        &self.points[point.index as usize]
    }
}

impl Plan {
    /// The compiled pair of system `system` at point `point`.
    pub fn point(&self, system: usize, point: &crate::model::Point) -> &PointPlan {
        &self.systems[system].points[point.index as usize]
    }
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<Vec<&str>> = self
            .systems
            .iter()
            .map(|s| s.points.iter().map(|p| p.restart_key.as_str()).collect())
            .collect();
        f.debug_struct("Plan").field("servers", &keys).finish()
    }
}

/// Two plans are equal when every pair's settings (server and load, as
/// compiled from the same text), shape, dataset and host are.
impl PartialEq for Plan {
    fn eq(&self, other: &Self) -> bool {
        let same_point = |a: &PointPlan, b: &PointPlan| {
            (&a.restart_key, &a.load_text, &a.common, &a.dataset)
                == (&b.restart_key, &b.load_text, &b.common, &b.dataset)
        };
        let same_system = |a: &SystemPlan, b: &SystemPlan| {
            a.label == b.label
                && std::ptr::eq(a.server_kind, b.server_kind)
                && std::ptr::eq(a.load_kind, b.load_kind)
                && a.host == b.host
                && a.agent == b.agent
                && a.points.len() == b.points.len()
                && a.points
                    .iter()
                    .zip(&b.points)
                    .all(|(x, y)| same_point(x, y))
        };
        self.systems.len() == other.systems.len()
            && self
                .systems
                .iter()
                .zip(&other.systems)
                .all(|(a, b)| same_system(a, b))
    }
}

/// Compiles every (system, point) pair of `exp` (whose `plan` is not read)
/// through the kinds' own settings parsers, so a typo fails before any
/// server starts. Errors name the file, the line of the setting (in the
/// system, the sweep or the section) and the system.
pub(super) fn compile(cx: &Ctx, exp: &Experiment) -> Result<Plan, SpecError> {
    let points = exp.points();
    let load_kind = crate::load::kind(&exp.load.kind)
        .map_err(|e| cx.err(&["load", "kind"], e.to_string(), FORMAT_DOC))?;
    let mut systems = Vec::with_capacity(exp.systems.len());
    for (si, sys) in exp.systems.iter().enumerate() {
        let server_kind = crate::server::kind(exp.server_kind_of(si))
            .map_err(|e| cx.err(&["server", "kind"], e.to_string(), FORMAT_DOC))?;
        let host = exp.server_host_of(si).cloned();
        let on = Site {
            server_kind,
            load_kind,
            ip: host.as_ref().and_then(Host::ip),
        };
        let mut compiled = Vec::with_capacity(points.len());
        for p in &points {
            compiled.push(compile_point(cx, exp, si, p, &on)?);
        }
        let agent = exp.server_agent_of(si);
        check_agentless(cx, exp, si, (server_kind, agent), &compiled)?;
        systems.push(SystemPlan {
            label: sys.label.clone(),
            server_kind,
            load_kind,
            host,
            agent,
            points: compiled,
        });
    }
    Ok(Plan { systems })
}

/// A system whose host has no agent (`agent = false`) needs a host, and a
/// managed server kind that can run without one.
fn check_agentless(
    cx: &Ctx,
    exp: &Experiment,
    si: usize,
    (kind, agent): (&ServerKind, bool),
    points: &[PointPlan],
) -> Result<(), SpecError> {
    if agent {
        return Ok(());
    }
    let sys = &exp.systems[si];
    let field = if sys.agent.is_some() {
        vec!["system".to_string(), si.to_string(), "agent".into()]
    } else {
        vec!["hosts".to_string(), "agent".into()]
    };
    if exp.server_host_of(si).is_none() {
        return Err(cx.err(
            &refs(&field),
            format!(
                "system `{}`: `agent = false` needs a server host",
                sys.label
            ),
            "give the system `host = \"root@ADDRESS\"`, or leave `agent` out",
        ));
    }
    // A kind that runs under no agent (`external`) runs over ssh anyway.
    if kind.runs_under_agent && points.iter().any(|p| !p.server.runs_bare()) {
        return Err(cx.err(
            &refs(&field),
            format!(
                "system `{}`: `{}` cannot run on a host without an agent",
                sys.label, kind.name
            ),
            "nginx runs without an agent; run this kind under an agent on a Linux host",
        ));
    }
    Ok(())
}

/// The kinds of a system and the address of its server host.
struct Site {
    server_kind: &'static ServerKind,
    load_kind: &'static LoadKind,
    /// The server host's address; `None`: this machine.
    ip: Option<std::net::IpAddr>,
}

/// Resolves and compiles one (system, point) pair.
fn compile_point(
    cx: &Ctx,
    exp: &Experiment,
    si: usize,
    p: &crate::model::Point,
    on: &Site,
) -> Result<PointPlan, SpecError> {
    let sys = &exp.systems[si];
    let locate = |key: &str, section: &str| -> Vec<String> {
        let sys_table = if section == "server" {
            &sys.server
        } else {
            &sys.load
        };
        if sys_table.contains_key(key) {
            vec!["system".into(), si.to_string(), section.into(), key.into()]
        } else if let Some(name) = exp
            .axes
            .iter()
            .map(|a| a.target.name())
            .find(|n| n == key || *n == format!("{section}.{key}"))
        {
            vec!["sweep".into(), name]
        } else {
            vec![section.into(), key.into()]
        }
    };
    let mut r: Resolved = resolve(exp, si, p).map_err(|(k, m)| {
        let section = if k.starts_with("server") {
            "server"
        } else {
            "load"
        };
        let path = locate(&k, section);
        cx.err(
            &refs(&path),
            format!("{m} (system `{}`, {})", sys.label, p.label()),
            FORMAT_DOC,
        )
    })?;
    let restart_key = format!(
        "{}|{:?}|{:?}|{:?}",
        r.server.kind, r.server.settings, r.server_cpus, r.server_memory
    );
    let server_settings = match on.ip {
        Some(ip) if on.server_kind.runs_under_agent => {
            on.server_kind.settings_on_host(&r.server.settings, ip)
        }
        _ => r.server.settings.clone(),
    };
    let server = crate::server::compile(on.server_kind, &server_settings)
        .map_err(|e| setting_error(cx, &e.to_string(), "server", &locate, &sys.label))?;
    let load = crate::load::compile(on.load_kind, &r.load.settings)
        .map_err(|e| setting_error(cx, &e.to_string(), "load", &locate, &sys.label))?;
    if let Some(limit) = load.threads_at_most() {
        match r.common.threads {
            Some(t) if t > limit.threads => {
                return Err(cx.err(
                    &refs(&locate("threads", "load")),
                    format!(
                        "{t} threads (system `{}`, {}): {}",
                        sys.label,
                        p.label(),
                        limit.why
                    ),
                    FORMAT_DOC,
                ))
            }
            Some(_) => {}
            None => r.common.threads = Some(limit.threads),
        }
    }
    let dataset = load.dataset();
    Ok(PointPlan {
        server,
        server_text: toml::to_string(&server_settings).unwrap_or_default(),
        load,
        load_text: toml::to_string(&r.load.settings).unwrap_or_default(),
        common: r.common,
        server_cpus: r.server_cpus,
        server_memory: r.server_memory,
        restart_key: format!("{restart_key}|{dataset:?}"),
        dataset,
    })
}

fn setting_error(
    cx: &Ctx,
    message: &str,
    section: &str,
    locate: &dyn Fn(&str, &str) -> Vec<String>,
    system: &str,
) -> SpecError {
    // The field comes first in backquotes: "unknown field `x`", "`y`: expected
    // ...", "`settings.work_mem`: ..." (a nested path).
    let field = message.split('`').nth(1).unwrap_or("");
    let mut segments = field.split('.').filter(|s| !s.is_empty());
    let path = match segments.next() {
        None => vec![section.to_string()],
        Some(head) => {
            let mut p = locate(head, section);
            p.extend(segments.map(str::to_string));
            p
        }
    };
    cx.err(
        &refs(&path),
        format!("{message} (system `{system}`)"),
        format!("check the {section} settings; {FORMAT_DOC}"),
    )
}
