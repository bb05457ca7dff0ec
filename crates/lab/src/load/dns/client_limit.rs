//! Whether a DNS run measured the client rather than the server, from what
//! its threads counted: a generator that fell behind its schedule, or one
//! whose own sockets dropped answers it did not read in time (the kernel's
//! `SO_MEMINFO` drop count). Either, below a ramp's maximum, makes the
//! maximum the client's; past it, the maximum stands and a note says why.

use super::ramp;
use super::ramp::Ramp;
use super::tally::{IdCount, Tally};

/// Why the client, not the server, set the run's limit (`None` when it did
/// not), and the notes that explain a limit that stands.
pub fn judge(t: &Tally, ramp: Option<&Ramp>) -> (Option<String>, Vec<String>) {
    let mut notes = Vec::new();
    let behind = fell_behind(t, ramp, &mut notes);
    let drops = dropped(t, ramp, &mut notes);
    if let (Some(at), Some(r)) = (t.stopped_at, ramp) {
        notes.push(format!(
            "the ramp stopped at {at:.1}s, a second behind its schedule; the maximum of {:.0} qps \
             comes from the seconds before",
            r.max_throughput
        ));
    }
    (behind.or(drops), notes)
}

fn fell_behind(t: &Tally, ramp: Option<&Ramp>, notes: &mut Vec<String>) -> Option<String> {
    let (at, by, rate) = t.fell_behind?;
    if let Some(r) = ramp.filter(|r| ramp::maximum_stands(&r.seconds, r.max_throughput)) {
        let sent = r.seconds.iter().map(|s| s.offered).max().unwrap_or(0);
        notes.push(format!(
            "the load generator fell behind its schedule at {at:.1}s (scheduled {rate:.0} qps), \
             but had really sent {sent} queries in a second, more than the server's maximum of \
             {:.0} answered: the maximum stands",
            r.max_throughput
        ));
        return None;
    }
    if let Some(why) = ids_ran_out(&t.ids, rate) {
        return Some(why);
    }
    Some(format!(
        "the load generator fell behind its schedule by {by} queries at {at:.1}s \
         (offered {rate:.0} qps): the client, not the server, set the limit from there"
    ))
}

/// Why the generator fell behind when its query IDs ran out, and the fix.
pub fn ids_ran_out(ids: &IdCount, rate: f64) -> Option<String> {
    let at = ids.ran_out_at?;
    Some(format!(
        "the load generator fell behind the asked rate ({rate:.0} qps) at {at:.1}s: all {} \
         query IDs of its {} client(s) were in flight, each held up to the {} timeout, which \
         allows at most {:.0} qps of a server that does not answer; add clients \
         (-c, or connections) or shorten the timeout (--timeout)",
        ids.ids,
        ids.clients,
        crate::units::format_duration(ids.timeout),
        ids.max_rate()
    ))
}

/// Answers dropped at the generator's own sockets. In a ramp, drops first
/// seen more than a second after the maximum's second (the count is read
/// once a second) came past it, and leave the maximum standing.
fn dropped(t: &Tally, ramp: Option<&Ramp>, notes: &mut Vec<String>) -> Option<String> {
    let n = t.dropped();
    let first = t.dropped_by_sec.iter().position(|&d| d > 0)?;
    if let Some(r) = ramp.filter(|r| first > r.max_at_second as usize + 1) {
        notes.push(format!(
            "the load generator's own receive buffers dropped {n} answers from second {first}, \
             past the maximum at second {}: the maximum stands, and those losses are the client's",
            r.max_at_second
        ));
        return None;
    }
    Some(format!(
        "the load generator's own receive buffers dropped {n} answers (first seen in second \
         {first}): it did not read them in time, so the losses and the rate are the client's"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp_with_max_at(second: u32) -> Ramp {
        Ramp {
            max_throughput: 150.0,
            max_at_second: second,
            seconds: vec![super::ramp::RampSecond {
                offered: 200,
                answered: 150,
                ..Default::default()
            }],
            ..Ramp::default()
        }
    }

    #[test]
    fn drops_before_the_maximum_make_it_the_clients() {
        let mut t = Tally::new(true);
        t.dropped_at(3, 40);
        t.dropped_at(5, 2);
        let (reason, notes) = judge(&t, Some(&ramp_with_max_at(3)));
        let reason = reason.expect("drops in the maximum's second");
        assert!(
            reason.contains("dropped 42 answers (first seen in second 3)"),
            "{reason}"
        );
        assert!(notes.is_empty());
        // Seen two seconds after the maximum: they came past it.
        let (reason, notes) = judge(&t, Some(&ramp_with_max_at(1)));
        assert_eq!(reason, None);
        assert!(notes[0].contains("the maximum stands"), "{notes:?}");
        // A flat run has no maximum to stand: any drop is the client's.
        assert!(judge(&t, None).0.is_some());
        assert_eq!(judge(&Tally::new(false), None), (None, vec![]));
    }

    #[test]
    fn ids_that_ran_out_say_so_with_the_fix() {
        let mut t = Tally::new(false);
        t.fell_behind = Some((1.0, 900_000, 3_000_000.0));
        t.ids = IdCount {
            ids: 523_776,
            clients: 8,
            timeout: std::time::Duration::from_secs(1),
            ran_out_at: None,
        };
        let plain = judge(&t, None).0.unwrap();
        assert!(plain.contains("fell behind its schedule"), "{plain}");
        t.ids.ran_out_at = Some(1.0);
        let why = judge(&t, None).0.unwrap();
        assert!(
            why.contains("all 523776 query IDs of its 8 client(s) were in flight"),
            "{why}"
        );
        assert!(why.contains("at most 523776 qps"), "{why}");
        assert!(why.contains("add clients (-c"), "{why}");
        assert!(why.contains("shorten the timeout (--timeout)"), "{why}");
    }

    #[test]
    fn a_ramp_that_stopped_says_where() {
        let mut t = Tally::new(true);
        t.fell_behind = Some((9.2, 7000, 69_000.0));
        t.stopped_at = Some(10.4);
        let (reason, notes) = judge(&t, Some(&ramp_with_max_at(8)));
        assert_eq!(
            reason, None,
            "fell behind at 69k qps, past the 150 qps maximum"
        );
        assert!(
            notes.iter().any(|n| n.contains("stopped at 10.4s")),
            "{notes:?}"
        );
    }
}
