//! The agent binary on a host. The coordinator's own executable is the
//! agent; it is copied over the ssh connection when the host lacks this
//! exact build. Builds are told apart by a hash of the executable's bytes,
//! which is part of the remote file name, so a stale or foreign binary is
//! never run by mistake.
//!
//! A copy is trusted only once verified on the host: it is written to a
//! temporary name (`<final>.part-<coordinator host>-<coordinator PID>-<shell
//! PID>`), its size and SHA-256 (computed on the host with coreutils'
//! `stat` and `sha256sum`) are compared with the coordinator's, and only
//! then is it renamed to the final name. A copy cut short (the coordinator
//! killed mid-copy: the remote `cat` sees an early end of input as success)
//! fails the check and is removed, so the final name never holds a partial
//! file. A file already at the final name is checked the same way before
//! use, and a bad one is replaced. Temporary files of copies whose
//! coordinator died are removed by the next deploy.

use super::ssh::{shell_quote, Ssh};
use super::{Host, RemoteError};
use sha2::Digest;
use std::time::Duration;

/// Where agents live on a host, unless [`AGENT_DIR_ENV`] names another
/// directory.
pub const REMOTE_DIR: &str = "/var/tmp/scalelab-agent";

/// Environment variable (read on the coordinator) naming the directory on
/// every host that holds the agents; tests point it into their own temp dir.
pub const AGENT_DIR_ENV: &str = "SCALELAB_AGENT_DIR";

/// A temporary copy older than this (minutes) belongs to no live copy: a
/// copy is bounded by [`COPY_LIMIT`].
const STALE_PART_MIN: u32 = 10;

/// The longest one copy of the agent may take.
const COPY_LIMIT: Duration = Duration::from_secs(120);

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

/// What a copy must be on the host: its size and SHA-256 (lower-case hex,
/// as `sha256sum` prints it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// Bytes.
    pub size: u64,
    /// SHA-256 of the bytes, 64 hex digits.
    pub sha256: String,
}

impl Expected {
    /// The size and hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Expected {
        let digest = sha2::Sha256::digest(bytes);
        let sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
        Expected {
            size: bytes.len() as u64,
            sha256,
        }
    }
}

/// What `uname -sm` must say for this build to run on a host.
pub fn local_platform() -> String {
    format!("Linux {}", std::env::consts::ARCH)
}

/// The directory that holds the agents on every host.
pub fn agent_dir() -> String {
    std::env::var(AGENT_DIR_ENV)
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| REMOTE_DIR.to_string())
}

/// The remote shell script that tells the host's platform, what the file
/// at `path` is (`have SIZE SHA256 x|-`, or `missing`), and the temporary
/// copies beside it (`part MTIME NAME`), with the host's clock (`now T`).
pub fn probe_script(path: &str) -> String {
    let q = shell_quote(path);
    format!(
        "uname -sm; echo \"now $(date +%s)\"; \
         if test -f {q}; then x=-; test -x {q} && x=x; \
         echo \"have $(stat -c %s {q}) $(sha256sum < {q} | cut -d' ' -f1) $x\"; \
         else echo missing; fi; \
         for t in {q}.part-*; do test -f \"$t\" && echo \"part $(stat -c %Y \"$t\") $t\"; done; true"
    )
}

/// What the probe found at the final name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing.
    Missing,
    /// A file of this size and hash; `executable` when its mode allows.
    File {
        /// Bytes.
        size: u64,
        /// SHA-256, hex.
        sha256: String,
        /// `test -x` said yes.
        executable: bool,
    },
}

impl Found {
    /// Whether the file is this build, whole and runnable.
    pub fn is(&self, want: &Expected) -> bool {
        match self {
            Found::Missing => false,
            Found::File {
                size,
                sha256,
                executable,
            } => *size == want.size && *sha256 == want.sha256 && *executable,
        }
    }
}

/// The probe's answer, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// `uname -sm`.
    pub platform: String,
    /// The file at the final name.
    pub found: Found,
    /// Temporary copies: (mtime in unix seconds, path).
    pub parts: Vec<(i64, String)>,
    /// The host's clock (unix seconds).
    pub now: i64,
}

