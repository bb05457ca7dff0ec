//! Who is where in a router lab: the namespace, interface and address of
//! the two hosts (A, B) and the router (R) between them.
//!
//! The topology is what the router target hands the packet generator (as
//! its endpoint string). Today every node is a network namespace on this
//! machine; real hosts (issue 8's `[hosts]`) become another [`Node`] place
//! with the same interface names and addresses, and nothing above changes.

use std::net::Ipv4Addr;

/// Addresses from RFC 2544's benchmarking range 198.18.0.0/15: A's side is
/// 198.18.0.0/24, B's side 198.19.0.0/24, and R has `.254` on both.
/// Host A.
pub const A_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The router on A's side.
pub const R_A_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 254);
/// The router on B's side.
pub const R_B_ADDR: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 254);
/// Host B.
pub const B_ADDR: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
/// Prefix length of both subnets.
pub const PREFIX_LEN: u8 = 24;

/// The name under which the router gives the forwarding chart the speed
/// of the link its run names, in Gbit/s (a server figure: the store and
/// the report carry it by this name and read none of it).
pub const LINK_GBIT: &str = "link_gbit";

/// Interface names inside the namespaces (namespaced, so they never clash):
/// A's.
pub const A_IF: &str = "a0";
/// The router's, towards A.
pub const R_A_IF: &str = "r0";
/// The router's, towards B.
pub const R_B_IF: &str = "r1";
/// B's.
pub const B_IF: &str = "b0";

/// One node of the lab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The network namespace the node lives in.
    pub netns: String,
}

/// The three nodes, A — R — B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Host A: sends `a_to_b`, receives `b_to_a`; reaches B via R.
    pub a: Node,
    /// The router under test, the only node that forwards.
    pub r: Node,
    /// Host B: receives `a_to_b`, sends `b_to_a`.
    pub b: Node,
}

impl Topology {
    /// The lab whose namespaces are named `{prefix}-a`, `-r` and `-b`.
    pub fn named(prefix: &str) -> Topology {
        let node = |s: &str| Node {
            netns: format!("{prefix}-{s}"),
        };
        Topology {
            a: node("a"),
            r: node("r"),
            b: node("b"),
        }
    }

    /// The endpoint string: `netns:a=NS,r=NS,b=NS`.
    pub fn to_uri(&self) -> String {
        format!(
            "netns:a={},r={},b={}",
            self.a.netns, self.r.netns, self.b.netns
        )
    }

    /// Reads an endpoint string written by [`Topology::to_uri`].
    pub fn parse(uri: &str) -> Result<Topology, String> {
        let rest = uri.strip_prefix("netns:").ok_or_else(|| {
            format!("`{uri}` is not a router lab (expected `netns:a=..,r=..,b=..`)")
        })?;
        let mut found = [None, None, None];
        for part in rest.split(',') {
            let (key, ns) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` in `{uri}` is not `node=namespace`"))?;
            let slot = match key {
                "a" => 0,
                "r" => 1,
                "b" => 2,
                other => {
                    return Err(format!(
                        "unknown node `{other}` in `{uri}`; nodes are a, r, b"
                    ))
                }
            };
            if ns.is_empty() || ns.contains('/') {
                return Err(format!("`{ns}` is not a namespace name"));
            }
            found[slot] = Some(Node {
                netns: ns.to_string(),
            });
        }
        match found {
            [Some(a), Some(r), Some(b)] => Ok(Topology { a, r, b }),
            _ => Err(format!("`{uri}` must name all three nodes a, r and b")),
        }
    }

    /// The three namespace names, in the order A, R, B.
    pub fn namespaces(&self) -> [&str; 3] {
        [&self.a.netns, &self.r.netns, &self.b.netns]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_round_trips() {
        let t = Topology::named("slr-42-0");
        assert_eq!(t.to_uri(), "netns:a=slr-42-0-a,r=slr-42-0-r,b=slr-42-0-b");
        assert_eq!(Topology::parse(&t.to_uri()).unwrap(), t);
    }

    #[test]
    fn bad_uris_say_what_is_wrong() {
        assert!(Topology::parse("http://x/")
            .unwrap_err()
            .contains("not a router lab"));
        assert!(Topology::parse("netns:a=x,r=y")
            .unwrap_err()
            .contains("all three"));
        assert!(Topology::parse("netns:a=x,q=y")
            .unwrap_err()
            .contains("unknown node"));
    }

    #[test]
    fn addresses_stay_in_the_benchmarking_range() {
        for a in [A_ADDR, R_A_ADDR, R_B_ADDR, B_ADDR] {
            assert_eq!(a.octets()[0], 198);
            assert!(
                matches!(a.octets()[1], 18 | 19),
                "{a} outside 198.18.0.0/15"
            );
        }
    }
}
