//! AF_XDP for the packet generators: frames go out on an XDP socket's TX
//! ring and answers come back on its RX ring, past the socket layer.
//!
//! - `bpf`: the `bpf()` syscall: an XSKMAP, a tiny XDP program assembled
//!   here (no clang or libbpf at build time) that redirects the generator's
//!   UDP ports to it, attached through a BPF link, so the kernel detaches it
//!   when the link's last descriptor closes, `kill -9` included;
//! - `ring`/`socket`: the UMEM, its fill and completion rings, the RX and TX
//!   rings (copy mode, which veth and every driver support);
//! - `frame`: Ethernet/IPv4/UDP headers and checksums, sans-IO;
//! - `path`: from a destination address to the interface, the addresses
//!   and the next hop's MAC, read in the calling thread's namespace;
//! - `busy`: the program another tool left attached, which makes
//!   attaching ours fail, named with the command that detaches it.
//!
//! Nothing outlives the process: the UMEM is anonymous memory of this
//! process, the XSK and the program's link are file descriptors.

pub(crate) mod attach;
pub(crate) mod bpf;
pub mod busy;
pub(crate) mod frame;
pub(crate) mod path;
mod ring;
pub(crate) mod socket;

/// What can go wrong setting up or driving an XDP socket.
#[derive(Debug, thiserror::Error)]
pub enum XdpError {
    /// A syscall failed; `what` names the step.
    #[error("AF_XDP: {what}: {source}")]
    Sys {
        /// The step that failed.
        what: &'static str,
        /// The kernel's error.
        source: std::io::Error,
    },
    /// The kernel's verifier refused the XDP program.
    #[error("AF_XDP: the kernel refused the XDP program: {source}; verifier log: {log}")]
    Verifier {
        /// The kernel's error.
        source: std::io::Error,
        /// The verifier's log.
        log: String,
    },
    /// The interface already has an XDP program attached (another tool's;
    /// Debian's kxdpgun leaves its own), so ours cannot be.
    #[error("AF_XDP: interface {ifname} already has {} attached, so the generator's cannot be (another tool left it; Debian's kxdpgun does): detach it with `{fix}`, or use the socket generator (--generator socket; generator = \"socket\" in a recipe)", .program.as_ref().map_or_else(|| "an XDP program".to_string(), ToString::to_string))]
    Busy {
        /// The interface.
        ifname: String,
        /// The program `ip` reports there, when it reports one.
        program: Option<busy::XdpProgram>,
        /// The command that detaches it.
        fix: String,
    },
    /// The destination has no XDP path (loopback, no route, no neighbour).
    #[error("no XDP path to {dest}: {reason}")]
    NoPath {
        /// The address load goes to.
        dest: std::net::Ipv4Addr,
        /// Why: loopback, no route, unresolved neighbour.
        reason: String,
    },
}

/// The last OS error as an [`XdpError::Sys`] for `what`.
pub(crate) fn sys_error(what: &'static str) -> XdpError {
    XdpError::Sys {
        what,
        source: std::io::Error::last_os_error(),
    }
}
