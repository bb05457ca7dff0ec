//! The off-CPU part of the report's "Profiles" section: per profiled
//! system and point, a flame graph of the time the server's threads spent
//! blocked, by the stack they blocked in (widths are time, from
//! `sched:sched_switch`, see `profile::offcpu`), and each system's
//! differential between its peak and its collapse.

use crate::flame_svg::{diff_svg, flame_svg};
use crate::store::ProfileRecord;
use maud::{html, Markup};

/// A graph's title and its SVG (or why it could not be drawn).
pub(crate) type Graph = (String, Result<String, crate::flame_svg::FlameError>);

/// The off-CPU graphs of `profiles` drawn by `figure`, or the one line
/// that says why there are none; nothing when no profile tried.
pub fn section(profiles: &[ProfileRecord], figure: fn(&Graph) -> Markup) -> Markup {
    let traced: Vec<&ProfileRecord> = profiles.iter().filter(|p| p.offcpu.is_some()).collect();
    let why = profiles.iter().find_map(|p| p.offcpu_error.as_deref());
    if traced.is_empty() && why.is_none() {
        return Markup::default();
    }
    html! {
        h3 { "Off-CPU: where the server's threads waited" }
        @if traced.is_empty() {
            p class="note" { "no off-CPU profile: " (why.unwrap_or("")) }
        } @else {
            p class="muted" {
                "Blocked time of the server's threads by the stack they blocked in, from every \
                 context switch (" code { "perf record -e sched:sched_switch -g" } ") over a third \
                 extra trial at the same point. Frame widths are time (ns) off-CPU and not \
                 runnable, summed over threads; preemption is left out. Lock waits show as \
                 futex, semaphore or latch frames, I/O as io_schedule, the network as socket waits."
            }
            @for p in &traced { (figure(&single(p))) }
            @for g in peak_against_collapse(&traced) { (figure(&g)) }
        }
    }
}

fn single(p: &ProfileRecord) -> Graph {
    let title = format!("{} at {} ({}): off-CPU", p.system, p.point.label(), p.role);
    let total: u64 = p
        .offcpu
        .iter()
        .flat_map(|f| f.lines())
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    let sub = format!(
        "{:.2} s blocked in all, summed over the server's threads",
        total as f64 / 1e9
    );
    let svg = flame_svg(&title, &sub, p.offcpu.as_deref().unwrap_or(""));
    (title, svg)
}

fn peak_against_collapse(traced: &[&ProfileRecord]) -> Vec<Graph> {
    let mut out = Vec::new();
    for peak in traced.iter().filter(|p| p.role == "peak") {
        let Some(c) = traced
            .iter()
            .find(|p| p.system == peak.system && p.role == "collapse")
        else {
            continue;
        };
        let title = format!(
            "{}: off-CPU at the collapse ({}) against the peak ({})",
            peak.system,
            c.point.label(),
            peak.point.label()
        );
        let sub =
            "differential: red = a larger share of blocked time at the collapse than at the peak";
        let svg = diff_svg(
            &title,
            sub,
            peak.offcpu.as_deref().unwrap_or(""),
            c.offcpu.as_deref().unwrap_or(""),
        );
        out.push((title, svg));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Point;

    fn record(index: u32, role: &str, offcpu: Option<&str>, why: Option<&str>) -> ProfileRecord {
        ProfileRecord {
            system: "pg".into(),
            point: Point::new(index, &[("connections", (index * 8).into())]),
            role: role.into(),
            samples: 40,
            folded: Some("postgres;main 10\n".into()),
            plain_rps: Some(1000.0),
            profiled_rps: Some(980.0),
            error: None,
            offcpu: offcpu.map(str::to_string),
            offcpu_error: why.map(str::to_string),
        }
    }

    const PEAK: &str = "postgres;PostgresMain;ReadCommand;do_epoll_wait_[k] 9000000000\npostgres;ProcSleep;WaitEventSetWait;do_epoll_wait_[k] 1000000000\n";
    const COLLAPSE: &str = "postgres;PostgresMain;ReadCommand;do_epoll_wait_[k] 2000000000\npostgres;ProcSleep;WaitEventSetWait;do_epoll_wait_[k] 8000000000\n";

    #[test]
    fn each_point_gets_a_graph_and_the_collapse_a_differential() {
        let html = section(
            &[
                record(1, "peak", Some(PEAK), None),
                record(2, "collapse", Some(COLLAPSE), None),
            ],
            crate::flames::figure,
        )
        .into_string();
        assert_eq!(
            html.matches("<iframe").count(),
            3,
            "2 graphs + the differential"
        );
        assert!(html.contains("pg at connections=16 (collapse): off-CPU"));
        assert!(html.contains(
            "pg: off-CPU at the collapse (connections=16) against the peak (connections=8)"
        ));
    }

    #[test]
    fn without_tracepoints_one_line_says_so() {
        let why = "tracepoints (sched:sched_switch) are not permitted here";
        let html =
            section(&[record(1, "peak", None, Some(why))], crate::flames::figure).into_string();
        assert!(
            html.contains(&format!("no off-CPU profile: {why}")),
            "{html}"
        );
        assert!(!html.contains("<iframe"));
        assert_eq!(
            section(&[record(1, "peak", None, None)], crate::flames::figure).into_string(),
            ""
        );
    }
}
