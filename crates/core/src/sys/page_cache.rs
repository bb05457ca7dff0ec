//! Dropping a directory's files from the page cache, so that a server
//! started under a memory limit reads them from storage and charges what
//! it caches to its own cgroup.
//!
//! A cgroup is charged for a page cache page by the process that first
//! brings it in. Pages cached before the server's cgroup existed (by an
//! earlier run's server, whose cgroup was removed, by a copy or a backup)
//! stay charged elsewhere, and the server reads them for free: a dataset
//! twice the limit then fits in memory after all. [`evict_dir`] writes each
//! regular file's dirty pages back (`fdatasync`) and drops its cached ones
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`), as dropping the caches did
//! before each point in the seed's method.

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// A file or directory that could not be dropped from the cache.
#[derive(Debug, thiserror::Error)]
#[error("cannot drop {} from the page cache: {source}", path.display())]
pub struct EvictError {
    /// The file or directory.
    pub path: PathBuf,
    /// The OS error.
    #[source]
    pub source: io::Error,
}

/// What [`evict_dir`] went through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evicted {
    /// Regular files dropped from the cache.
    pub files: u64,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// Drops every regular file under `dir` (recursively, not following
/// symbolic links) from the page cache, writing dirty pages back first.
/// The files are opened read-only; the caller must be able to read them.
pub fn evict_dir(dir: &Path) -> Result<Evicted, EvictError> {
    let mut done = Evicted::default();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let err = |source| EvictError {
            path: d.clone(),
            source,
        };
        for entry in std::fs::read_dir(&d).map_err(err)? {
            let entry = entry.map_err(err)?;
            let kind = entry.file_type().map_err(err)?;
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                done.bytes += evict_file(&path).map_err(|source| EvictError { path, source })?;
                done.files += 1;
            }
        }
    }
    Ok(done)
}

/// Writes back and drops one file's cached pages; returns its size.
fn evict_file(path: &Path) -> io::Result<u64> {
    let file = File::open(path)?;
    file.sync_data()?;
    // SAFETY: a valid open descriptor; offset 0 and length 0 cover the
    // whole file; the call only advises the kernel.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(file.metadata()?.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_read_file_is_cached_and_evicting_its_directory_drops_it() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("base").join("5");
        std::fs::create_dir_all(&sub).unwrap();
        let file = sub.join("16384");
        std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("link")).unwrap();
        let mut buf = Vec::new();
        File::open(&file).unwrap().read_to_end(&mut buf).unwrap();
        let pages = resident_pages(&file).unwrap();
        assert!(pages > 0, "the file was just written and read");
        let done = evict_dir(dir.path()).unwrap();
        assert_eq!(
            done,
            Evicted {
                files: 1,
                bytes: 1 << 20
            }
        );
        // On a file system with storage behind it (tmpfs has none and
        // keeps its pages), nothing of it is left cached.
        if !on_tmpfs(&file) {
            assert_eq!(resident_pages(&file).unwrap(), 0, "of {pages} pages");
        }
    }

    #[test]
    fn a_missing_directory_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("nope");
        let e = evict_dir(&gone).unwrap_err();
        assert_eq!(e.path, gone);
        assert!(e.to_string().contains("nope"), "{e}");
    }

    /// Pages of `path` in the page cache, by `mincore(2)` over a read-only
    /// mapping; 0 for an empty file.
    fn resident_pages(path: &Path) -> io::Result<u64> {
        let file = File::open(path)?;
        let len = file.metadata()?.len() as usize;
        if len == 0 {
            return Ok(0);
        }
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
        let mut vec = vec![0u8; len.div_ceil(page)];
        // SAFETY: a shared read-only mapping of an open file of `len` bytes,
        // unmapped below; mincore writes one byte per page into `vec`, which
        // holds that many.
        unsafe {
            let addr = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            if addr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            let rc = libc::mincore(addr, len, vec.as_mut_ptr());
            let err = io::Error::last_os_error();
            libc::munmap(addr, len);
            if rc != 0 {
                return Err(err);
            }
        }
        Ok(vec.iter().filter(|b| *b & 1 == 1).count() as u64)
    }

    fn on_tmpfs(path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and a zeroed statfs to fill.
        unsafe {
            let mut s: libc::statfs = std::mem::zeroed();
            libc::statfs(c.as_ptr(), &mut s) == 0 && s.f_type == libc::TMPFS_MAGIC
        }
    }
}
