//! Zone files for the lab's names: the forward zone `bench.test.` with one
//! A record per host, and the reverse `in-addr.arpa` zones with their PTRs
//! (the seed resolved client IPs to names). NSD serves them at
//! [`AUTH_ADDR`]; the resolvers' stubs point there.

use crate::model::dns_names as names;
use std::fmt::Write as _;

/// The authoritative server's address inside the lab.
pub const AUTH_ADDR: &str = "127.0.0.2";
/// The resolver's address inside the lab.
pub const RESOLVER_ADDR: &str = "127.0.0.1";
/// A loopback address where nothing listens: the resolvers' root points
/// here, so a resolver started outside the lab still cannot leave.
pub const DEAD_ROOT_ADDR: &str = "127.0.0.9";

/// File name of a zone's file (`bench.test.zone`).
pub fn file_name(zone: &str) -> String {
    format!("{}zone", zone)
}

/// The zone file text for `zone` with `hosts` hosts.
pub fn render(zone: &str, hosts: u32) -> String {
    let mut z = format!(
        "$ORIGIN {zone}\n$TTL 3600\n\
         @ IN SOA ns.{fwd} hostmaster.{fwd} 1 3600 600 86400 3600\n\
         @ IN NS ns.{fwd}\n",
        fwd = names::FORWARD_ZONE
    );
    if zone == names::FORWARD_ZONE {
        let _ = writeln!(z, "ns IN A {AUTH_ADDR}");
        for i in 0..hosts {
            let _ = writeln!(z, "h{i} IN A {}", names::host_addr(i));
        }
    } else {
        for i in (0..hosts).filter(|&i| names::reverse_zone_of(i) == zone) {
            let _ = writeln!(
                z,
                "{} IN PTR {}",
                names::reverse_name(names::host_addr(i)),
                names::host_name(i)
            );
        }
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_hold_every_host() {
        let f = render("bench.test.", 3);
        assert!(f.contains("h2 IN A 198.18.0.2\n"), "{f}");
        assert!(f.contains("ns IN A 127.0.0.2"));
        let r = render("18.198.in-addr.arpa.", 3);
        assert!(
            r.contains("2.0.18.198.in-addr.arpa. IN PTR h2.bench.test.\n"),
            "{r}"
        );
        assert_eq!(file_name("bench.test."), "bench.test.zone");
    }
}
