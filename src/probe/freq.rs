//! CPU frequency: cpufreq's `scaling_cur_freq` where the kernel has cpufreq,
//! else the `cpu MHz` lines of `/proc/cpuinfo`.

use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreqSource {
    Cpufreq,
    Cpuinfo,
    Unavailable,
}

impl FreqSource {
    pub fn as_str(self) -> &'static str {
        match self {
            FreqSource::Cpufreq => "cpufreq",
            FreqSource::Cpuinfo => "cpuinfo",
            FreqSource::Unavailable => "unavailable",
        }
    }
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

/// Parses `scaling_cur_freq` (kHz) into MHz.
pub fn parse_khz(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().map(|khz| khz / 1000.0)
}

/// Reads frequencies from the source picked once at the start.
#[derive(Debug)]
pub struct FreqReader {
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
            FreqSource::Cpuinfo => std::fs::read_to_string("/proc/cpuinfo")
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
