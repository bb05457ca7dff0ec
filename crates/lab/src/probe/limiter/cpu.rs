//! The CPU checks: the server saturated at its own parallelism (its busiest
//! thread on a CPU nearly all the window, or its threads together on 85%
//! of its CPUs), and CPUs full and shared: its threads waited in the run
//! queue while the CPUs it may use were full, with the load generator
//! (`CpusShared`), other processes (`BackgroundLoad`) or its own threads
//! (`ServerCpu`) taking the rest.
//!
//! USE applies per resource: a single-threaded resource at 100% is
//! saturated whatever the other CPUs do (Brendan Gregg,
//! <https://www.brendangregg.com/usemethod.html>). An nginx worker is one
//! thread; on a CPU 97% of the window, it is the limit, whatever the
//! host's other CPU does.

use super::numbers::{LimiterKind, LimiterNumbers};
use super::threads::WORKER_SEEN_SHARE;
use super::LimiterFigures;
use crate::probe::background::BACKGROUND_SHARE;
use crate::probe::ProbeSummary;

/// The server used at least this share of the CPUs it may use: CPU saturated.
pub const SERVER_CPU_SHARE: f64 = 0.85;
/// A server thread seen most of the window (`threads::WORKER_SEEN_SHARE`)
/// was on a CPU at least this share of it: CPU saturated at the server's
/// parallelism (one nginx worker can use one CPU).
pub const THREAD_ONCPU_SHARE: f64 = 0.90;
/// The CPUs the server may use were busy (any process) at least this share
/// of the window: full.
pub const CPUS_FULL_SHARE: f64 = 0.90;
/// The server's threads waited in the run queue at least this share of
/// their runnable time (wait over wait plus on-CPU) while its CPUs were
/// full: they wanted a CPU a third as long again as they had one.
pub const RUNQ_WAIT_SHARE: f64 = 0.25;
/// The server's threads waited in the run queue at least this share of
/// their runnable time: as long as they ran. A CPU cannot be idle that
/// long while they wait (a wakeup's delay is microseconds), so its CPUs
/// were contended even where the sampled busy share stayed under
/// [`CPUS_FULL_SHARE`] (a pinned PostgreSQL on a shared machine: its CPU
/// 73% its own, 19% others', the rest unsampled gaps, half its runnable
/// time waiting).
pub const RUNQ_CONTENDED_SHARE: f64 = 0.50;
/// The run queue's share of the sampled time is ranked against blocked
/// time at the lock threshold's scale (`verdict::LOCK_WAIT_SHARE`).
pub const RUNQ_RANKED_AS: f64 = 0.30;
/// The load generator took at least this share of the server's CPUs: it
/// shares them (the same tenth as `probe::background::BACKGROUND_SHARE`).
pub const LOADGEN_CPU_SHARE: f64 = 0.10;

/// The busy share of the CPUs the server may use (`cpus`; all when
/// `None`), every process counted, from the probe's per-CPU split.
pub fn busy_share(summary: &ProbeSummary, cpus: Option<&[usize]>) -> Option<f64> {
    let Some(cpus) = cpus else {
        return (summary.window_s > 0.0).then_some(summary.cpu_busy);
    };
    let busy: Vec<f64> = summary
        .per_cpu
        .iter()
        .filter(|c| cpus.contains(&(c.cpu as usize)))
        .map(|c| c.split.busy)
        .collect();
    (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64)
}

/// The busiest thread seen most of the window: `(on-CPU, runnable)`
/// shares of the time it was seen; and how many such threads were
/// saturated: on a CPU [`THREAD_ONCPU_SHARE`] of it, or runnable (on a CPU
/// or in the run queue) that long while waiting less than
/// [`RUNQ_WAIT_SHARE`] of their runnable time (they wanted a CPU all along
/// and mostly had one).
pub(super) fn busiest_thread(f: &LimiterFigures) -> (Option<(f64, f64)>, u32) {
    let shares: Vec<(f64, f64)> = f
        .busiest_threads
        .iter()
        .filter(|t| t.seen_s >= WORKER_SEEN_SHARE * f.window_s && t.seen_s > 0.0)
        .map(|t| (t.oncpu_s / t.seen_s, (t.oncpu_s + t.runq_wait_s) / t.seen_s))
        .collect();
    let saturated = |(cpu, runnable): &(f64, f64)| {
        *cpu >= THREAD_ONCPU_SHARE
            || (*runnable >= THREAD_ONCPU_SHARE && 1.0 - cpu / runnable < RUNQ_WAIT_SHARE)
    };
    let full = shares.iter().filter(|s| saturated(s)).count();
    let busiest = shares
        .into_iter()
        .reduce(|a, b| if b.0 > a.0 { b } else { a });
    (busiest, full as u32)
}

