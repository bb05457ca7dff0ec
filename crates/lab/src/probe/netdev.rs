//! `/proc/net/dev` readings (of the sampler's network namespace) turned
//! into per-interface deltas; [`crate::procfs::net`] parses the file.

use super::data::NetDelta;
pub(crate) use crate::procfs::net::{parse_net_dev, NetCounters};

/// Per-interface change from `before` to `after`. An interface that is new
/// (or whose counters went backwards, i.e. it was recreated) counts from 0.
pub fn delta(before: &[NetCounters], after: &[NetCounters]) -> Vec<NetDelta> {
    after
        .iter()
        .map(|a| {
            let b = before
                .iter()
                .find(|b| b.iface == a.iface)
                .filter(|b| b.rx_bytes <= a.rx_bytes && b.tx_bytes <= a.tx_bytes)
                .cloned()
                .unwrap_or_default();
            NetDelta {
                iface: a.iface.clone(),
                rx_bytes: a.rx_bytes.saturating_sub(b.rx_bytes),
                rx_packets: a.rx_packets.saturating_sub(b.rx_packets),
                tx_bytes: a.tx_bytes.saturating_sub(b.tx_bytes),
                tx_packets: a.tx_packets.saturating_sub(b.tx_packets),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "\
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0
  eth0: 159684749    4013    0    0    0     0          0         0   221306    2449    0    0    0     0       0          0
";
    const AFTER: &str = "\
    lo:    5193      39    0    0    0     0          0         0     5193      39    0    0    0     0       0          0
  eth0: 159684749    4013    0    0    0     0          0         0   221406    2450    0    0    0     0       0          0
 veth0:      10       1    0    0    0     0          0         0        0       0    0    0    0     0       0          0
";

    #[test]
    fn deltas_per_interface_new_ones_from_zero() {
        let d = delta(&parse_net_dev(BEFORE), &parse_net_dev(AFTER));
        assert_eq!(d[0].iface, "lo");
        assert_eq!((d[0].rx_bytes, d[0].tx_packets), (2000, 10));
        assert_eq!((d[1].tx_bytes, d[1].rx_bytes), (100, 0));
        assert_eq!((d[2].iface.as_str(), d[2].rx_bytes), ("veth0", 10));
    }
}
