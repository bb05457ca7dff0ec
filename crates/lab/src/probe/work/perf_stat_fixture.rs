//! Real `perf stat -x,` output of machines with a PMU
//! (`tests/fixtures/perf-stat/`, each file naming its source), read back
//! as the readings this probe takes from the kernel. This VM has no PMU,
//! so its hardware counters are tested here: each line's count, the time
//! its counter ran and the share of the time it was on the PMU are the
//! `read(2)` of a `perf_event_open` counter that perf printed, and they go
//! through the probe's own scaling ([`Reading::scaled`]) and the counts of
//! [`WorkCounter::finish`](super::WorkCounter::finish).

use super::perf::Reading;
use super::{counts, Figure};
use scalelab_record::probe::work::WorkCounts;

/// One event's line of `perf stat -x,`.
#[derive(Clone, Debug, PartialEq)]
pub struct StatLine {
    /// The event (`cycles`, `instructions`).
    pub event: String,
    /// perf's count: scaled for the time the counter was multiplexed out.
    pub count: u64,
    /// The counter's `read(2)` that perf scaled to `count`.
    pub reading: Reading,
    /// perf's derived metric (`0.51` for "insn per cycle"), where it gave one.
    pub metric: Option<f64>,
    /// The metric's unit (`insn per cycle`).
    pub metric_unit: String,
}

/// The windows of fixture `name` (blank lines apart), its `# source:`
/// lines left out; a fixture that names no source fails the test, and a
/// line that is not perf's format panics with the line.
pub fn windows(name: &str) -> Vec<Vec<StatLine>> {
    let path = format!("{}/tests/fixtures/perf-stat/{name}", crate::REPO);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# source: "), "{name} names no source");
    let mut out: Vec<Vec<StatLine>> = vec![Vec::new()];
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        if line.trim().is_empty() {
            out.push(Vec::new());
            continue;
        }
        let parsed =
            parse_line(line).unwrap_or_else(|| panic!("{name}: not perf's format: {line}"));
        if let Some(p) = parsed {
            out.last_mut().unwrap().push(p);
        }
    }
    out.retain(|w| !w.is_empty());
    out
}

/// `value,unit,event,run_ns,percent,metric,metric unit`; `Some(None)` for
/// a line of a time in milliseconds (`cpu-clock`), which is no count.
fn parse_line(line: &str) -> Option<Option<StatLine>> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() < 7 {
        return None;
    }
    if f[1] == "msec" {
        return Some(None);
    }
    let count: u64 = f[0].parse().ok()?;
    let running_ns: u64 = f[3].parse().ok()?;
    let percent: f64 = f[4].parse().ok()?;
    if !(percent > 0.0 && percent <= 100.0) {
        return None;
    }
    let reading = Reading {
        value: (count as f64 * percent / 100.0).round() as u64,
        enabled_ns: (running_ns as f64 * 100.0 / percent).round() as u64,
        running_ns,
    };
    Some(Some(StatLine {
        event: f[2].to_string(),
        count,
        reading,
        metric: f[5].parse().ok(),
        metric_unit: f[6].to_string(),
    }))
}

/// The probe's figure for one of perf's event names.
fn figure(event: &str) -> Option<Figure> {
    Some(match event {
        "cycles" | "cpu-cycles" => Figure::Cycles,
        "instructions" => Figure::Instructions,
        "branch-misses" => Figure::BranchMisses,
        "LLC-load-misses" => Figure::LlcMisses,
        "context-switches" => Figure::ContextSwitches,
        "cpu-migrations" => Figure::Migrations,
        _ => return None,
    })
}

/// A window's counts as the probe gives them: each event the probe counts
/// scaled by the probe's own [`Reading::scaled`], into the probe's counts.
pub fn work_counts(window: &[StatLine]) -> WorkCounts {
    let totals: Vec<(Figure, Option<u64>)> = window
        .iter()
        .filter_map(|l| Some((figure(&l.event)?, l.reading.scaled())))
        .collect();
    counts("/fixture".into(), 1.0, &totals, None, Vec::new())
}
