//! The operating-system layer under every server and load kind: processes
//! and their readiness waits ([`process`]), the one way a server is started
//! and guaranteed not to outlive scalelab ([`lifecycle`]: own session,
//! tracking cgroup, watchdog), private network namespaces ([`netns`]), the route to an address
//! ([`route`]), dropping a server's files from the page cache
//! ([`page_cache`]), and whether standard output is a terminal and a path
//! writable ([`terminal`]).
//!
//! It knows no kind: the server and load kinds and the wire protocols
//! sit above it, [`crate::placement`] (CPU sets, cgroups), [`crate::owned`]
//! (owner-PID paths and their reaper) and [`crate::procfs`] (reading
//! `/proc`, joining a namespace) below.

pub mod lifecycle;
pub mod netns;
pub mod page_cache;
pub mod process;
pub mod route;
pub mod terminal;
