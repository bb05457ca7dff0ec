//! One cgroup directory for one server start, v1 or v2: creating it,
//! writing its limits, and removing it. Every cgroup is named exactly
//! `scalelab-<owner PID>-<name>` ([`super::cgroup_name`]), removed by that
//! path, and registered with [`crate::owned`]'s reaper from creation to
//! removal, so it goes even when scalelab is killed; where it goes is
//! decided in [`super::hierarchy`].

use super::hierarchy::Hierarchy;
pub use super::hierarchy::{Controller, Version};
use super::PlacementError;
use crate::owned::{self, Removal};
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn cgroup_err(path: &Path, e: io::Error) -> PlacementError {
    PlacementError::Cgroup {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn write(path: &Path, value: &str) -> Result<(), PlacementError> {
    std::fs::write(path, value).map_err(|e| PlacementError::Cgroup {
        path: path.display().to_string(),
        message: format!("writing `{value}`: {e}"),
    })
}

/// A cgroup directory scalelab created. It is removed by [`Cgroup::remove`]
/// or, failing that, when dropped (so an error part-way through setting up
/// a placement leaves nothing behind).
#[derive(Debug)]
pub struct Cgroup {
    pub dir: PathBuf,
    pub version: Version,
    parent: PathBuf,
    removed: bool,
}

impl Cgroup {
    /// Creates `<parent>/<name>` for `controllers`. A leftover directory of
    /// the same exact name with no processes in it is replaced; one that
    /// still holds processes is an error (another run may own it).
    pub fn make(
        h: &Hierarchy,
        name: &str,
        controllers: &[Controller],
    ) -> Result<Cgroup, PlacementError> {
        if h.version == Version::V2 {
            enable_v2_controllers(&h.parent, controllers)?;
        }
        let dir = h.parent.join(name);
        if dir.exists() {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            if !procs.trim().is_empty() {
                return Err(PlacementError::Busy {
                    path: dir.display().to_string(),
                });
            }
            std::fs::remove_dir(&dir).map_err(|e| cgroup_err(&dir, e))?;
        }
        std::fs::create_dir(&dir).map_err(|e| cgroup_err(&dir, e))?;
        owned::register(Removal::Cgroup, &[dir.as_os_str()]);
        Ok(Cgroup {
            dir,
            version: h.version,
            parent: h.parent.clone(),
            removed: false,
        })
    }

    /// Restricts the cgroup to `cpus`.
    pub fn set_cpus(&self, cpu_list: &str) -> Result<(), PlacementError> {
        write(&self.dir.join("cpuset.cpus"), cpu_list)
            .map_err(|e| with_hint(e, "is every CPU in the parent cpuset?"))?;
        if self.version == Version::V1 {
            // v1 cpusets start with no memory nodes and refuse tasks until
            // some are set; give it the parent's.
            let mems = std::fs::read_to_string(self.parent.join("cpuset.mems"))
                .map_err(|e| cgroup_err(&self.parent.join("cpuset.mems"), e))?;
            write(&self.dir.join("cpuset.mems"), mems.trim())?;
        }
        Ok(())
    }

    /// Limits memory to `bytes` with no swap beyond it.
    pub fn set_memory(&self, bytes: u64) -> Result<(), PlacementError> {
        let value = bytes.to_string();
        match self.version {
            Version::V1 => {
                write(&self.dir.join("memory.limit_in_bytes"), &value)?;
                // memsw is memory + swap; equal to the limit means no swap.
                let memsw = self.dir.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    write(&memsw, &value)?;
                }
            }
            Version::V2 => {
                write(&self.dir.join("memory.max"), &value)?;
                let swap = self.dir.join("memory.swap.max");
                if swap.exists() {
                    write(&swap, "0")?;
                }
            }
        }
        Ok(())
    }

    /// The procs file a child writes itself into, as a C string prepared
    /// before fork.
    pub fn procs_file(&self) -> Result<CString, PlacementError> {
        let path = self.dir.join("cgroup.procs");
        CString::new(path.as_os_str().as_bytes()).map_err(|_| PlacementError::Cgroup {
            path: path.display().to_string(),
            message: "path contains a NUL byte".into(),
        })
    }

    /// PIDs currently inside.
    pub fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Removes the cgroup now, reporting failure.
    pub fn remove(mut self) -> Result<(), PlacementError> {
        self.removed = true;
        self.remove_dir()
    }

    /// Moves any remaining processes to the parent cgroup, then removes the
    /// directory, retrying while the kernel still reports it busy (exited
    /// tasks leave a cgroup asynchronously). Idempotent.
    fn remove_dir(&self) -> Result<(), PlacementError> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            for pid in self.pids() {
                // ESRCH (already gone) is fine; anything else shows up as
                // EBUSY from rmdir below.
                let _ = std::fs::write(self.parent.join("cgroup.procs"), pid.to_string());
            }
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(cgroup_err(&self.dir, e)),
            }
        }
        owned::forget(Removal::Cgroup, &[self.dir.as_os_str()]);
        Ok(())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if !self.removed {
            if let Err(e) = self.remove_dir() {
                // Drop cannot return it; a leftover cgroup must not go unnoticed.
                eprintln!("scalelab: warning: {e}");
            }
        }
    }
}

