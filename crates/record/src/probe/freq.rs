//! Where a run's CPU frequencies came from, as the store keeps it
//! (`cpufreq`, `cpuinfo` or `unavailable`); the lab's `probe::freq` picks
//! and reads the source.

/// Where the frequencies are read from, picked once per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreqSource {
    /// cpufreq's `scaling_cur_freq`, per CPU.
    Cpufreq,
    /// The `cpu MHz` lines of `/proc/cpuinfo`.
    Cpuinfo,
    /// Neither: no frequency is read.
    Unavailable,
}

impl FreqSource {
    /// Its name as the report and the store spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            FreqSource::Cpufreq => "cpufreq",
            FreqSource::Cpuinfo => "cpuinfo",
            FreqSource::Unavailable => "unavailable",
        }
    }
}
