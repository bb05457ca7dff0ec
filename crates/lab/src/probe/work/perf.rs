//! `perf_event_open(2)` in counting mode for one cgroup: one counter per
//! event and CPU, enabled and disabled together, read as value, time
//! enabled and time running (for the hardware counters the kernel may
//! multiplex).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PERF_TYPE_HARDWARE`.
pub const TYPE_HARDWARE: u32 = 0;
/// `PERF_TYPE_SOFTWARE`.
pub const TYPE_SOFTWARE: u32 = 1;
/// `PERF_TYPE_TRACEPOINT`: `config` is the tracepoint's id in tracefs.
pub const TYPE_TRACEPOINT: u32 = 2;
/// `PERF_TYPE_HW_CACHE`.
pub const TYPE_HW_CACHE: u32 = 3;

/// `PERF_COUNT_SW_CONTEXT_SWITCHES`.
pub const SW_CONTEXT_SWITCHES: u64 = 3;
/// `PERF_COUNT_SW_CPU_MIGRATIONS`.
pub const SW_CPU_MIGRATIONS: u64 = 4;
/// `PERF_COUNT_SW_PAGE_FAULTS_MIN`.
pub const SW_PAGE_FAULTS_MIN: u64 = 5;
/// `PERF_COUNT_SW_PAGE_FAULTS_MAJ`.
pub const SW_PAGE_FAULTS_MAJ: u64 = 6;
/// `PERF_COUNT_HW_CPU_CYCLES`.
pub const HW_CPU_CYCLES: u64 = 0;
/// `PERF_COUNT_HW_INSTRUCTIONS`.
pub const HW_INSTRUCTIONS: u64 = 1;
/// `PERF_COUNT_HW_BRANCH_MISSES`.
pub const HW_BRANCH_MISSES: u64 = 5;
/// `PERF_COUNT_HW_CACHE_LL | OP_READ << 8 | RESULT_MISS << 16`: last-level
/// cache read misses (perf's `LLC-load-misses`).
pub const HW_CACHE_LL_READ_MISS: u64 = 2 | (1 << 16);

/// `PERF_FLAG_PID_CGROUP`: `pid` is a cgroup directory's descriptor.
const FLAG_PID_CGROUP: libc::c_ulong = 1 << 2;
/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING`.
const READ_FORMAT_TIMES: u64 = 1 | 2;
/// `perf_event_attr.disabled`, bit 0 of the flags word.
const ATTR_DISABLED: u64 = 1;
/// `PERF_EVENT_IOC_ENABLE`: `_IO('$', 0)`.
const IOC_ENABLE: libc::c_ulong = 0x2400;
/// `PERF_EVENT_IOC_DISABLE`: `_IO('$', 1)`.
const IOC_DISABLE: libc::c_ulong = 0x2401;

/// `struct perf_event_attr` as of its first version
/// (`PERF_ATTR_SIZE_VER0`, 64 bytes), which every kernel since 2.6.31
/// takes; the fields after it are zero.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// One event: its type and config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// `PERF_TYPE_*`.
    pub kind: u32,
    /// The type's `config`.
    pub config: u64,
}

/// One reading: the count and how long the counter was enabled and
/// running, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// The count.
    pub value: u64,
    /// Nanoseconds enabled.
    pub enabled_ns: u64,
    /// Nanoseconds on the PMU (less than enabled when multiplexed).
    pub running_ns: u64,
}

impl Reading {
    /// The count scaled for the time it was multiplexed out, as `perf
    /// stat` scales it; `None` when it never ran.
    pub fn scaled(self) -> Option<u64> {
        if self.running_ns == 0 {
            return (self.enabled_ns == 0).then_some(self.value);
        }
        let scale = self.enabled_ns as f64 / self.running_ns as f64;
        Some((self.value as f64 * scale).round() as u64)
    }

    /// The sum of two readings of one event (two CPUs).
    pub fn plus(self, other: Reading) -> Reading {
        Reading {
            value: self.value + other.value,
            enabled_ns: self.enabled_ns + other.enabled_ns,
            running_ns: self.running_ns + other.running_ns,
        }
    }
}

/// An open counter on one CPU for the tasks of one cgroup.
#[derive(Debug)]
pub struct Counter {
    fd: OwnedFd,
}

impl Counter {
    /// Opens `event` for the cgroup whose directory is `cgroup` on `cpu`,
    /// disabled.
    pub fn open(event: Event, cgroup: &std::fs::File, cpu: u32) -> io::Result<Counter> {
        let attr = Attr {
            kind: event.kind,
            size: std::mem::size_of::<Attr>() as u32,
            config: event.config,
            read_format: READ_FORMAT_TIMES,
            flags: ATTR_DISABLED,
            ..Attr::default()
        };
        // SAFETY: the attribute is a valid perf_event_attr of the size it
        // states and outlives the call; the other arguments are plain
        // integers. The call returns a new descriptor or -1.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                cgroup.as_raw_fd(),
                cpu as libc::c_int,
                -1 as libc::c_int,
                FLAG_PID_CGROUP | FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this descriptor, owned by no one else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
        Ok(Counter { fd })
    }

    /// Starts counting.
    pub fn enable(&self) -> io::Result<()> {
        self.ioctl(IOC_ENABLE)
    }

    /// Stops counting.
    pub fn disable(&self) -> io::Result<()> {
        self.ioctl(IOC_DISABLE)
    }

    fn ioctl(&self, request: libc::c_ulong) -> io::Result<()> {
        // SAFETY: a perf event descriptor this value owns; the request
        // takes no argument.
        let rc = unsafe { libc::ioctl(self.fd.as_raw_fd(), request as _, 0) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The count so far.
    pub fn read(&self) -> io::Result<Reading> {
        let mut words = [0u64; 3];
        // SAFETY: reads at most the buffer's 24 bytes into it.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                words.as_mut_ptr().cast(),
                std::mem::size_of_val(&words),
            )
        };
        if n != std::mem::size_of_val(&words) as isize {
            return Err(io::Error::last_os_error());
        }
        Ok(Reading {
            value: words[0],
            enabled_ns: words[1],
            running_ns: words[2],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_is_the_first_versions_64_bytes() {
        assert_eq!(std::mem::size_of::<Attr>(), 64);
    }

    #[test]
    fn a_multiplexed_count_is_scaled_by_enabled_over_running() {
        let half = Reading {
            value: 1000,
            enabled_ns: 2000,
            running_ns: 1000,
        };
        assert_eq!(half.scaled(), Some(2000));
        let never = Reading {
            value: 0,
            enabled_ns: 5,
            running_ns: 0,
        };
        assert_eq!(never.scaled(), None);
        assert_eq!(Reading::default().scaled(), Some(0));
        assert_eq!(half.plus(half).scaled(), Some(4000));
    }
}
