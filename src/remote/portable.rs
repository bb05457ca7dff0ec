//! What portable commands tell over plain ssh on a host without an agent,
//! outside the interval probe ([`super::bare`]): the `energy_command`'s
//! reading, and `ps`'s CPU time in every spelling.

use super::ssh::Ssh;
use super::Host;
use crate::probe::energy::{parse_watts, two_readings};
use std::time::Duration;

/// What `command` (an `energy_command`) reads on `host` now, in watts;
/// `None` when it fails or prints no watts.
pub fn energy_reading(ssh: &Ssh, host: &Host, command: &str) -> Option<f64> {
    let script = format!("true{}", two_readings::snapshot_section(command));
    let text = ssh.run(host, &script, None, Duration::from_secs(15)).ok()?;
    parse_watts_section(&text)
}

/// The watts in the `#watts` section of a reading's output.
fn parse_watts_section(text: &str) -> Option<f64> {
    let (_, after) = text.split_once("#watts")?;
    after.lines().find_map(parse_watts)
}

/// `ps` time: `[[dd-]hh:]mm:ss[.cc]`, as BSD and procps print it.
pub fn parse_ps_time(t: &str) -> Option<f64> {
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (d.parse::<f64>().ok()?, r),
        None => (0.0, t),
    };
    let mut secs = 0.0;
    for part in rest.split(':') {
        secs = secs * 60.0 + part.parse::<f64>().ok()?;
    }
    Some(days * 86_400.0 + secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watts_section_is_read_as_the_meter_prints_it() {
        let text = "#watts\n    Instantaneous power reading:   180 Watts\n";
        assert_eq!(parse_watts_section(text), Some(180.0));
        assert_eq!(parse_watts_section("#watts\nno reading\n"), None);
        assert_eq!(parse_watts_section(""), None);
    }

    #[test]
    fn ps_times_in_every_spelling() {
        assert_eq!(parse_ps_time("0:01.50"), Some(1.5));
        assert_eq!(parse_ps_time("01:02:03"), Some(3723.0));
        assert_eq!(parse_ps_time("2-00:00:01"), Some(172_801.0));
        assert_eq!(parse_ps_time("x"), None);
    }
}
