//! Kernel counters the limiter reads as deltas over the window: the TCP
//! listen-queue drops of `/proc/PID/net/netstat` and the UDP receive errors
//! of `/proc/PID/net/snmp` (`PID` being the server's root, so they are the
//! counters of the server's network namespace), and swap-in/out of
//! `/proc/vmstat`. [`crate::procfs::net`] parses them; [`Counters::read`]
//! reads the files.

use crate::procfs::net::{table_value, vmstat_value};

/// One reading of every counter; a field is `None` when its file or line
/// could not be read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// `TcpExt: ListenOverflows`.
    pub listen_overflows: Option<u64>,
    /// `TcpExt: ListenDrops`.
    pub listen_drops: Option<u64>,
    /// `TcpExt: TCPBacklogDrop`.
    pub tcp_backlog_drops: Option<u64>,
    /// `Udp: RcvbufErrors`.
    pub udp_rcvbuf_errors: Option<u64>,
    /// `Udp: InErrors`.
    pub udp_in_errors: Option<u64>,
    /// `Udp: InDatagrams`.
    pub udp_in_datagrams: Option<u64>,
    /// `pswpin` of `/proc/vmstat`.
    pub swap_in_pages: Option<u64>,
    /// `pswpout` of `/proc/vmstat`.
    pub swap_out_pages: Option<u64>,
}

impl Counters {
    /// Reads the counters of `pid`'s network namespace and the machine's
    /// swap counters.
    pub fn read(pid: u32) -> Counters {
        let file = |p: String| std::fs::read_to_string(p).unwrap_or_default();
        let netstat = file(format!("/proc/{pid}/net/netstat"));
        let snmp = file(format!("/proc/{pid}/net/snmp"));
        let vmstat = file("/proc/vmstat".into());
        Counters {
            listen_overflows: table_value(&netstat, "TcpExt", "ListenOverflows"),
            listen_drops: table_value(&netstat, "TcpExt", "ListenDrops"),
            tcp_backlog_drops: table_value(&netstat, "TcpExt", "TCPBacklogDrop"),
            udp_rcvbuf_errors: table_value(&snmp, "Udp", "RcvbufErrors"),
            udp_in_errors: table_value(&snmp, "Udp", "InErrors"),
            udp_in_datagrams: table_value(&snmp, "Udp", "InDatagrams"),
            swap_in_pages: vmstat_value(&vmstat, "pswpin"),
            swap_out_pages: vmstat_value(&vmstat, "pswpout"),
        }
    }

    /// Each counter's growth from `before` to `self` (a counter that went
    /// backwards, or is missing at either end, is `None`).
    pub fn since(&self, before: &Counters) -> Counters {
        let d = |a: Option<u64>, b: Option<u64>| b?.checked_sub(a?);
        Counters {
            listen_overflows: d(before.listen_overflows, self.listen_overflows),
            listen_drops: d(before.listen_drops, self.listen_drops),
            tcp_backlog_drops: d(before.tcp_backlog_drops, self.tcp_backlog_drops),
            udp_rcvbuf_errors: d(before.udp_rcvbuf_errors, self.udp_rcvbuf_errors),
            udp_in_errors: d(before.udp_in_errors, self.udp_in_errors),
            udp_in_datagrams: d(before.udp_in_datagrams, self.udp_in_datagrams),
            swap_in_pages: d(before.swap_in_pages, self.swap_in_pages),
            swap_out_pages: d(before.swap_out_pages, self.swap_out_pages),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas() {
        let a = Counters {
            listen_overflows: Some(10),
            udp_rcvbuf_errors: Some(5),
            swap_in_pages: Some(3),
            ..Counters::default()
        };
        let b = Counters {
            listen_overflows: Some(25),
            udp_rcvbuf_errors: Some(4),
            swap_in_pages: Some(3),
            ..Counters::default()
        };
        let d = b.since(&a);
        assert_eq!(d.listen_overflows, Some(15));
        assert_eq!(d.udp_rcvbuf_errors, None, "went backwards");
        assert_eq!(d.swap_in_pages, Some(0));
        assert_eq!(d.listen_drops, None);
    }

    #[test]
    fn this_machine_has_the_counters() {
        let c = Counters::read(std::process::id());
        assert!(c.listen_overflows.is_some() && c.udp_rcvbuf_errors.is_some());
        assert!(c.swap_in_pages.is_some());
    }
}
