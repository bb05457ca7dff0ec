//! Each system's server: its kind (its own `server.kind`, else
//! `[server]`'s), which must serve the run's load kind, and its host
//! (`[[system]] host`, else `[hosts] server`), where that kind must be
//! able to run. Errors name the file, the line, the field and the system.

use super::hosts::Hosts;
use super::locate::Ctx;
use super::{Component, SpecError, System};
use crate::model::Host;
use crate::server::ServerKind;

/// Checks every system's server kind and host, and adds the systems' own
/// hosts to `hosts.systems`.
pub(super) fn check(
    cx: &Ctx,
    server: &Component,
    load: &Component,
    systems: &[System],
    hosts: &mut Hosts,
) -> Result<(), SpecError> {
    let load_kind = crate::load::kind(&load.kind)
        .map_err(|e| cx.err(&["load", "kind"], e.to_string(), "see docs/recipes.md"))?;
    for (i, sys) in systems.iter().enumerate() {
        let idx = i.to_string();
        let kind = match sys.server.get("kind") {
            None => crate::server::kind(&server.kind)
                .map_err(|e| cx.err(&["server", "kind"], e.to_string(), "see docs/recipes.md"))?,
            Some(own) => own_kind(cx, &idx, sys, own, load_kind)?,
        };
        if let Some(h) = &sys.host {
            if hosts.server.as_ref() != Some(h) && !hosts.systems.contains(h) {
                hosts.systems.push(h.clone());
            }
        }
        let (host, field): (&Host, Vec<&str>) = match (&sys.host, &hosts.server) {
            (Some(h), _) => (h, vec!["system", &idx, "host"]),
            (None, Some(h)) => (h, vec!["hosts", "server"]),
            (None, None) => continue,
        };
        let settings = if sys.server.contains_key("kind") {
            &sys.server
        } else {
            &server.settings
        };
        let named = (sys.host.is_some()).then_some(sys.label.as_str());
        check_remote_server(cx, &field, kind, settings, host, named)?;
    }
    Ok(())
}

/// A system's own server kind: registered, and serving the load's protocol.
fn own_kind(
    cx: &Ctx,
    idx: &str,
    sys: &System,
    own: &toml::Value,
    load_kind: &crate::load::LoadKind,
) -> Result<&'static ServerKind, SpecError> {
    let field = ["system", idx, "server", "kind"];
    let names = crate::server::kind_names().join(", ");
    let name = own.as_str().ok_or_else(|| {
        cx.err(
            &field,
            format!(
                "system `{}`: expected a server kind name, got {own}",
                sys.label
            ),
            format!("use one of: {names}"),
        )
    })?;
    let kind = crate::server::kind(name).map_err(|e| {
        cx.err(
            &field,
            format!("system `{}`: {e}", sys.label),
            format!("use one of: {names}"),
        )
    })?;
    match kind.serves {
        Some(serves) if serves != load_kind.protocol => Err(cx.err(
            &field,
            format!(
                "system `{}`: server kind `{name}` serves {}, but the run's load kind `{}` speaks {}",
                sys.label,
                serves.name(),
                load_kind.name,
                load_kind.protocol.name()
            ),
            format!(
                "systems may differ in server kind only as long as each serves the load kind `{}`; \
                 compare other workloads in separate runs",
                load_kind.name
            ),
        )),
        _ => Ok(kind),
    }
}

/// A server on another host must be able to listen on that host's address
/// (a capability of its kind, whose settings must then hold with that
/// address), or not run under an agent at all (`external`). `system`
/// names the system whose own host it is.
fn check_remote_server(
    cx: &Ctx,
    field: &[&str],
    kind: &'static ServerKind,
    settings: &toml::Table,
    host: &Host,
    system: Option<&str>,
) -> Result<(), SpecError> {
    let who = system.map_or(String::new(), |s| format!("system `{s}`: "));
    let Some(ip) = host.ip() else {
        return Err(cx.err(
            field,
            format!("{who}`{host}`: the server host must be named by its IP address, which the server listens on and the clients connect to"),
            "write it as \"root@198.18.0.11\"",
        ));
    };
    let fix = match system {
        None => "run it on this machine (remove hosts.server), or use kind = \"external\"",
        Some(_) => "run it on this machine (remove the system's host), or use kind = \"external\"",
    };
    if !kind.runs_under_agent {
        return Ok(());
    }
    if !kind.listens_on_host_address {
        return Err(cx.err(
            field,
            format!(
                "{who}server kind `{}` cannot run on another host: it cannot listen on that host's address",
                kind.name
            ),
            fix,
        ));
    }
    let mut settings = kind.settings_on_host(settings, ip);
    settings.remove("kind");
    crate::server::compile(kind, &settings)
        .map(drop)
        .map_err(|e| {
            cx.err(
                field,
                format!(
                    "{who}server kind `{}` cannot run on another host: {e}",
                    kind.name
                ),
                fix,
            )
        })
}

