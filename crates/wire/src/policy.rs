//! Where load may go. Load goes only to loopback, or to a host that the
//! experiment names in `[hosts]` (the coordinator, or the agent it started,
//! adds those addresses with [`allow`] and their names with [`allow_names`]
//! before any packet is sent). Every driver asks [`check`] before it opens a
//! socket, and turns a target's host into an address with [`resolve`], which
//! asks no resolver for a name the experiment did not name: a name sent to
//! the system resolver is itself a packet that may leave the machine.

use crate::sys::route::Route;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::Mutex;

static ALLOWED: Mutex<Vec<IpAddr>> = Mutex::new(Vec::new());
static ALLOWED_NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Permits load to these addresses for the rest of this process.
pub fn allow(addrs: &[IpAddr]) {
    let mut allowed = ALLOWED.lock().unwrap_or_else(|p| p.into_inner());
    for a in addrs {
        if !allowed.contains(a) {
            allowed.push(*a);
        }
    }
}

/// Permits these host names (from `[hosts]`) to be resolved, and load to
/// the addresses they resolve to, for the rest of this process.
pub fn allow_names(names: &[String]) {
    let mut allowed = ALLOWED_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    for n in names {
        let n = canonical_name(n);
        if !allowed.contains(&n) {
            allowed.push(n);
        }
    }
}

/// A host name compared without case and without its final dot.
fn canonical_name(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

/// Whether `host` is `localhost` (any case, with or without the final dot),
/// which scalelab maps to 127.0.0.1 itself, without a resolver.
pub fn is_localhost(host: &str) -> bool {
    canonical_name(host) == "localhost"
}

/// Whether `[hosts]` names `host` ([`allow_names`]).
fn is_named(host: &str) -> bool {
    ALLOWED_NAMES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(&canonical_name(host))
}

/// The address of `host` (an IP address, `[v6]`, `localhost`, or a name
/// the experiment's `[hosts]` names) at `port`, checked by [`check`]. Any
/// other name is refused before a resolver is asked, so no packet leaves
/// for it.
pub fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        check(ip)?;
        return Ok(SocketAddr::new(ip, port));
    }
    if is_localhost(bare) {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if !is_named(bare) {
        return Err(format!(
            "`{bare}` is a host name that the experiment does not name, and scalelab does not \
             ask a resolver before it knows where load goes; use an IP address (127.0.0.1 \
             for this machine), `localhost`, or a host named in the experiment's [hosts]"
        ));
    }
    let addr = (bare, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{bare}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{bare}` resolves to no address"))?;
    allow(&[addr.ip()]);
    Ok(addr)
}

/// Whether `ip` is loopback (v4, v6, or v4-mapped loopback).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v| v.is_loopback()),
    }
}

/// Whether `ip` is in 198.18.0.0/15, the range RFC 2544 (and RFC 5735,
/// section 4) sets aside for benchmarking: the only addresses the labs
/// scalelab builds, or a sink a user builds for it, may use.
pub fn is_benchmark_range(ip: Ipv4Addr) -> bool {
    u32::from(ip) & 0xfffe_0000 == u32::from(Ipv4Addr::new(198, 18, 0, 0))
}

/// `Ok` unless `host` (a `[hosts]` entry at `ip`) is in the benchmark
/// range and `route`, the kernel's way to it, is not through a lab: an
/// address in 198.18.0.0/15 is benchmark-only, so ssh may reach it only
/// over a veth or bridge on-link (a namespace a lab made, such as
/// `scripts/netns-lab.sh`'s) or as this namespace's own address, never
/// over a gateway or a real NIC. `None`: no route at all.
pub fn check_benchmark_host(host: &str, ip: Ipv4Addr, route: Option<&Route>) -> Result<(), String> {
    if !is_benchmark_range(ip) {
        return Ok(());
    }
    let how = match route {
        Some(r) if r.local => return Ok(()),
        Some(r)
            if r.gateway.is_none() && matches!(r.dev_kind.as_deref(), Some("veth" | "bridge")) =>
        {
            return Ok(())
        }
        None => "there is no route to it".to_string(),
        Some(r) => {
            let dev = r.dev.as_deref().unwrap_or("?");
            match (&r.gateway, &r.dev_kind) {
                (Some(gw), _) => format!("it would be reached via the gateway {gw} on {dev}"),
                (None, Some(kind)) => format!("it would be reached over {dev}, a {kind}"),
                (None, None) => format!("it would be reached over {dev}, a physical interface"),
            }
        }
    };
    Err(format!(
        "host `{host}`: {ip} is in 198.18.0.0/15, the benchmark range, which scalelab reaches \
         only inside a lab's namespaces, and {how}: no lab is up here. Bring the lab up with \
         `eval \"$(scripts/netns-lab.sh up 4)\"` and run scalelab inside its coordinator \
         (`ip netns exec sl-lab-h0 scalelab run ...`; docs/recipes.md says which recipes need \
         it), or name real hosts outside that range"
    ))
}