/// Parses [`probe_script`]'s output; `None` when it is not that shape.
pub fn parse_probe(out: &str) -> Option<Probe> {
    let mut lines = out.lines();
    let platform = lines.next()?.trim().to_string();
    let mut probe = Probe {
        platform,
        found: Found::Missing,
        parts: Vec::new(),
        now: 0,
    };
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["now", t] => probe.now = t.parse().ok()?,
            ["missing"] => probe.found = Found::Missing,
            ["have", size, sha, x] => {
                probe.found = Found::File {
                    size: size.parse().ok()?,
                    sha256: (*sha).to_string(),
                    executable: *x == "x",
                }
            }
            ["part", mtime, path] => probe.parts.push((mtime.parse().ok()?, (*path).to_string())),
            _ => return None,
        }
    }
    Some(probe)
}

/// The temporary name of this coordinator's copy: the final name, this
/// machine's host name and PID, and the remote shell's PID (`$$`, so that
/// several copies from one coordinator to hosts sharing a file system do not
/// collide).
pub fn part_prefix(path: &str) -> String {
    format!("{path}.part-{}-{}-", local_hostname(), std::process::id())
}

/// The remote shell script that copies stdin to `path` through a verified
/// temporary file. It fails, removing the temporary file, when stdin ended
/// early or the bytes differ; the final name then is untouched.
pub fn copy_script(path: &str, want: &Expected) -> String {
    let q = shell_quote(path);
    let dir = shell_quote(
        std::path::Path::new(path)
            .parent()
            .and_then(|p| p.to_str())
            .unwrap_or("/"),
    );
    let tmp = format!("{}\"$$\"", shell_quote(&part_prefix(path)));
    format!(
        "mkdir -p {dir} && t={tmp} && trap 'rm -f \"$t\"' EXIT && cat > \"$t\" && \
         n=$(stat -c %s \"$t\") && if test \"$n\" != {size}; then \
         echo \"copy cut short: $n of {size} bytes arrived\" >&2; exit 3; fi && \
         h=$(sha256sum < \"$t\" | cut -d' ' -f1) && if test \"$h\" != {sha}; then \
         echo \"copy corrupted: sha256 $h, sent {sha}\" >&2; exit 3; fi && \
         chmod 755 \"$t\" && mv -f \"$t\" {q}",
        size = want.size,
        sha = want.sha256,
    )
}

/// The temporary copies in `probe` that no live copy owns: this machine's
/// whose coordinator PID is gone, and any older than [`STALE_PART_MIN`].
pub fn stale_parts(probe: &Probe, path: &str) -> Vec<String> {
    let ours = format!("{path}.part-{}-", local_hostname());
    probe
        .parts
        .iter()
        .filter(|(mtime, part)| {
            let old = probe.now - mtime > i64::from(STALE_PART_MIN) * 60;
            let dead_owner = part
                .strip_prefix(&ours)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<i32>().ok())
                .is_some_and(|pid| !process_alive(pid));
            old || dead_owner
        })
        .map(|(_, part)| part.clone())
        .collect()
}

fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks that the PID exists.
    let sent = unsafe { libc::kill(pid, 0) } == 0;
    sent || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

fn local_hostname() -> String {
    let name =
        crate::procfs::sysctl::read_file(crate::procfs::sysctl::HOSTNAME).unwrap_or_default();
    let name: String = name
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
        .collect();
    if name.is_empty() {
        "host".into()
    } else {
        name
    }
}

fn agent_error(host: &Host, message: String) -> RemoteError {
    RemoteError::Agent {
        host: host.to_string(),
        message,
    }
}

