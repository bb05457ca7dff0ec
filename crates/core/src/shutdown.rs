//! A cloneable shutdown flag, passed into every long-running loop.
//!
//! Following mini-redis, shutdown is an argument rather than a global: the
//! binary wires Ctrl-C to it, tests trigger it directly.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The flag: clones share it; triggering any clone stops every holder.
#[derive(Clone, Debug, Default)]
pub struct Shutdown(Arc<AtomicBool>);

impl Shutdown {
    /// A flag that is not triggered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask every holder of this flag to stop as soon as it can.
    pub fn trigger(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether shutdown was asked for.
    pub fn is_triggered(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Sleep up to `d`, waking early (and returning `true`) on shutdown.
    pub fn sleep(&self, d: std::time::Duration) -> bool {
        let now = std::time::Instant::now();
        // A duration too long to add (never from a parsed spec) sleeps until shutdown.
        let end = now
            .checked_add(d)
            .unwrap_or(now + std::time::Duration::from_secs(1 << 32));
        loop {
            if self.is_triggered() {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= end {
                return false;
            }
            std::thread::sleep((end - now).min(std::time::Duration::from_millis(50)));
        }
    }
}
