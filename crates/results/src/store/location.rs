//! Where the store file lives, checked before SQLite opens it: the
//! directory must exist (`--store` creates no directories), and a file or
//! directory that cannot be written (a read-only mount, or modes that deny
//! this user) is opened read-only by the readers (`list`, `export`,
//! `report`, `compare`) and refused with the reason by the writers.

use super::{migrate, Store, StoreError};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// The directory `path` is in; `.` for a bare file name.
fn directory(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Whether this process may write `path` (`access(2)`, so a read-only
/// mount counts even for root).
fn writable(path: &Path) -> bool {
    crate::sys::terminal::may_write(path)
}

/// `Ok` when the store's directory exists; otherwise the error that names
/// it (no directory is created).
pub(super) fn check_directory(path: &Path) -> Result<(), StoreError> {
    let dir = directory(path);
    if dir.is_dir() {
        return Ok(());
    }
    Err(StoreError::NoDirectory {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
    })
}

/// Whether the store at `path` can be written: its directory (for the
/// journal files) and, when it exists, the file itself.
pub(super) fn is_writable(path: &Path) -> bool {
    writable(directory(path)) && (!path.exists() || writable(path))
}

/// `Ok` when a writer may open `path`; otherwise the error that says the
/// location is read-only.
pub(super) fn check_writable(path: &Path) -> Result<(), StoreError> {
    if is_writable(path) {
        return Ok(());
    }
    Err(StoreError::ReadOnly(path.to_path_buf()))
}

/// Opens an existing store in a read-only location for reading. Without a
/// `-wal` file every committed trial is in the main file, so it is opened
/// `immutable` (SQLite then needs no `-shm` it could not create); with one,
/// read-only through the existing journal.
pub(super) fn open_read_only(
    path: &Path,
    catalog: &'static crate::record::catalog::Catalog,
) -> Result<Store, StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let conn = if Path::new(&wal).exists() {
        Connection::open_with_flags(path, flags)
    } else {
        let uri = format!("file:{}?immutable=1", uri_path(path));
        Connection::open_with_flags(uri, flags)
    }
    .map_err(open_err)?;
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(open_err)?;
    if version != migrate::LATEST {
        return Err(StoreError::ReadOnlyVersion {
            path: path.to_path_buf(),
            found: version,
        });
    }
    Ok(Store {
        conn,
        path: path.to_path_buf(),
        catalog,
    })
}

/// `path` percent-encoded for a `file:` URI (`?`, `#`, `%` and spaces).
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '?' | '#' | '%' | ' ' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}
