//! `energy_command` on a host without an agent (an `external` server read
//! over ssh): the command runs with the portable probe's snapshot at the
//! window's start and at its end, and the window's energy is the mean of
//! the two readings times the window. Coarser than a per-sample meter; the
//! domain says so.

use super::{EnergySource, EnergySummary};

/// The shell text appended to a snapshot script: a `#watts` section with
/// the command's output.
pub fn snapshot_section(command: &str) -> String {
    format!("; echo '#watts'; ({command}) 2>&1")
}

/// The window's energy from the readings at its start and end (`None`
/// where the command printed no watts), with a warning when one or both
/// are missing; `None` when both are.
pub fn summarize(
    command: &str,
    start: Option<f64>,
    end: Option<f64>,
    window_s: f64,
) -> (Option<EnergySummary>, Option<String>) {
    let watts = match (start, end) {
        (Some(a), Some(b)) => (a + b) / 2.0,
        (Some(w), None) | (None, Some(w)) => w,
        (None, None) => {
            return (
                None,
                Some(format!(
                    "energy: energy_command `{command}` printed no watts over ssh (expected e.g. \"220 Watts\")"
                )),
            )
        }
    };
    let warning = (start.is_none() || end.is_none()).then(|| {
        format!("energy: energy_command `{command}` gave one reading of two; the window's watts are that one")
    });
    let summary = EnergySummary {
        source: EnergySource::CommandOverSsh,
        // The report puts the source ("command over ssh: ") before it.
        domains: vec![format!("{command} (start and end)")],
        joules: watts * window_s,
        measured_s: window_s,
        wraps: 0,
        client_shares_meter: false,
    };
    (Some(summary), warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_two_readings_over_the_window() {
        let (s, w) = summarize(
            "ipmitool dcmi power reading",
            Some(200.0),
            Some(220.0),
            10.0,
        );
        let s = s.unwrap();
        assert_eq!((s.joules, s.watts()), (2100.0, Some(210.0)));
        assert!(w.is_none());
        let (s, w) = summarize("m", None, Some(100.0), 2.0);
        assert_eq!(s.unwrap().watts(), Some(100.0));
        assert!(w.unwrap().contains("one reading"));
        let (s, w) = summarize("m", None, None, 2.0);
        assert!(s.is_none() && w.unwrap().contains("no watts"));
    }
}
