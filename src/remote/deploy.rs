//! The agent binary on a host. The coordinator's own executable is the
//! agent; it is copied over the ssh connection when the host lacks this
//! exact build. Builds are told apart by a hash of the executable's bytes,
//! which is part of the remote file name, so a stale or foreign binary is
//! never run by mistake.

use super::ssh::{shell_quote, Ssh};
use super::{Host, RemoteError};
use std::time::Duration;

/// Where agents live on a host.
pub const REMOTE_DIR: &str = "/var/tmp/scalelab-agent";

/// This build's identity: version and a 64-bit FNV-1a hash of the
/// executable (FNV: Fowler, Noll and Vo, IETF draft-eastlake-fnv).
pub fn build_id(exe: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in exe {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{}-{h:016x}", env!("CARGO_PKG_VERSION"))
}

/// What `uname -sm` must say for this build to run on a host.
pub fn local_platform() -> String {
    format!("Linux {}", std::env::consts::ARCH)
}

/// Makes sure the host has this build as an agent and returns its path.
/// Fails, naming the host, when the host is unreachable or runs another OS
/// (use an `external` server there).
pub fn ensure_agent(ssh: &Ssh, host: &Host) -> Result<String, RemoteError> {
    let exe = std::fs::read("/proc/self/exe").map_err(|e| RemoteError::Agent {
        host: host.to_string(),
        message: format!("cannot read this scalelab's own executable: {e}"),
    })?;
    let path = format!("{REMOTE_DIR}/scalelab-{}", build_id(&exe));
    let q = shell_quote(&path);
    let probe = format!("uname -sm; test -x {q} && echo present || echo missing");
    let out = ssh.run(host, &probe, None, Duration::from_secs(15))?;
    let mut lines = out.lines();
    let platform = lines.next().unwrap_or("").trim().to_string();
    if platform != local_platform() {
        return Err(RemoteError::Agent {
            host: host.to_string(),
            message: format!(
                "runs `{platform}`, and this scalelab is built for `{}`; run the server there \
                 as kind = \"external\" (with start/stop/pid commands over ssh)",
                local_platform()
            ),
        });
    }
    if lines.next().map(str::trim) == Some("present") {
        return Ok(path);
    }
    let dir = shell_quote(REMOTE_DIR);
    let copy = format!("mkdir -p {dir} && cat > {q}.$$ && chmod 755 {q}.$$ && mv -f {q}.$$ {q}");
    ssh.run(host, &copy, Some(&exe), Duration::from_secs(120))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_changes_with_the_bytes() {
        let a = build_id(b"one build");
        assert_ne!(a, build_id(b"one build!"));
        assert_eq!(a, build_id(b"one build"));
        assert!(a.starts_with(env!("CARGO_PKG_VERSION")));
        // FNV-1a 64 of the empty input is its offset basis.
        assert!(build_id(b"").ends_with("cbf29ce484222325"));
    }
}