/// Makes sure the host has this build as an agent and returns its path.
/// Fails, naming the host, when the host is unreachable or runs another OS
/// (use an `external` server there).
pub fn ensure_agent(ssh: &Ssh, host: &Host) -> Result<String, RemoteError> {
    let exe = crate::procfs::me::exe().map_err(|e| {
        agent_error(
            host,
            format!("cannot read this scalelab's own executable: {e}"),
        )
    })?;
    let path = format!("{}/scalelab-{}", agent_dir(), build_id(&exe));
    let out = ssh.run(host, &probe_script(&path), None, Duration::from_secs(30))?;
    let probe = parse_probe(&out)
        .ok_or_else(|| agent_error(host, format!("unreadable answer to the agent check: {out}")))?;
    if probe.platform != local_platform() {
        return Err(agent_error(
            host,
            format!(
                "runs `{}`, and this scalelab is built for `{}`; run the server there \
                 as kind = \"external\" (with start/stop/pid commands over ssh)",
                probe.platform,
                local_platform()
            ),
        ));
    }
    let stale = stale_parts(&probe, &path);
    if !stale.is_empty() {
        let names: Vec<String> = stale.iter().map(|p| shell_quote(p)).collect();
        ssh.run(
            host,
            &format!("rm -f {}", names.join(" ")),
            None,
            Duration::from_secs(15),
        )?;
    }
    let want = Expected::of(&exe);
    if probe.found.is(&want) {
        return Ok(path);
    }
    // Missing, or not this build's bytes (a cut-short or corrupted copy):
    // copy, verify on the host, and only then replace the final name.
    ssh.run(host, &copy_script(&path, &want), Some(&exe), COPY_LIMIT)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    #[test]
    fn build_id_changes_with_the_bytes() {
        let a = build_id(b"one build");
        assert_ne!(a, build_id(b"one build!"));
        assert_eq!(a, build_id(b"one build"));
        assert!(a.starts_with(env!("CARGO_PKG_VERSION")));
        // FNV-1a 64 of the empty input is its offset basis.
        assert!(build_id(b"").ends_with("cbf29ce484222325"));
    }

    #[test]
    fn the_hash_is_sha256() {
        // FIPS 180-2's "abc" example.
        assert_eq!(
            Expected::of(b"abc").sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// Runs `script` in a local shell with `input` on stdin.
    fn sh(script: &str, input: &[u8]) -> std::process::Output {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }

    #[test]
    fn a_copy_cut_short_leaves_nothing_under_the_final_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents/scalelab-x").display().to_string();
        let bytes = vec![7u8; 100_000];
        let want = Expected::of(&bytes);
        // The coordinator died after sending half: stdin just ends.
        let out = sh(&copy_script(&path, &want), &bytes[..50_000]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("50000 of 100000"));
        assert!(!std::path::Path::new(&path).exists());
        // No temporary file is left either.
        let left = std::fs::read_dir(dir.path().join("agents"))
            .unwrap()
            .count();
        assert_eq!(left, 0);
        // Same length, other bytes: refused by the hash.
        let mut bad = bytes.clone();
        bad[99] = 8;
        let out = sh(&copy_script(&path, &want), &bad);
        assert!(String::from_utf8_lossy(&out.stderr).contains("corrupted"));
        assert!(!std::path::Path::new(&path).exists());
        // The whole copy lands, executable, and the probe says it is this build.
        let out = sh(&copy_script(&path, &want), &bytes);
        assert!(out.status.success(), "{out:?}");
        let probe = parse_probe(&sh(&probe_script(&path), b"").stdout_string()).unwrap();
        assert!(probe.found.is(&want), "{probe:?}");
        assert!(probe.parts.is_empty());
    }

    #[test]
    fn a_truncated_file_at_the_final_name_is_not_this_build() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scalelab-x").display().to_string();
        let bytes = vec![1u8; 4096];
        std::fs::write(&path, &bytes[..1000]).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let probe = parse_probe(&sh(&probe_script(&path), b"").stdout_string()).unwrap();
        assert_eq!(probe.platform, local_platform());
        assert!(matches!(probe.found, Found::File { size: 1000, .. }));
        assert!(!probe.found.is(&Expected::of(&bytes)));
    }

    #[test]
    fn stale_parts_are_those_of_dead_coordinators_or_old() {
        let path = "/d/scalelab-x";
        let host = local_hostname();
        let probe = Probe {
            platform: local_platform(),
            found: Found::Missing,
            now: 10_000,
            parts: vec![
                // Ours, alive (this test's own PID).
                (9_990, format!("{}123", part_prefix(path))),
                // This machine's, PID gone (PID 0 is never a process).
                (9_990, format!("{path}.part-{host}-0-5")),
                // Another machine's, fresh: maybe a copy in flight.
                (9_990, format!("{path}.part-other-77-5")),
                // Another machine's, old.
                (1_000, format!("{path}.part-other-78-5")),
            ],
        };
        assert_eq!(
            stale_parts(&probe, path),
            vec![
                format!("{path}.part-{host}-0-5"),
                format!("{path}.part-other-78-5")
            ]
        );
    }

    trait StdoutString {
        fn stdout_string(&self) -> String;
    }

    impl StdoutString for std::process::Output {
        fn stdout_string(&self) -> String {
            String::from_utf8_lossy(&self.stdout).into_owned()
        }
    }
}
