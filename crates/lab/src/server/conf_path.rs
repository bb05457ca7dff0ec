//! Paths under `SCALELAB_WORKDIR` as the servers' configs and sockets need
//! them: quoted in config files (a workdir may hold spaces), and short
//! enough for a unix socket (`sun_path` holds 107 bytes and a NUL), checked
//! before a server starts, with an error that names `SCALELAB_WORKDIR`.

use super::ServerError;
use std::path::Path;

/// The longest unix socket path, in bytes (`sizeof(sun_path) - 1`).
pub const MAX_SOCKET_PATH: usize = 107;

/// `path` as a double-quoted config string, with `\` and `"` escaped (the
/// quoting nginx, MariaDB's option files, NSD, Unbound and BIND share).
pub fn quoted(path: &Path) -> String {
    let text = path.display().to_string();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `Ok` unless the workdir `base_dir` holds a character `bad` accepts,
/// which `kind` cannot take in a path (`why` says what breaks); the error
/// names SCALELAB_WORKDIR as the fix.
pub fn refuse_in_workdir(
    kind: &'static str,
    base_dir: &Path,
    bad: fn(char) -> bool,
    why: &str,
) -> Result<(), ServerError> {
    if !base_dir.to_string_lossy().contains(bad) {
        return Ok(());
    }
    Err(ServerError::Start {
        kind,
        message: format!(
            "the work directory `{}` {why}; set SCALELAB_WORKDIR to another directory",
            base_dir.display()
        ),
    })
}

/// `Ok` when `socket` fits in a unix socket address; otherwise the error
/// that names the path, its length, the limit and the fix.
pub fn check_socket(kind: &'static str, socket: &Path) -> Result<(), ServerError> {
    use std::os::unix::ffi::OsStrExt;
    let len = socket.as_os_str().as_bytes().len();
    if len <= MAX_SOCKET_PATH {
        return Ok(());
    }
    Err(ServerError::Start {
        kind,
        message: format!(
            "its unix socket {} is {len} bytes, more than the {MAX_SOCKET_PATH} a socket path \
             may have; set SCALELAB_WORKDIR to a shorter directory (at most about {} bytes)",
            socket.display(),
            MAX_SOCKET_PATH.saturating_sub(len.saturating_sub(workdir_len(socket))),
        ),
    })
}

/// The length of `SCALELAB_WORKDIR` as `socket` starts with it (0 when it
/// does not).
fn workdir_len(socket: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    std::env::var_os("SCALELAB_WORKDIR")
        .filter(|w| socket.starts_with(w))
        .map_or(0, |w| w.as_bytes().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(quoted(Path::new("/a b/x")), "\"/a b/x\"");
        assert_eq!(quoted(Path::new("/a\"b\\c")), "\"/a\\\"b\\\\c\"");
    }

    #[test]
    fn workdir_characters_a_server_cannot_take_are_named() {
        let dollar = |c| c == '$';
        assert!(refuse_in_workdir("nginx", Path::new("/a b"), dollar, "x").is_ok());
        let e = refuse_in_workdir("nginx", Path::new("/a$b"), dollar, "has a `$`")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`/a$b` has a `$`") && e.contains("SCALELAB_WORKDIR"),
            "{e}"
        );
    }

    #[test]
    fn long_socket_paths_are_refused_with_the_limit() {
        assert!(check_socket("unbound", Path::new("/tmp/x/unbound.ctl")).is_ok());
        let long = format!("/{}/unbound.ctl", "d".repeat(120));
        let e = check_socket("unbound", Path::new(&long))
            .unwrap_err()
            .to_string();
        assert!(e.contains("SCALELAB_WORKDIR") && e.contains("107"), "{e}");
    }
}
