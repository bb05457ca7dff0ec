//! Kernel counters read *inside* a network namespace: `/proc/net/snmp` (IP
//! forwarding and UDP counters) and `/proc/net/dev` (the counters `ip -s
//! link` prints), for the router lab's reconciliation.
//!
//! The namespace is joined, and its files read, through
//! [`crate::procfs::netns`]; the texts are parsed by [`crate::procfs::net`].

use crate::procfs::net::{parse_net_dev, table_value, NetCounters};
use crate::procfs::netns::{in_netns, read_own_net_file, NetnsError};
use serde::{Deserialize, Serialize};

/// The counters of one namespace at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NsCounters {
    /// The IP layer: forwarded, delivered and dropped datagrams.
    pub ip: IpCounters,
    /// The UDP layer: datagrams in and out, and the socket-buffer drops.
    pub udp: UdpCounters,
    /// Per interface, loopback left out.
    pub links: Vec<LinkCounters>,
}

/// The `Ip:` line of `/proc/net/snmp` (RFC 4293 ipSystemStats names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpCounters {
    /// `InReceives`: datagrams received from every interface, errors included.
    pub in_receives: u64,
    /// `InHdrErrors`: discarded for a bad header (checksum, version, TTL exceeded).
    pub in_hdr_errors: u64,
    /// `InAddrErrors`: discarded for a destination address that is not valid here.
    pub in_addr_errors: u64,
    /// `ForwDatagrams`: datagrams this namespace forwarded (the router's figure).
    pub forw_datagrams: u64,
    /// `InDiscards`: good datagrams dropped for lack of resources.
    pub in_discards: u64,
    /// `InDelivers`: delivered to a local protocol (UDP, TCP, ICMP).
    pub in_delivers: u64,
    /// `OutRequests`: datagrams local protocols handed to IP to send (forwarded ones not
    /// counted).
    pub out_requests: u64,
    /// `OutDiscards`: outgoing datagrams dropped for lack of resources.
    pub out_discards: u64,
    /// `OutNoRoutes`: dropped because no route led to the destination.
    pub out_no_routes: u64,
}

/// The `Udp:` line of `/proc/net/snmp`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UdpCounters {
    /// `InDatagrams`: delivered to a UDP socket.
    pub in_datagrams: u64,
    /// `NoPorts`: received for a port nobody listens on.
    pub no_ports: u64,
    /// `InErrors`: received but not deliverable (bad checksum, full buffer; includes
    /// `rcvbuf_errors`).
    pub in_errors: u64,
    /// `OutDatagrams`: sent.
    pub out_datagrams: u64,
    /// `RcvbufErrors`: dropped because a socket's receive buffer was full.
    pub rcvbuf_errors: u64,
    /// `SndbufErrors`: not sent because a socket's send buffer was full.
    pub sndbuf_errors: u64,
}

/// One interface's `ip -s link` counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkCounters {
    /// The interface's name.
    pub iface: String,
    /// Packets received.
    pub rx_packets: u64,
    /// Received packets the kernel dropped (no buffer, queue full).
    pub rx_dropped: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Packets dropped on the way out (queue full, no carrier).
    pub tx_dropped: u64,
}

impl NsCounters {
    /// Reads the namespace's counters (on a thread that joins it).
    pub fn read(name: &str) -> Result<NsCounters, NetnsError> {
        in_netns(name, || {
            let snmp = read_own_net_file(name, "snmp")?;
            let dev = read_own_net_file(name, "dev")?;
            Ok(NsCounters::parse(&snmp, &dev))
        })
    }

    /// Builds the counters from the texts of `/proc/net/snmp` and `/proc/net/dev`.
    pub fn parse(snmp: &str, dev: &str) -> NsCounters {
        let ip = |k: &str| table_value(snmp, "Ip", k).unwrap_or(0);
        let udp = |k: &str| table_value(snmp, "Udp", k).unwrap_or(0);
        NsCounters {
            ip: IpCounters {
                in_receives: ip("InReceives"),
                in_hdr_errors: ip("InHdrErrors"),
                in_addr_errors: ip("InAddrErrors"),
                forw_datagrams: ip("ForwDatagrams"),
                in_discards: ip("InDiscards"),
                in_delivers: ip("InDelivers"),
                out_requests: ip("OutRequests"),
                out_discards: ip("OutDiscards"),
                out_no_routes: ip("OutNoRoutes"),
            },
            udp: UdpCounters {
                in_datagrams: udp("InDatagrams"),
                no_ports: udp("NoPorts"),
                in_errors: udp("InErrors"),
                out_datagrams: udp("OutDatagrams"),
                rcvbuf_errors: udp("RcvbufErrors"),
                sndbuf_errors: udp("SndbufErrors"),
            },
            links: parse_net_dev(dev)
                .into_iter()
                .filter(|c| c.iface != "lo")
                .map(LinkCounters::from)
                .collect(),
        }
    }

