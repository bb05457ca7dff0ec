//! Network and memory counters: the two-line tables of `/proc/net/snmp`
//! and `/proc/net/netstat`, the interfaces of `/proc/net/dev`, and the
//! `name value` lines of `/proc/vmstat`; the routes of `/proc/net/route`
//! and the neighbours of `/proc/net/arp`. Pure parsers of the files' text.

use std::net::Ipv4Addr;

/// A value of the two-line tables of `/proc/net/netstat` and
/// `/proc/net/snmp`: a header line `Prefix: Name Name ...` followed by a
/// value line `Prefix: 1 2 ...`. `None` when the table, the name or a
/// number is missing. `Udp` is not `UdpLite`: the prefix ends at its colon.
pub fn table_value(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let tag = format!("{prefix}:");
    let mut lines = text.lines().filter(|l| l.starts_with(&tag));
    while let (Some(head), Some(values)) = (lines.next(), lines.next()) {
        let names = head.split_ascii_whitespace().skip(1);
        let vals = values.split_ascii_whitespace().skip(1);
        if let Some((_, v)) = names.zip(vals).find(|(n, _)| *n == name) {
            return v.parse().ok();
        }
    }
    None
}

/// A `name value` line of `/proc/vmstat`.
pub fn vmstat_value(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (n, v) = l.split_once(' ')?;
        (n == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// Cumulative counters of one interface (`/proc/net/dev`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetCounters {
    /// The interface's name.
    pub iface: String,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets the interface dropped on receive (`ip -s link` RX dropped).
    pub rx_dropped: u64,
    /// Packets the interface dropped on transmit (`ip -s link` TX dropped).
    pub tx_dropped: u64,
}

/// Parses `/proc/net/dev`: two header lines, then `iface: rx_bytes
/// rx_packets errs drop fifo frame compressed multicast tx_bytes tx_packets
/// errs drop ...`.
pub fn parse_net_dev(text: &str) -> Vec<NetCounters> {
    text.lines()
        .filter_map(|line| {
            let (iface, rest) = line.split_once(':')?;
            let v: Vec<u64> = rest
                .split_ascii_whitespace()
                .map(|f| f.parse().unwrap_or(0))
                .collect();
            if v.len() < 10 {
                return None;
            }
            Some(NetCounters {
                iface: iface.trim().to_string(),
                rx_bytes: v[0],
                rx_packets: v[1],
                tx_bytes: v[8],
                tx_packets: v[9],
                rx_dropped: v[3],
                tx_dropped: v[11],
            })
        })
        .collect()
}

/// One line of `/proc/net/route`: interface, destination, gateway, mask.
fn parse_route(line: &str) -> Option<(String, u32, u32, u32)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let hex = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::from_be);
    Some((
        f.first()?.to_string(),
        hex(f.get(1)?)?,
        hex(f.get(2)?)?,
        hex(f.get(7)?)?,
    ))
}

/// The longest-prefix route to `dest` in a `/proc/net/route` table:
/// (interface, gateway or `None` when on-link).
pub fn route(table: &str, dest: Ipv4Addr) -> Option<(String, Option<Ipv4Addr>)> {
    let d = u32::from(dest);
    table
        .lines()
        .skip(1)
        .filter_map(parse_route)
        .filter(|(_, net, _, mask)| d & mask == net & mask)
        .max_by_key(|(_, _, _, mask)| mask.count_ones())
        .map(|(ifname, _, gw, _)| (ifname, (gw != 0).then(|| Ipv4Addr::from(gw))))
}

/// The MAC of `ip` on `ifname` in a `/proc/net/arp` table, if resolved.
pub fn neighbour(table: &str, ip: Ipv4Addr, ifname: &str) -> Option<[u8; 6]> {
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let complete = f
            .get(2)
            .and_then(|x| u32::from_str_radix(x.trim_start_matches("0x"), 16).ok())?
            & 2
            != 0;
        if f.first()?.parse::<Ipv4Addr>().ok()? != ip || f.get(5)? != &ifname || !complete {
            return None;
        }
        parse_mac(f.get(3)?)
    })
}