/// `Ok` for loopback and for addresses permitted by [`allow`]; otherwise a
/// sentence that says why and what to do.
pub fn check(ip: IpAddr) -> Result<(), String> {
    let allowed = ALLOWED.lock().unwrap_or_else(|p| p.into_inner());
    if is_loopback(ip) || allowed.contains(&ip) {
        return Ok(());
    }
    Err(format!(
        "{ip} is not a loopback address; scalelab sends load only to 127.0.0.0/8 or ::1, \
         or to a host named in the experiment's [hosts]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_benchmark_host_is_reached_only_through_a_lab() {
        let ip: Ipv4Addr = "198.18.0.11".parse().unwrap();
        let route = |gateway: Option<&str>, kind: Option<&str>| Route {
            local: false,
            gateway: gateway.map(str::to_string),
            dev: Some("eth0".into()),
            dev_kind: kind.map(str::to_string),
        };
        let h = "root@198.18.0.11";
        assert!(check_benchmark_host(h, ip, Some(&route(None, Some("veth")))).is_ok());
        let e = check_benchmark_host(h, ip, Some(&route(Some("192.0.2.1"), None))).unwrap_err();
        assert!(e.contains("via the gateway 192.0.2.1 on eth0"), "{e}");
        assert!(e.contains("scripts/netns-lab.sh up"), "{e}");
        let e = check_benchmark_host(h, ip, Some(&route(None, None))).unwrap_err();
        assert!(e.contains("a physical interface"), "{e}");
        assert!(check_benchmark_host(h, ip, None).is_err());
        let own = Route {
            local: true,
            ..Route::default()
        };
        assert!(check_benchmark_host(h, ip, Some(&own)).is_ok());
        let real: Ipv4Addr = "10.1.2.3".parse().unwrap();
        assert!(check_benchmark_host("h", real, None).is_ok());
    }

    #[test]
    fn loopback_always_and_others_only_when_named() {
        assert!(check("127.0.0.9".parse().unwrap()).is_ok());
        assert!(check("::ffff:127.0.0.1".parse().unwrap()).is_ok());
        let lab: IpAddr = "198.18.7.7".parse().unwrap();
        let e = check(lab).unwrap_err();
        assert!(e.contains("[hosts]"), "{e}");
        allow(&[lab]);
        assert!(check(lab).is_ok());
        assert!(check("198.18.7.8".parse().unwrap()).is_err());
    }

    #[test]
    fn the_benchmark_range_is_198_18_0_0_slash_15() {
        for ok in ["198.18.0.0", "198.18.43.2", "198.19.255.255"] {
            assert!(is_benchmark_range(ok.parse().unwrap()), "{ok}");
        }
        for no in ["198.17.255.255", "198.20.0.0", "10.0.0.1", "127.0.0.1"] {
            assert!(!is_benchmark_range(no.parse().unwrap()), "{no}");
        }
    }

    #[test]
    fn names_are_refused_unless_localhost_or_named_in_hosts() {
        for local in ["localhost", "LOCALHOST.", "[::1]"] {
            assert!(resolve(local, 80).unwrap().ip().is_loopback(), "{local}");
        }
        let e = resolve("8.8.8.8.nip.io", 80).unwrap_err();
        assert!(
            e.contains("`8.8.8.8.nip.io`") && e.contains("[hosts]"),
            "{e}"
        );
        assert!(resolve("10.1.2.3", 80).is_err());
        assert!(!is_named("lab-server"));
        allow_names(&["Lab-Server.".to_string()]);
        assert!(is_named("lab-server") && is_named("LAB-SERVER."));
    }
}
