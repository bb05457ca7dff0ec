//! The kernel's `/proc` files, read and parsed in one place: a process's
//! `stat`, `status` and `schedstat` ([`pid`]), its PID-reuse-safe start
//! time ([`pid::start_ticks`], [`pid::started_at`]), the two-line tables
//! of `/proc/net/snmp` and `/proc/net/netstat`, `/proc/net/dev` and
//! `/proc/vmstat` ([`net`]), who listens on a port ([`sockets`]: the
//! socket tables and the `socket:[INODE]` links of `/proc/PID/fd`), and joining a network namespace to read its
//! `/proc/thread-self/net` or open sockets there ([`netns`]).
//!
//! A leaf: it imports no other module of the crate, so every layer (the
//! probe, `sys`, `owned`, the store's leases, the targets) reads `/proc`
//! through it. Parsers are pure and take the file's text; the readers
//! around them only open the file.

pub mod loadavg;
pub mod me;
pub mod mounts;
pub mod net;
pub mod netns;
pub mod pid;
pub mod sockets;
pub mod stat;
pub mod sysctl;
pub mod system;
