//! Small parsers of `/proc` and `/sys` text that the fingerprint and the
//! machine check share.

/// A `/proc/meminfo` line (`MemTotal:  24684 kB`) in bytes.
pub fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let mut f = v.split_whitespace();
        let n: u64 = f.next()?.parse().ok()?;
        Some(if f.next() == Some("kB") { n * 1024 } else { n })
    })
}

/// The bracketed choice in `always [madvise] never`.
pub fn selected(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(String::from)
        .unwrap_or_else(|| text.trim().to_string())
}
