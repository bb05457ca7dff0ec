//! Who listens on a port, from the kernel's socket tables:
//! `/proc/<pid>/net/{tcp,tcp6,udp,udp6}` (a listening TCP socket is in
//! state `0A`, a bound UDP socket in `07`; the port is the hex after the
//! local address's colon, the inode the tenth field), matched to
//! processes by the `socket:[INODE]` links of `/proc/PID/fd`.

use std::collections::HashSet;

/// Inodes of the sockets listening on `port` in one `/proc/net/{tcp,udp}`
/// table: TCP in state LISTEN (0A), UDP bound to the port (07).
pub fn parse_listeners(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f.get(1)?.rsplit_once(':')?.1;
            let listening = matches!(*f.get(3)?, "0A" | "07");
            (listening && u16::from_str_radix(local_port, 16).ok()? == port)
                .then(|| f.get(9)?.parse().ok())
                .flatten()
        })
        .filter(|&inode| inode != 0)
        .collect()
}

/// Listening socket inodes on `port` in the network namespace of `pid`
/// (scalelab's own when `None`); a table that cannot be read counts as
/// empty.
pub fn listeners(port: u16, pid: Option<u32>) -> Vec<u64> {
    let base = pid.map_or("/proc/self/net".to_string(), |p| format!("/proc/{p}/net"));
    let mut out = Vec::new();
    for table in ["tcp", "tcp6", "udp", "udp6"] {
        let text = std::fs::read_to_string(format!("{base}/{table}")).unwrap_or_default();
        out.extend(parse_listeners(&text, port));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The inode of an fd's link text `socket:[INODE]`; `None` for any other
/// file.
pub fn parse_socket_link(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Socket inodes held open by `pids` (a process whose fds cannot be read,
/// gone or another user's, holds none).
pub fn socket_inodes(pids: &[u32]) -> HashSet<u64> {
    let mut out = HashSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(link) = std::fs::read_link(fd.path()) else {
                continue;
            };
            out.extend(link.to_str().and_then(parse_socket_link));
        }
    }
    out
}

/// Every process id under `/proc` (threads are not listed there).
pub fn all_pids() -> Vec<u32> {
    super::pid::all().unwrap_or_default()
}

/// The processes that hold any of `inodes` open, in PID order: every
/// process's fds are read (a few milliseconds on a machine of a few
/// hundred processes).
pub fn holders(inodes: &[u64]) -> Vec<u32> {
    let mut out: Vec<u32> = all_pids()
        .into_iter()
        .filter(|&pid| socket_inodes(&[pid]).iter().any(|i| inodes.contains(i)))
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // The format of /proc/net/tcp (Linux 6.1): one header line, then
    // `sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...`.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn only_listening_sockets_on_the_port_count() {
        assert_eq!(parse_listeners(TCP, 8080), vec![4242]);
        assert_eq!(parse_listeners(TCP, 8081), vec![4444]);
        assert!(parse_listeners(TCP, 80).is_empty());
        assert!(parse_listeners("garbage\nmore garbage", 8080).is_empty());
    }

    #[test]
    fn socket_links_give_their_inode_and_other_files_none() {
        assert_eq!(parse_socket_link("socket:[4242]"), Some(4242));
        assert_eq!(parse_socket_link("pipe:[4242]"), None);
        assert_eq!(parse_socket_link("/dev/null"), None);
        assert_eq!(parse_socket_link("socket:[x]"), None);
    }

    #[test]
    fn the_process_holding_a_listener_is_found_by_its_inode() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let inodes = listeners(port, None);
        assert_eq!(inodes.len(), 1, "{inodes:?}");
        let me = std::process::id();
        let found = holders(&inodes);
        assert!(found.contains(&me), "{found:?}");
        // Any other holder is a child another test of this binary forked
        // while the listener was open (it holds a copy of every descriptor
        // until it execs or exits): never an unrelated process.
        for pid in found.into_iter().filter(|p| *p != me) {
            let parent = super::super::pid::stat(pid).map(|s| s.ppid);
            assert!(
                parent.is_none_or(|p| p == me),
                "{pid}'s parent is {parent:?}"
            );
        }
        drop(l);
        // The socket can outlive the drop for as long as a child forked by
        // another test holds its copy (CI saw it still listening), so what
        // must hold is that this process no longer does.
        assert!(!holders(&inodes).contains(&me));
    }
}