/// The CPU finding, if any: `(factor over its threshold, kind, why)`.
pub(super) fn check(n: &LimiterNumbers) -> Option<(f64, LimiterKind, String)> {
    let own = n.server_cpu_share.unwrap_or(0.0);
    let thread = n.busiest_thread_oncpu_share.unwrap_or(0.0);
    let runnable = n.busiest_thread_runnable_share.unwrap_or(thread);
    let saturated = n.threads_at_full_cpu.unwrap_or(0) > 0;
    if own >= SERVER_CPU_SHARE || saturated {
        let factor = (own / SERVER_CPU_SHARE).max(runnable / THREAD_ONCPU_SHARE);
        let why = if own >= SERVER_CPU_SHARE {
            format!("{}; {}", busy(n), runq(n))
        } else {
            format!("{}; {}", parallelism(n, thread), busy(n))
        };
        return Some((factor, LimiterKind::ServerCpu, why));
    }
    let waited = n.runq_wait_share.unwrap_or(0.0);
    let full = n.cpus_busy_share.unwrap_or(0.0);
    if !cpus_contended(waited, full, runnable) {
        return None;
    }
    // Ranked against blocked time on one scale: the share of the sampled
    // time in the run queue against the lock threshold, as the lock share
    // is of the same samples (tpcb-like on a busy machine: 14% in the run
    // queue, 81% on locks; the run-queue share of runnable time, 83%, is
    // of a different whole).
    let factor = n
        .runqueue_share
        .map_or(waited / RUNQ_WAIT_SHARE, |r| r / RUNQ_RANKED_AS);
    let background = n.background_share.unwrap_or(0.0);
    let client = n.client_cpu_share.unwrap_or(0.0);
    let (kind, why) = if background >= BACKGROUND_SHARE && background >= client {
        (
            LimiterKind::BackgroundLoad,
            format!("{}; {}", busy(n), runq(n)),
        )
    } else if client >= LOADGEN_CPU_SHARE {
        (
            LimiterKind::CpusShared,
            format!(
                "server {:.0}%, load generator {:.0}% of the {} CPU(s) busy {:.0}%; {}",
                own * 100.0,
                client * 100.0,
                n.server_cpus,
                full * 100.0,
                runq(n)
            ),
        )
    } else {
        (LimiterKind::ServerCpu, format!("{}; {}", busy(n), runq(n)))
    };
    Some((factor, kind, why))
}

/// Waiting [`RUNQ_WAIT_SHARE`] of the runnable time on CPUs busy
/// [`CPUS_FULL_SHARE`], or while the busiest thread wanted a CPU (was
/// runnable) [`THREAD_ONCPU_SHARE`] of the window, or
/// [`RUNQ_CONTENDED_SHARE`] whatever their sampled busy share. The busy
/// share averages the window: one nginx worker runnable 99% of it, on a
/// CPU 71% and queued 28% (pidstat: 71% and 28%), had the load generator
/// on the CPUs whenever it waited, yet they read 89.5% busy, idle only
/// while the worker ran alone.
fn cpus_contended(waited: f64, full: f64, busiest_runnable: f64) -> bool {
    waited >= RUNQ_CONTENDED_SHARE
        || (waited >= RUNQ_WAIT_SHARE
            && (full >= CPUS_FULL_SHARE || busiest_runnable >= THREAD_ONCPU_SHARE))
}

fn busy(n: &LimiterNumbers) -> String {
    format!(
        "server busy {:.0}% of its {} CPU(s)",
        n.server_cpu_share.unwrap_or(0.0) * 100.0,
        n.server_cpus
    )
}

fn runq(n: &LimiterNumbers) -> String {
    format!(
        "its threads waited {:.2} s for a CPU, {:.0}% of their runnable time",
        n.runq_wait_s.unwrap_or(0.0),
        n.runq_wait_share.unwrap_or(0.0) * 100.0
    )
}

/// "1 of 1 worker thread(s) saturated: the busiest on a CPU 97% of the
/// window (runnable 99%)".
fn parallelism(n: &LimiterNumbers, busiest: f64) -> String {
    let full = n.threads_at_full_cpu.unwrap_or(1);
    let of = n.workers.unwrap_or(0).max(full);
    format!(
        "{full} of {of} worker thread(s) saturated, wanting a CPU at least {:.0}% of the window: the busiest on a CPU {:.0}% of it (runnable {:.0}%)",
        THREAD_ONCPU_SHARE * 100.0,
        busiest * 100.0,
        n.busiest_thread_runnable_share.unwrap_or(busiest) * 100.0
    )
}
