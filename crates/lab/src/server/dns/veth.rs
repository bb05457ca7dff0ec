//! The DNS lab's veth path, for a workload that asks for one (the xdp
//! generator, which has no path over loopback): a client namespace joined
//! to the lab's by one veth pair, with addresses from 198.18.0.0/15 and
//! static neighbours (no ARP), IPv6 off on both ends. The client
//! namespace holds only `lo` and its end of the pair, so nothing the load
//! sends can go anywhere but the lab; the lab gains only the other end, so
//! the resolvers still reach nothing past their namespace.
//!
//! The pair goes with the namespaces: deleting either deletes it.

use super::ServerError;
use crate::sys::netns::Netns;
use std::process::Command;

/// The lab's end of the pair: the target also listens here.
pub const LAB_ADDR: &str = "198.19.254.2";
/// The client's end.
pub const CLIENT_ADDR: &str = "198.19.254.1";
/// The pair's network (what the resolvers' ACLs let in).
pub const NET: &str = "198.19.254.0/24";
const PREFIX: &str = "/24";
/// Interface names, each in its own namespace.
const LAB_IF: &str = "lab0";
const CLIENT_IF: &str = "cli0";
/// Fixed MACs, so each side's neighbour entry is written, not learned.
const LAB_MAC: &str = "02:00:c6:13:fe:02";
const CLIENT_MAC: &str = "02:00:c6:13:fe:01";

fn ip(kind: &'static str, args: &[&str]) -> Result<(), ServerError> {
    let fail = |message: String| ServerError::Start { kind, message };
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| fail(format!("could not run `ip` (install iproute2): {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(fail(format!(
        "building the lab's veth path: `ip {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// A client namespace joined to `lab` by the veth pair. `kind` names the
/// server kind in errors.
pub fn client(kind: &'static str, lab: &Netns) -> Result<Netns, ServerError> {
    let client = Netns::create("dnsc").map_err(|e| ServerError::Start {
        kind,
        message: e.to_string(),
    })?;
    let (l, c) = (lab.name(), client.name());
    ip(
        kind,
        &[
            "-n", c, "link", "add", CLIENT_IF, "address", CLIENT_MAC, "type", "veth", "peer",
            "name", LAB_IF, "address", LAB_MAC, "netns", l,
        ],
    )?;
    let ends = [
        (c, CLIENT_IF, CLIENT_ADDR, LAB_ADDR, LAB_MAC),
        (l, LAB_IF, LAB_ADDR, CLIENT_ADDR, CLIENT_MAC),
    ];
    for (ns, ifname, addr, peer, peer_mac) in ends {
        ip(
            kind,
            &["-n", ns, "link", "set", ifname, "addrgenmode", "none"],
        )?;
        ip(
            kind,
            &[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{addr}{PREFIX}"),
                "dev",
                ifname,
            ],
        )?;
        ip(kind, &["-n", ns, "link", "set", ifname, "up"])?;
        ip(
            kind,
            &[
                "-n",
                ns,
                "neigh",
                "replace",
                peer,
                "lladdr",
                peer_mac,
                "dev",
                ifname,
                "nud",
                "permanent",
            ],
        )?;
    }
    Ok(client)
}