fn with_hint(e: PlacementError, hint: &str) -> PlacementError {
    match e {
        PlacementError::Cgroup { path, message } => PlacementError::Cgroup {
            path,
            message: format!("{message} ({hint})"),
        },
        other => other,
    }
}

/// v2: children only get the controllers listed in the parent's
/// `cgroup.subtree_control`; add the missing ones.
fn enable_v2_controllers(parent: &Path, controllers: &[Controller]) -> Result<(), PlacementError> {
    let file = parent.join("cgroup.subtree_control");
    let enabled = std::fs::read_to_string(&file).map_err(|e| cgroup_err(&file, e))?;
    for c in controllers {
        if !enabled.split_whitespace().any(|e| e == c.name()) {
            write(&file, &format!("+{}", c.name()))?;
        }
    }
    Ok(())
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is
/// `procs`, by writing "0" (the kernel reads 0 as "the writer").
/// Async-signal-safe: only open/write/close, for use between fork and exec.
pub fn join_raw(procs: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: raw syscalls on a valid NUL-terminated path and a static buffer.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, b"0".as_ptr().cast(), 1);
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n == 1 {
            Ok(())
        } else {
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::hierarchy::Hierarchy;

    #[test]
    fn v2_settings_are_written_to_the_right_files() {
        // A fake unified hierarchy in a temp dir: cgroupfs semantics are not
        // emulated, but the files and values written are checked.
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path();
        std::fs::write(top.join("cgroup.subtree_control"), "cpu memory").unwrap();
        let h = Hierarchy {
            version: Version::V2,
            parent: top.to_path_buf(),
        };
        let cg = Cgroup::make(&h, "scalelab-t", &[Controller::Memory, Controller::Cpuset]).unwrap();
        // Plain files overwrite, so only the last write shows: +cpuset.
        let subtree = std::fs::read_to_string(top.join("cgroup.subtree_control")).unwrap();
        assert_eq!(subtree, "+cpuset");
        std::fs::write(cg.dir.join("memory.swap.max"), "max").unwrap();
        cg.set_memory(64 << 20).unwrap();
        cg.set_cpus("1").unwrap();
        let read = |f: &str| std::fs::read_to_string(cg.dir.join(f)).unwrap();
        assert_eq!(read("memory.max"), (64u64 << 20).to_string());
        assert_eq!(read("memory.swap.max"), "0");
        assert_eq!(read("cpuset.cpus"), "1");
        assert!(!cg.dir.join("cpuset.mems").exists());
        // A plain directory with files in it cannot be rmdir'ed like a
        // cgroup; the temp dir cleans it up instead.
        std::mem::forget(cg);
    }
}