/// A MAC address (`02:00:00:00:00:02`).
fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut mac = [0u8; 6];
    let mut parts = s.split(':');
    for b in &mut mac {
        *b = u8::from_str_radix(parts.next()?, 16).ok()?;
    }
    parts.next().is_none().then_some(mac)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shapes captured from Linux 6.1 on the project VM (shortened).
    const NETSTAT: &str = "\
TcpExt: SyncookiesSent SyncookiesRecv ListenOverflows ListenDrops TCPBacklogDrop
TcpExt: 0 0 1379 1401 7
IpExt: InNoRoutes InTruncatedPkts
IpExt: 0 0
";
    const SNMP: &str = "\
Ip: Forwarding DefaultTTL
Ip: 1 64
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors
Udp: 98765 3 412 98000 400 0
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors
UdpLite: 0 0 0 0 0 0
";

    #[test]
    fn netstat_and_snmp_tables() {
        assert_eq!(
            table_value(NETSTAT, "TcpExt", "ListenOverflows"),
            Some(1379)
        );
        assert_eq!(table_value(NETSTAT, "TcpExt", "TCPBacklogDrop"), Some(7));
        assert_eq!(table_value(NETSTAT, "IpExt", "InTruncatedPkts"), Some(0));
        assert_eq!(table_value(NETSTAT, "TcpExt", "Nope"), None);
        // Udp, not UdpLite, whose header starts the same way.
        assert_eq!(table_value(SNMP, "Udp", "RcvbufErrors"), Some(400));
        assert_eq!(table_value(SNMP, "Udp", "InDatagrams"), Some(98765));
        assert_eq!(table_value(SNMP, "Ip", "DefaultTTL"), Some(64));
        assert_eq!(table_value("", "Udp", "InErrors"), None);
    }

    #[test]
    fn vmstat_lines() {
        let vm = "pgpgin 10\npswpin 42\npswpout 7\n";
        assert_eq!(vmstat_value(vm, "pswpin"), Some(42));
        assert_eq!(vmstat_value(vm, "pswp"), None);
    }

    #[test]
    fn net_dev_bytes_packets_and_drops() {
        let text = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0
  eth0: 159684749    4013    0    5    0     0          0         0   221306    2449    0    2    0     0       0          0
";
        let c = parse_net_dev(text);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].iface, "lo");
        assert_eq!(c[1].rx_bytes, 159684749);
        assert_eq!(c[1].tx_packets, 2449);
        assert_eq!((c[1].rx_dropped, c[1].tx_dropped), (5, 2));
    }

    const ROUTES: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00000000\t0100A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
        veth0\t000012C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";

    #[test]
    fn the_longest_prefix_wins_and_on_link_has_no_gateway() {
        let on_link = route(ROUTES, Ipv4Addr::new(198, 18, 0, 2)).unwrap();
        assert_eq!(on_link, ("veth0".to_string(), None));
        let via = route(ROUTES, Ipv4Addr::new(10, 1, 2, 3)).unwrap();
        assert_eq!(
            via,
            ("eth0".to_string(), Some(Ipv4Addr::new(192, 168, 0, 1)))
        );
    }

    #[test]
    fn only_a_complete_entry_on_that_interface_gives_a_mac() {
        let arp =
            "IP address       HW type     Flags       HW address            Mask     Device\n\
            198.18.0.2       0x1         0x2         02:00:00:00:00:02     *        veth0\n\
            198.18.0.3       0x1         0x0         00:00:00:00:00:00     *        veth0\n";
        let ip = |d| Ipv4Addr::new(198, 18, 0, d);
        assert_eq!(neighbour(arp, ip(2), "veth0"), Some([2, 0, 0, 0, 0, 2]));
        assert_eq!(neighbour(arp, ip(2), "eth0"), None);
        assert_eq!(neighbour(arp, ip(3), "veth0"), None);
    }
}
