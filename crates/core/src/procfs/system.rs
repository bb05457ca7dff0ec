//! The machine's own files: `/proc/cmdline`, `/proc/meminfo`,
//! `/proc/cpuinfo`, `/proc/vmstat`, `/proc/net/dev` (this process's
//! namespace's) and the IRQs of `/proc/irq`, with the parsers of
//! `meminfo` and `cpuinfo`. The readers give the file's text, `None` when
//! it cannot be read.

/// The kernel's command line (`/proc/cmdline`).
pub fn cmdline() -> Option<String> {
    std::fs::read_to_string("/proc/cmdline").ok()
}

/// `/proc/meminfo`.
pub fn meminfo() -> Option<String> {
    std::fs::read_to_string("/proc/meminfo").ok()
}

/// `/proc/cpuinfo`.
pub fn cpuinfo() -> Option<String> {
    std::fs::read_to_string("/proc/cpuinfo").ok()
}

/// `/proc/vmstat`.
pub fn vmstat() -> Option<String> {
    std::fs::read_to_string("/proc/vmstat").ok()
}

/// `/proc/net/dev` of this process's network namespace.
pub fn net_dev() -> Option<String> {
    std::fs::read_to_string("/proc/net/dev").ok()
}

/// `/proc/net/tls_stat`, kernel TLS's counters; `None` where the kernel
/// has no TLS (the `tls` module is not loaded, or not built).
pub fn tls_stat() -> Option<String> {
    std::fs::read_to_string("/proc/net/tls_stat").ok()
}

/// The sessions kernel TLS took over (`/proc/net/tls_stat`), cumulative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KtlsSessions {
    /// Transmit sessions in software (`TlsTxSw`) and offloaded to a NIC
    /// (`TlsTxDevice`).
    pub tx: u64,
    /// Receive sessions, the same two together (`TlsRxSw`, `TlsRxDevice`).
    pub rx: u64,
}

/// Parses `/proc/net/tls_stat`'s `Name<spaces>\tvalue` lines (the
/// kernel's `net/tls/tls_proc.c` prints `%-32s\t%lu`); `None` when a
/// counter it needs is missing.
pub fn parse_tls_stat(text: &str) -> Option<KtlsSessions> {
    let value = |name: &str| {
        text.lines().find_map(|l| {
            let (n, v) = l.split_once('\t')?;
            (n.trim() == name).then(|| v.trim().parse::<u64>().ok())?
        })
    };
    Some(KtlsSessions {
        tx: value("TlsTxSw")? + value("TlsTxDevice").unwrap_or(0),
        rx: value("TlsRxSw")? + value("TlsRxDevice").unwrap_or(0),
    })
}

/// An IRQ's allowed CPUs, `{irq}` to fill in.
pub const IRQ_AFFINITY: &str = "/proc/irq/{irq}/smp_affinity_list";

/// The numbered IRQs listed in `/proc/irq`, unsorted (empty when it
/// cannot be read).
pub fn irqs() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc/irq") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

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

/// `(cpu, MHz)` from `/proc/cpuinfo`: each `cpu MHz` line belongs to the
/// preceding `processor` line.
pub fn parse_cpuinfo_mhz(text: &str) -> Vec<(u32, f64)> {
    let mut out = Vec::new();
    let mut cpu = None;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => cpu = value.trim().parse().ok(),
            "cpu MHz" => {
                if let (Some(c), Ok(mhz)) = (cpu, value.trim().parse::<f64>()) {
                    out.push((c, mhz));
                }
            }
            _ => {}
        }
    }
    out
}

/// The CPU model of a `/proc/cpuinfo`: x86's `model name`, else arm's
/// `Hardware` / `CPU part`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "cpu model", "CPU part"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key).then(|| v.trim().to_string())
            })
        })
}

/// Whether a `/proc/cpuinfo`'s `flags` name `hypervisor` (the CPU runs
/// under one).
pub fn hypervisor_flag(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"))
}

/// `SwapTotal - SwapFree` of `/proc/meminfo`, in bytes.
pub fn swap_used_bytes(meminfo: &str) -> Option<u64> {
    let total = meminfo_bytes(meminfo, "SwapTotal")?;
    let free = meminfo_bytes(meminfo, "SwapFree")?;
    Some(total.saturating_sub(free))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tests/fixtures/ktls/tls_stat-as-tls_proc.c-prints.txt`: the
    /// counters of Linux 6.1's `net/tls/tls_proc.c` (`tls_mib_list`) in its
    /// `%-32s\t%lu` lines, written by `printf` with that format (this
    /// project's VM has no `tls` module to read a real one from).
    #[test]
    fn kernel_tls_sessions_from_tls_stat() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/ktls/tls_stat-as-tls_proc.c-prints.txt"
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(
            parse_tls_stat(&text),
            Some(KtlsSessions { tx: 1290, rx: 1290 })
        );
        let device = text.replace(
            "TlsTxDevice                     \t0",
            "TlsTxDevice                     \t7",
        );
        assert_eq!(parse_tls_stat(&device).map(|s| s.tx), Some(1297));
        assert_eq!(parse_tls_stat("TlsCurrTxSw\t1\n"), None, "no TlsTxSw");
    }

    #[test]
    fn cpuinfo_mhz_per_processor() {
        let text = "processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.098\n\n\
                    processor\t: 1\ncpu MHz\t\t: 3100.5\n";
        assert_eq!(parse_cpuinfo_mhz(text), vec![(0, 2596.098), (1, 3100.5)]);
        // arm64 cpuinfo has no MHz lines.
        assert_eq!(
            parse_cpuinfo_mhz("processor\t: 0\nBogoMIPS\t: 50.00\n"),
            vec![]
        );
    }

    #[test]
    fn cpuinfo_and_meminfo_on_captured_text() {
        let cpuinfo =
            "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu vme hypervisor lahf_lm\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC"));
        assert!(hypervisor_flag(cpuinfo));
        assert!(!hypervisor_flag("flags\t\t: fpu vme\n"));
        assert_eq!(cpu_model("BogoMIPS: 1\n"), None);
        let meminfo = "MemTotal:       24684356 kB\nSwapTotal:             0 kB\n";
        assert_eq!(meminfo_bytes(meminfo, "MemTotal"), Some(24684356 * 1024));
        assert_eq!(meminfo_bytes(meminfo, "SwapTotal"), Some(0));
        assert_eq!(meminfo_bytes(meminfo, "Nope"), None);
    }

    #[test]
    fn swap_in_use() {
        // This VM's /proc/meminfo has no swap.
        let vm =
            "MemTotal: 24684356 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n";
        assert_eq!(swap_used_bytes(vm), Some(0));
        let used = "SwapTotal:  2097148 kB\nSwapFree:   1048574 kB\n";
        assert_eq!(swap_used_bytes(used), Some(1048574 * 1024));
        assert_eq!(swap_used_bytes("MemTotal: 1 kB\n"), None);
    }
}
