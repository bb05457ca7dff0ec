//! Tracepoint ids from tracefs (`events/CATEGORY/NAME/id`), where the
//! kernel mounts it or where debugfs holds it.

/// Where tracefs is found, in order.
const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The id of tracepoint `category:name`, or why it cannot be had.
pub fn tracepoint_id(category: &str, name: &str) -> Result<u64, String> {
    let mut last = String::from(
        "no tracefs mounted (tried /sys/kernel/tracing and /sys/kernel/debug/tracing); mount \
         it with `mount -t tracefs nodev /sys/kernel/tracing` (scripts/setup.sh does)",
    );
    for root in TRACEFS {
        let path = format!("{root}/events/{category}/{name}/id");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                return text
                    .trim()
                    .parse()
                    .map_err(|_| format!("{path} holds {:?}, not a tracepoint id", text.trim()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if std::path::Path::new(root).join("events").is_dir() {
                    last = format!("no tracepoint {category}:{name} in {root}/events");
                }
            }
            Err(e) => last = format!("cannot read {path}: {e}"),
        }
    }
    Err(last)
}
