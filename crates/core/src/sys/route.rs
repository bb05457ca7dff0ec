//! How the kernel reaches one address from this process's network
//! namespace: `ip -j route get ADDR` (local, or through which device and
//! gateway) and `ip -d -j link show dev DEV` (what kind of device: a lab's
//! `veth` or `bridge`, or a real NIC, which has none).

use std::net::Ipv4Addr;
use std::process::Command;

/// The way to one address, as `ip` reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// The address is this namespace's own (`type local`).
    pub local: bool,
    /// The next hop, when the address is not on-link.
    pub gateway: Option<String>,
    /// The outgoing device; `None` when there is no route.
    pub dev: Option<String>,
    /// The device's kind (`veth`, `bridge`, ...); `None` for a physical
    /// device, which has no `linkinfo`.
    pub dev_kind: Option<String>,
}

/// `ip -j route get`'s answer, without the device's kind.
pub fn parse_route_get(json: &str) -> Option<Route> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let r = v.get(0)?;
    let text = |k: &str| r.get(k).and_then(|x| x.as_str()).map(str::to_string);
    Some(Route {
        local: text("type").as_deref() == Some("local"),
        gateway: text("gateway"),
        dev: text("dev"),
        dev_kind: None,
    })
}

/// The kind in `ip -d -j link show`'s answer (`linkinfo.info_kind`).
pub fn parse_link_kind(json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let kind = v.get(0)?.get("linkinfo")?.get("info_kind")?.as_str()?;
    Some(kind.to_string())
}

fn ip_json(args: &[&str]) -> Option<String> {
    let out = Command::new("ip").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The route to `addr` in this namespace; `None` when there is none.
pub fn route_to(addr: Ipv4Addr) -> Option<Route> {
    let mut r = parse_route_get(&ip_json(&["-j", "route", "get", &addr.to_string()])?)?;
    if let Some(dev) = &r.dev {
        r.dev_kind = ip_json(&["-d", "-j", "link", "show", "dev", dev])
            .as_deref()
            .and_then(parse_link_kind);
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_and_link_kinds_are_read_from_ip_json() {
        // iproute2 6.1, from the root namespace (over the default route)
        // and from a lab host (on-link over its veth).
        let via = r#"[{"dst":"198.18.0.11","gateway":"192.0.2.1","dev":"eth0","prefsrc":"192.0.2.2","flags":[],"uid":0,"cache":[]}]"#;
        let r = parse_route_get(via).unwrap();
        assert_eq!(r.gateway.as_deref(), Some("192.0.2.1"));
        assert_eq!((r.dev.as_deref(), r.local), (Some("eth0"), false));
        let onlink = r#"[{"dst":"198.18.0.11","dev":"eth0","prefsrc":"198.18.0.10","flags":[],"uid":0,"cache":[]}]"#;
        assert_eq!(parse_route_get(onlink).unwrap().gateway, None);
        let local = r#"[{"type":"local","dst":"198.18.0.10","dev":"lo","prefsrc":"198.18.0.10","flags":[],"uid":0,"cache":["local"]}]"#;
        assert!(parse_route_get(local).unwrap().local);
        let veth = r#"[{"ifindex":2,"ifname":"eth0","linkinfo":{"info_kind":"veth"},"mtu":1500}]"#;
        assert_eq!(parse_link_kind(veth).as_deref(), Some("veth"));
        let nic = r#"[{"ifindex":4,"ifname":"eth0","parentbus":"virtio"}]"#;
        assert_eq!(parse_link_kind(nic), None);
    }
}
