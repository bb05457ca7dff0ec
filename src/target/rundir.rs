//! Private run directories named `<prefix><owner PID>-<random>`.
//!
//! A `kill -9` of scalelab gives it no chance to remove its directories, so
//! each one carries its owner's PID in its name: the next scalelab that
//! makes one of the same kind first removes those whose owner is gone,
//! matched by exact prefix and a dead PID, never by a broad pattern.

use super::process;
use std::path::Path;

/// Creates `base/<prefix><our PID>-<random>`, after removing the ones of
/// dead owners.
pub fn create(base: &Path, prefix: &str) -> std::io::Result<tempfile::TempDir> {
    std::fs::create_dir_all(base)?;
    remove_dead(base, prefix);
    tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(base)
}

/// Removes the directories `base/<prefix><PID>-*` whose PID is not alive.
pub fn remove_dead(base: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let name = entry.file_name();
        let owner = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        if let Some(pid) = owner.filter(|_| is_dir) {
            if pid != std::process::id() && !process::is_alive(pid) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dead_owners_directories_are_removed() {
        let base = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let dead_dir = base.path().join(format!("nginx-{dead}-abc"));
        let live_dir = base
            .path()
            .join(format!("nginx-{}-abc", std::process::id()));
        let other_kind = base.path().join(format!("postgres-{dead}-abc"));
        let no_pid = base.path().join("nginx-abcdef");
        for d in [&dead_dir, &live_dir, &other_kind, &no_pid] {
            std::fs::create_dir(d).unwrap();
        }
        let made = create(base.path(), "nginx-").unwrap();
        assert!(!dead_dir.exists(), "a dead owner's directory is removed");
        for kept in [&live_dir, &other_kind, &no_pid] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
        let name = made
            .path()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            name.starts_with(&format!("nginx-{}-", std::process::id())),
            "{name}"
        );
    }
}
