//! CPU lists (`0-3,6` as the kernel writes them) and CPU affinity.

use std::io;

/// Parses a kernel CPU list such as `0-3,6,8-9` (as in
/// `/sys/devices/system/cpu/online` or `Cpus_allowed_list`).
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let part = part.trim();
        let bad = || {
            format!(
                "`{part}` in the CPU list `{}` is not a CPU number or range",
                text.trim()
            )
        };
        match part.split_once('-') {
            Some((lo, hi)) => {
                let lo: usize = lo.trim().parse().map_err(|_| bad())?;
                let hi: usize = hi.trim().parse().map_err(|_| bad())?;
                if hi < lo {
                    return Err(bad());
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(part.parse().map_err(|_| bad())?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPUs as a kernel CPU list, collapsing runs: `[0,1,2,5]` -> `0-2,5`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The largest CPU number a `cpu_set_t` can hold.
pub const MAX_CPU: usize = libc::CPU_SETSIZE as usize - 1;

/// Builds a `cpu_set_t` holding `cpus` (callers check `cpus` against
/// [`MAX_CPU`] first; larger numbers are ignored).
pub fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c <= MAX_CPU) {
        // SAFETY: c is within the set's size (checked above).
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

/// Restricts the calling thread (and threads and processes it creates
/// afterwards) to `set`. Async-signal-safe: usable between fork and exec.
pub fn set_current_raw(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: a plain syscall on the calling thread with a valid set.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Pins the calling thread to `cpus`. The runner uses this to keep the load
/// generator off the server's CPUs; threads spawned later inherit it.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() || cpus.iter().any(|&c| c > MAX_CPU) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot pin to CPUs {cpus:?}"),
        ));
    }
    set_current_raw(&cpu_set(cpus))
}

/// The CPUs the calling thread may run on.
pub fn current_thread_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: sched_getaffinity fills the zeroed set we pass in.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer and size describe `set`, which outlives the call.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: every c is within the set's size.
    Ok((0..=MAX_CPU)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// The CPUs `pid` may run on, from `Cpus_allowed_list` in its status file.
pub fn allowed_cpus(pid: u32) -> io::Result<Vec<usize>> {
    let status = crate::procfs::pid::status(pid)?;
    let list = crate::procfs::pid::status_value(&status, "Cpus_allowed_list")
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no Cpus_allowed_list"))?;
    parse_cpu_list(list).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_format() {
        assert_eq!(parse_cpu_list("0-3,6\n").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("1").unwrap(), vec![1]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").unwrap_err().contains("`a`"));
        assert_eq!(format_cpu_list(&[5, 0, 1, 2]), "0-2,5");
        assert_eq!(format_cpu_list(&[1]), "1");
        assert_eq!(format_cpu_list(&[0, 2, 4]), "0,2,4");
    }

    #[test]
    fn round_trip() {
        for s in ["0", "0-1", "0,2-5,7", "1-2,4-6"] {
            assert_eq!(format_cpu_list(&parse_cpu_list(s).unwrap()), s);
        }
    }

    #[test]
    fn a_thread_can_pin_itself() {
        let before = current_thread_cpus().unwrap();
        let first = before[0];
        std::thread::spawn(move || {
            pin_current_thread(&[first]).unwrap();
            assert_eq!(current_thread_cpus().unwrap(), vec![first]);
        })
        .join()
        .unwrap();
        // The pin applied to that thread only.
        assert_eq!(current_thread_cpus().unwrap(), before);
    }
}
