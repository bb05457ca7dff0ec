//! The one reader of the kernel's `/proc`: every `/proc` path scalelab
//! opens on this machine is written here, and every parser of a `/proc`
//! file's text is here. What it reads:
//!
//! - one process ([`pid`]): `/proc/PID/stat` (and its PID-reuse-safe start
//!   time, [`pid::start_ticks`], [`pid::started_at`]), `status` (context
//!   switches), `comm`, `cwd`, `io`, its threads under `task/` (their
//!   `schedstat`, `syscall`, `status` and `children`), its descriptors
//!   (`fd/` links, `fdinfo/`: an epoll set's targets), its namespace's
//!   `net/snmp` and `net/netstat`, and the owner of `/proc/PID`; the list
//!   of PIDs in `/proc` is [`pid::all`];
//! - this process and thread ([`me`]): `/proc/self/exe`, `/proc/self/task`,
//!   `/proc/self/mountinfo` and `/proc/self/cgroup` (parsed by [`mounts`]),
//!   `/proc/thread-self/schedstat`, `/proc/thread-self/ns/net` (and PID 1's
//!   `ns/net`), and the tables of `/proc/thread-self/net` (`route`, `arp`);
//! - the machine: `/proc/stat` ([`stat`]), `/proc/loadavg` ([`loadavg`]),
//!   `/proc/cmdline`, `/proc/meminfo`, `/proc/cpuinfo`, `/proc/vmstat`,
//!   `/proc/net/dev` and the IRQs of `/proc/irq` ([`system`]), and the
//!   sysctls of `/proc/sys` by their dotted names ([`sysctl`]);
//! - the network tables' text ([`net`]: the two-line tables of `snmp` and
//!   `netstat`, `net/dev`, `vmstat`, `route`, `arp`), who listens on a port
//!   ([`sockets`]: the socket tables and the `socket:[INODE]` links of
//!   `/proc/PID/fd`), and joining a network namespace to read its
//!   `/proc/thread-self/net` or open sockets there ([`netns`]).
//!
//! What it writes: a sysctl by its name ([`sysctl::write`]: the router
//! lab's, inside its namespace). `run --tune` writes its knobs, `/sys` and
//! `/proc` files alike, by the path its plan names and its undo file
//! keeps; the `/proc` ones (`/proc/sys/kernel/randomize_va_space`,
//! `/proc/irq/N/smp_affinity_list`) are named here ([`sysctl::ASLR`],
//! [`system::IRQ_AFFINITY`]).
//!
//! The one exception to "the one reader" is shell text run on another
//! host, which reads that host's `/proc` in its own `sh`: the agentless
//! remote path's scripts (`src/remote/bare/`) and the check of a stale
//! agent's `/proc/PID/cmdline` (`remote::cluster`). `probe::proc_guard`'s
//! test keeps every other `"/proc` literal in here.
//!
//! A leaf: it imports no other module of the crate, so every layer (the
//! probe, `sys`, `placement`, `owned`, the store's leases, the servers and
//! load kinds) reads `/proc` through it. Parsers are pure and take the
//! file's text; the readers around them only open the file.

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
