//! Kernel counters the limiter reads as deltas over the window: the TCP
//! listen-queue drops of `/proc/PID/net/netstat` and the UDP receive errors
//! of `/proc/PID/net/snmp` (`PID` being the server's root, so they are the
//! counters of the server's network namespace), and swap-in/out of
//! `/proc/vmstat`. [`crate::procfs::net`] parses them; [`Counters::read`]
//! reads the files.

use crate::procfs::net::{table_value, vmstat_value};
use serde::{Deserialize, Serialize};

/// The limiter's kernel counters, each written once here: one reading, or
/// (in [`super::LimiterFigures`], flattened) their growth over the window.
/// A field is `None` when its file or line could not be read, or, as a
/// growth, when it was missing at either end or went backwards.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(default)]
pub struct Counters {
    /// `TcpExt: ListenOverflows` in the server's network namespace.
    pub listen_overflows: Option<u64>,
    /// `TcpExt: ListenDrops`.
    pub listen_drops: Option<u64>,
    /// `TcpExt: TCPBacklogDrop`.
    pub tcp_backlog_drops: Option<u64>,
    /// `Udp: RcvbufErrors` (IPv4) in the server's network namespace.
    pub udp_rcvbuf_errors: Option<u64>,
    /// `Udp: InErrors`.
    pub udp_in_errors: Option<u64>,
    /// `Udp: InDatagrams`.
    pub udp_in_datagrams: Option<u64>,
    /// `pswpin` of `/proc/vmstat` (pages, the whole machine).
    pub swap_in_pages: Option<u64>,
    /// `pswpout` of `/proc/vmstat`.
    pub swap_out_pages: Option<u64>,
}

/// The file a counter is read from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum File {
    /// `/proc/PID/net/netstat`.
    Netstat,
    /// `/proc/PID/net/snmp`.
    Snmp,
    /// `/proc/vmstat`.
    Vmstat,
}

/// A counter's field in [`Counters`].
type Field = fn(&mut Counters) -> &mut Option<u64>;

/// Where each counter is read: its file, table and name. [`Counters::read`]
/// and [`Counters::since`] walk this list, so a new counter is its field
/// and its line here.
const SOURCES: [(File, &str, &str, Field); 8] = [
    (File::Netstat, "TcpExt", "ListenOverflows", |c| {
        &mut c.listen_overflows
    }),
    (File::Netstat, "TcpExt", "ListenDrops", |c| {
        &mut c.listen_drops
    }),
    (File::Netstat, "TcpExt", "TCPBacklogDrop", |c| {
        &mut c.tcp_backlog_drops
    }),
    (File::Snmp, "Udp", "RcvbufErrors", |c| {
        &mut c.udp_rcvbuf_errors
    }),
    (File::Snmp, "Udp", "InErrors", |c| &mut c.udp_in_errors),
    (File::Snmp, "Udp", "InDatagrams", |c| {
        &mut c.udp_in_datagrams
    }),
    (File::Vmstat, "", "pswpin", |c| &mut c.swap_in_pages),
    (File::Vmstat, "", "pswpout", |c| &mut c.swap_out_pages),
];

impl Counters {
    /// Reads the counters of `pid`'s network namespace and the machine's
    /// swap counters.
    pub fn read(pid: u32) -> Counters {
        let file = |name| crate::procfs::pid::net_file(pid, name).unwrap_or_default();
        let mut c = Counters::default();
        c.fill(&[File::Netstat], &file("netstat"));
        c.fill(&[File::Snmp], &file("snmp"));
        c.fill_vmstat(&crate::procfs::system::vmstat().unwrap_or_default());
        c
    }

    /// Sets the network counters from `text`, which holds the `TcpExt:`
    /// and `Udp:` tables of `/proc/net/netstat` and `/proc/net/snmp` (the
    /// agentless probe reads both into one section).
    pub fn fill_net(&mut self, text: &str) {
        self.fill(&[File::Netstat, File::Snmp], text);
    }

    /// Sets the swap counters from the text of `/proc/vmstat`.
    pub fn fill_vmstat(&mut self, text: &str) {
        self.fill(&[File::Vmstat], text);
    }

    /// Sets each counter read from one of `files` from `text`.
    fn fill(&mut self, files: &[File], text: &str) {
        for (source, table, name, field) in SOURCES {
            if files.contains(&source) {
                *field(self) = match source {
                    File::Netstat | File::Snmp => table_value(text, table, name),
                    File::Vmstat => vmstat_value(text, name),
                };
            }
        }
    }

    /// Each counter's growth from `before` to `self` (a counter that went
    /// backwards, or is missing at either end, is `None`).
    pub fn since(&self, before: &Counters) -> Counters {
        let (mut growth, mut before) = (*self, *before);
        for (.., field) in SOURCES {
            let start = *field(&mut before);
            let now = field(&mut growth);
            *now = now.and_then(|end| end.checked_sub(start?));
        }
        growth
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
    fn the_figures_store_the_counters_as_fields_of_their_own() {
        // The stored form of the probe summary before the counters were one
        // struct: flat keys, which old stores hold and new ones keep.
        let stored = r#"{"major_faults": 2, "listen_overflows": 40, "udp_in_datagrams": null}"#;
        let f: super::super::LimiterFigures = serde_json::from_str(stored).unwrap();
        assert_eq!(f.counters.listen_overflows, Some(40));
        assert_eq!((f.counters.udp_in_datagrams, f.major_faults), (None, 2));
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["listen_overflows"], 40);
        assert!(json["swap_out_pages"].is_null() && json.get("counters").is_none());
    }

    #[test]
    fn this_machine_has_the_counters() {
        let c = Counters::read(std::process::id());
        assert!(c.listen_overflows.is_some() && c.udp_rcvbuf_errors.is_some());
        assert!(c.swap_in_pages.is_some());
        // Every counter is found: a name misspelt in SOURCES would be None.
        let mut c = c;
        for (.., field) in SOURCES {
            assert!(field(&mut c).is_some());
        }
    }
}