    /// What changed from `before` to `self` (counters only grow; a
    /// recreated interface counts from zero).
    pub fn since(&self, before: &NsCounters) -> NsCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let (a, b) = (&self.ip, &before.ip);
        let (u, v) = (&self.udp, &before.udp);
        NsCounters {
            ip: IpCounters {
                in_receives: d(a.in_receives, b.in_receives),
                in_hdr_errors: d(a.in_hdr_errors, b.in_hdr_errors),
                in_addr_errors: d(a.in_addr_errors, b.in_addr_errors),
                forw_datagrams: d(a.forw_datagrams, b.forw_datagrams),
                in_discards: d(a.in_discards, b.in_discards),
                in_delivers: d(a.in_delivers, b.in_delivers),
                out_requests: d(a.out_requests, b.out_requests),
                out_discards: d(a.out_discards, b.out_discards),
                out_no_routes: d(a.out_no_routes, b.out_no_routes),
            },
            udp: UdpCounters {
                in_datagrams: d(u.in_datagrams, v.in_datagrams),
                no_ports: d(u.no_ports, v.no_ports),
                in_errors: d(u.in_errors, v.in_errors),
                out_datagrams: d(u.out_datagrams, v.out_datagrams),
                rcvbuf_errors: d(u.rcvbuf_errors, v.rcvbuf_errors),
                sndbuf_errors: d(u.sndbuf_errors, v.sndbuf_errors),
            },
            links: self
                .links
                .iter()
                .map(|l| {
                    let old = before.link(&l.iface).cloned().unwrap_or_default();
                    LinkCounters {
                        iface: l.iface.clone(),
                        rx_packets: d(l.rx_packets, old.rx_packets),
                        rx_dropped: d(l.rx_dropped, old.rx_dropped),
                        tx_packets: d(l.tx_packets, old.tx_packets),
                        tx_dropped: d(l.tx_dropped, old.tx_dropped),
                    }
                })
                .collect(),
        }
    }

    /// The counters of interface `iface`.
    pub fn link(&self, iface: &str) -> Option<&LinkCounters> {
        self.links.iter().find(|l| l.iface == iface)
    }
}

impl From<NetCounters> for LinkCounters {
    fn from(c: NetCounters) -> Self {
        LinkCounters {
            iface: c.iface,
            rx_packets: c.rx_packets,
            rx_dropped: c.rx_dropped,
            tx_packets: c.tx_packets,
            tx_dropped: c.tx_dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNMP: &str = "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes\n\
Ip: 1 64 1000 0 0 990 0 10 0 0 3 0\n\
Icmp: InMsgs\nIcmp: 0\n\
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
Udp: 500 1 7 600 7 0 0 0 0\n";
    const DEV: &str = "Inter-|   Receive                            |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n\
    lo: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
    r0: 64000 1000 0 10 0 0 0 0 0 0 0 0 0 0 0 0\n\
    r1: 0 0 0 0 0 0 0 0 63360 990 0 2 0 0 0 0\n";

    #[test]
    fn parses_forwarding_udp_and_link_counters() {
        let c = NsCounters::parse(SNMP, DEV);
        assert_eq!(c.ip.in_receives, 1000);
        assert_eq!(c.ip.forw_datagrams, 990);
        assert_eq!(c.ip.in_discards, 10);
        assert_eq!(c.ip.out_discards, 3);
        assert_eq!(c.udp.in_datagrams, 500);
        assert_eq!(c.udp.rcvbuf_errors, 7);
        assert_eq!(c.links.len(), 2, "loopback is left out");
        assert_eq!(c.link("r0").unwrap().rx_dropped, 10);
        assert_eq!(c.link("r1").unwrap().tx_packets, 990);
        assert_eq!(c.link("r1").unwrap().tx_dropped, 2);
    }

    #[test]
    fn deltas_subtract_field_by_field() {
        let before = NsCounters::parse(SNMP, DEV);
        let mut after = before.clone();
        after.ip.forw_datagrams += 5;
        after.links[0].rx_packets += 5;
        let d = after.since(&before);
        assert_eq!(d.ip.forw_datagrams, 5);
        assert_eq!(d.ip.in_receives, 0);
        assert_eq!(d.link("r0").unwrap().rx_packets, 5);
    }
}
