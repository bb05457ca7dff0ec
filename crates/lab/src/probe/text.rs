//! Small parsers of `/sys` text that the fingerprint and the machine
//! check share (`meminfo_bytes` is [`crate::procfs::system`]'s).

pub use crate::procfs::system::meminfo_bytes;

/// The bracketed choice in `always [madvise] never`.
pub fn selected(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(String::from)
        .unwrap_or_else(|| text.trim().to_string())
}
