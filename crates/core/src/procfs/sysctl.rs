//! `/proc/sys`: the kernel's tunables (sysctl(8)), read and written by
//! their dotted names (`net.ipv4.ip_local_port_range`), or read by the
//! files scalelab checks and tunes. `/proc/sys/net` is the network
//! namespace's of whoever opens it.

use std::path::PathBuf;

/// The host's name (`kernel.hostname`).
pub const HOSTNAME: &str = "/proc/sys/kernel/hostname";
/// The kernel's release (`kernel.osrelease`, `6.8.0-45-generic`).
pub const OSRELEASE: &str = "/proc/sys/kernel/osrelease";
/// The kernel's build (`kernel.version`).
pub const VERSION: &str = "/proc/sys/kernel/version";
/// ASLR (`kernel.randomize_va_space`; `2`: full randomisation).
pub const ASLR: &str = "/proc/sys/kernel/randomize_va_space";
/// Automatic NUMA balancing (`kernel.numa_balancing`).
pub const NUMA_BALANCING: &str = "/proc/sys/kernel/numa_balancing";
/// Who may use perf events (`kernel.perf_event_paranoid`).
pub const PERF_EVENT_PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";
/// The ephemeral ports (`net.ipv4.ip_local_port_range`).
pub const IP_LOCAL_PORT_RANGE: &str = "/proc/sys/net/ipv4/ip_local_port_range";

/// The file of the sysctl `key` (`net.core.somaxconn` →
/// `/proc/sys/net/core/somaxconn`).
pub fn path(key: &str) -> PathBuf {
    path_of_parts(&key.split('.').collect::<Vec<_>>())
}

/// The file under `/proc/sys` named by `parts` (`["net", "ipv4", "conf",
/// "eth0.100", "forwarding"]`: a part may hold a dot, as a VLAN's
/// interface name does).
pub fn path_of_parts(parts: &[&str]) -> PathBuf {
    std::path::Path::new("/proc/sys").join(parts.join("/"))
}

/// The value of the sysctl `key`, as the file has it (with its newline).
pub fn read(key: &str) -> std::io::Result<String> {
    std::fs::read_to_string(path(key))
}

/// Sets the sysctl `key` to `value` (in the network namespace of the
/// calling thread, for a `net.` key).
pub fn write(key: &str, value: &str) -> std::io::Result<()> {
    std::fs::write(path(key), value)
}

/// The text of one of this module's files ([`OSRELEASE`], [`ASLR`]...).
pub fn read_file(file: &str) -> std::io::Result<String> {
    std::fs::read_to_string(file)
}

/// `net.ipv4.ip_local_port_range` (`32768\t60999`); `None` when it cannot
/// be read or parsed.
pub fn local_port_range() -> Option<(u32, u32)> {
    parse_port_range(&read_file(IP_LOCAL_PORT_RANGE).ok()?)
}

/// Parses `ip_local_port_range`'s two numbers.
pub fn parse_port_range(text: &str) -> Option<(u32, u32)> {
    let mut it = text.split_whitespace().map(str::parse::<u32>);
    Some((it.next()?.ok()?, it.next()?.ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_names_are_paths_and_the_port_range_parses() {
        assert_eq!(
            path("net.core.somaxconn"),
            PathBuf::from("/proc/sys/net/core/somaxconn")
        );
        assert_eq!(
            path_of_parts(&["net", "ipv4", "conf", "eth0.100", "forwarding"]),
            PathBuf::from("/proc/sys/net/ipv4/conf/eth0.100/forwarding")
        );
        assert_eq!(parse_port_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_port_range("32768"), None);
    }
}
