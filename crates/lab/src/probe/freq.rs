//! CPU frequency: cpufreq's `scaling_cur_freq` where the kernel has cpufreq,
//! else the `cpu MHz` lines of `/proc/cpuinfo`.

pub use crate::procfs::system::parse_cpuinfo_mhz;
use std::path::PathBuf;

pub use scalelab_record::probe::freq::FreqSource;

/// Parses `scaling_cur_freq` (kHz) into MHz.
pub fn parse_khz(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().map(|khz| khz / 1000.0)
}

/// Reads frequencies from the source picked once at the start.
#[derive(Debug)]
pub struct FreqReader {
    /// The source picked.
    pub source: FreqSource,
    cpufreq_files: Vec<(u32, PathBuf)>,
}

impl FreqReader {
    /// Uses cpufreq when every CPU in `cpus` has it, else cpuinfo if it
    /// lists MHz, else nothing.
    pub fn detect(cpus: &[u32]) -> FreqReader {
        let files: Vec<(u32, PathBuf)> = cpus
            .iter()
            .map(|&c| {
                let p = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq");
                (c, PathBuf::from(p))
            })
            .collect();
        let mut r = FreqReader {
            source: FreqSource::Cpufreq,
            cpufreq_files: files,
        };
        if cpus.is_empty() || r.read().len() != cpus.len() {
            r.source = FreqSource::Cpuinfo;
            if r.read().is_empty() {
                r.source = FreqSource::Unavailable;
            }
        }
        r
    }

    /// `(cpu, MHz)` now.
    pub fn read(&self) -> Vec<(u32, f64)> {
        match self.source {
            FreqSource::Cpufreq => self
                .cpufreq_files
                .iter()
                .filter_map(|(c, p)| Some((*c, parse_khz(&std::fs::read_to_string(p).ok()?)?)))
                .collect(),
            FreqSource::Cpuinfo => (crate::procfs::system::cpuinfo())
                .map(|t| parse_cpuinfo_mhz(&t))
                .unwrap_or_default(),
            FreqSource::Unavailable => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn khz_to_mhz() {
        assert_eq!(parse_khz("2400000\n"), Some(2400.0));
        assert_eq!(parse_khz("n/a"), None);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn x86_always_has_a_source() {
        let r = FreqReader::detect(&[0]);
        assert_ne!(r.source, FreqSource::Unavailable);
        let now = r.read();
        assert!(!now.is_empty() && now.iter().all(|&(_, mhz)| mhz > 0.0));
    }
}
