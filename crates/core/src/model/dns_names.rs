//! The DNS lab's dataset: its synthetic names, shared by the zones the
//! authoritative server serves (`server::dns`) and the query sets drawn
//! from them (`load::dns`).
//!
//! Host `i` is `h<i>.bench.test.` with the address `198.18.0.0 + i` (the
//! benchmarking range, RFC 2544), and that address's reverse name lives in
//! one `in-addr.arpa` zone per /16: `18.198.in-addr.arpa.` and
//! `19.198.in-addr.arpa.`.

use std::net::Ipv4Addr;

/// The forward zone.
pub const FORWARD_ZONE: &str = "bench.test.";
/// Hosts that fit the 198.18.0.0/15 address space.
pub const MAX_HOSTS: u32 = 1 << 17;
const BASE: u32 = u32::from_be_bytes([198, 18, 0, 0]);

/// `h<i>.bench.test.`
pub fn host_name(i: u32) -> String {
    format!("h{i}.{FORWARD_ZONE}")
}

/// The address of host `i` (`i < MAX_HOSTS`).
pub fn host_addr(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(BASE + i)
}

/// `d.c.b.a.in-addr.arpa.` for `a.b.c.d`.
pub fn reverse_name(a: Ipv4Addr) -> String {
    let [a, b, c, d] = a.octets();
    format!("{d}.{c}.{b}.{a}.in-addr.arpa.")
}

/// The reverse zone holding host `i`'s PTR record.
pub fn reverse_zone_of(i: u32) -> String {
    let [a, b, _, _] = host_addr(i).octets();
    format!("{b}.{a}.in-addr.arpa.")
}

/// Every reverse zone needed for `hosts` hosts.
pub fn reverse_zones(hosts: u32) -> Vec<String> {
    let mut zones: Vec<String> = Vec::new();
    for i in [0, hosts.saturating_sub(1)] {
        let z = reverse_zone_of(i);
        if !zones.contains(&z) {
            zones.push(z);
        }
    }
    zones
}

/// Every zone the lab serves for `hosts` hosts: forward first.
pub fn all_zones(hosts: u32) -> Vec<String> {
    let mut z = vec![FORWARD_ZONE.to_string()];
    z.extend(reverse_zones(hosts));
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_map_to_names_addresses_and_zones() {
        assert_eq!(host_name(7), "h7.bench.test.");
        assert_eq!(host_addr(0), Ipv4Addr::new(198, 18, 0, 0));
        assert_eq!(host_addr(65536 + 258), Ipv4Addr::new(198, 19, 1, 2));
        assert_eq!(reverse_name(host_addr(258)), "2.1.18.198.in-addr.arpa.");
        assert_eq!(reverse_zones(10), vec!["18.198.in-addr.arpa."]);
        assert_eq!(reverse_zones(MAX_HOSTS).len(), 2);
    }
}
