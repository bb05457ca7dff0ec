//! `/proc/loadavg`: the run queue's load averages.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
/// The run queue's averages of `/proc/loadavg`.
pub struct LoadAvg {
    /// Over the last minute.
    pub one: f64,
    /// Over the last five minutes.
    pub five: f64,
    /// Over the last fifteen minutes.
    pub fifteen: f64,
}

/// Parses `0.25 0.49 0.35 1/91 11973`.
pub fn parse_loadavg(text: &str) -> LoadAvg {
    let mut f = text
        .split_ascii_whitespace()
        .map(|v| v.parse::<f64>().unwrap_or(0.0));
    LoadAvg {
        one: f.next().unwrap_or(0.0),
        five: f.next().unwrap_or(0.0),
        fifteen: f.next().unwrap_or(0.0),
    }
}

/// The text of `/proc/loadavg`; `None` when it cannot be read.
pub fn text() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg").ok()
}

/// This machine's `/proc/loadavg`, parsed (zeros when it cannot be read).
pub fn read() -> LoadAvg {
    parse_loadavg(&text().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_averages() {
        let l = parse_loadavg("0.25 0.49 0.35 1/91 11973\n");
        assert_eq!((l.one, l.five, l.fifteen), (0.25, 0.49, 0.35));
        assert_eq!(parse_loadavg(""), LoadAvg::default());
    }
}