#[cfg(test)]
mod tests {
    use crate::recipe::{Experiment, SpecError};
    use std::path::Path;

    const BASE: &str = "name = \"t\"\n[hosts]\nclients = [\"root@198.18.0.14\"]\n\
        [server]\nkind = \"nginx\"\nworker_processes = 2\n[load]\nkind = \"http\"\n";

    fn parse(systems: &str) -> Result<Experiment, SpecError> {
        Experiment::parse(Path::new("hosts.toml"), &format!("{BASE}{systems}"), false)
    }

    #[test]
    fn each_system_runs_its_own_kind_on_its_own_host() {
        let exp = parse(
            "[[system]]\nlabel = \"bsd\"\nhost = \"root@198.18.0.11\"\n\
             server = { kind = \"external\", url = \"http://198.18.0.11:8080/\" }\n\
             [[system]]\nlabel = \"linux\"\nhost = \"root@198.18.0.12\"\n",
        )
        .unwrap();
        let plan = &exp.plan.systems;
        assert_eq!(
            (plan[0].server_kind.name, plan[1].server_kind.name),
            ("external", "nginx")
        );
        let hosts: Vec<String> = plan
            .iter()
            .map(|s| s.host.clone().unwrap().to_string())
            .collect();
        assert_eq!(hosts, ["root@198.18.0.11", "root@198.18.0.12"]);
        // Both server hosts are the run's hosts, so load may go to them.
        assert_eq!(exp.hosts.all().len(), 3);
        // The external system does not inherit nginx's settings; the
        // managed one is told to listen on its host's address.
        let p = &exp.points()[0];
        assert!(!exp
            .plan
            .point(0, p)
            .server_text
            .contains("worker_processes"));
        let managed = &exp.plan.point(1, p).server_text;
        assert!(managed.contains("listen = \"198.18.0.12\""), "{managed}");
        assert!(managed.contains("worker_processes = 2"), "{managed}");
    }

    #[test]
    fn a_system_whose_server_does_not_serve_the_load_kind_is_refused() {
        let e = parse(
            "[[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"db\"\nhost = \"root@198.18.0.12\"\n\
             server = { kind = \"postgres\" }\n",
        )
        .unwrap_err();
        assert_eq!(e.field, "system[2].server.kind");
        let text = e.to_string();
        assert!(text.contains("hosts.toml"), "{text}");
        assert!(
            text.contains("system `db`: server kind `postgres` serves the PostgreSQL protocol, but the run's load kind `http` speaks HTTP"),
            "{text}"
        );
        let e = parse("[[system]]\nlabel = \"a\"\nload = { kind = \"pg\" }\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("system `a`: a system cannot change the load kind"),
            "{e}"
        );
    }

    #[test]
    fn a_system_host_is_checked_like_the_server_host_and_named() {
        let e = parse("[[system]]\nlabel = \"a\"\nhost = \"root@\"\n").unwrap_err();
        assert_eq!(e.field, "system[1].host");
        assert!(e.to_string().contains("system `a`"), "{e}");
        let on_host = |server: &str, load: &str| {
            let text = format!(
                "name = \"t\"\n[server]\nkind = \"{server}\"\n[load]\nkind = \"{load}\"\n\
                 [[system]]\nlabel = \"a\"\nhost = \"root@198.18.0.11\"\n"
            );
            Experiment::parse(Path::new("db.toml"), &text, false)
        };
        // MariaDB listens on its host's address (issue 39); NSD does not.
        assert!(on_host("mariadb", "mysql").is_ok());
        let e = on_host("nsd", "dns").unwrap_err();
        assert_eq!(e.field, "system[1].host");
        assert!(
            e.to_string().contains(
                "system `a`: server kind `nsd` cannot run on another host: it cannot listen on that host's address"
            ),
            "{e}"
        );
        let e = parse("[[system]]\nlabel = \"a\"\nhost = \"root@srv\"\n").unwrap_err();
        assert_eq!(e.field, "system[1].host");
        assert!(
            e.to_string().contains("must be named by its IP address"),
            "{e}"
        );
    }
}
