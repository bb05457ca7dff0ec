//! Off-CPU profiles: the time the server's threads spent blocked, by stack
//! (Brendan Gregg, "Off-CPU Analysis",
//! <https://www.brendangregg.com/offcpuanalysis.html>).
//!
//! Recorded with `perf record -e sched:sched_switch -g`: every context
//! switch, with the stack of the thread that leaves the CPU. A server
//! thread that leaves in a sleeping state (`prev_state` not `R`: it blocked
//! rather than being preempted) starts a wait; the switch that puts the
//! same thread back on a CPU (`next_pid`) ends it. The wait's length in
//! nanoseconds is added to the stack it blocked in, so frame widths are
//! time, not samples. Folded as inferno folds (`comm;outer;...;leaf ns`,
//! kernel frames suffixed `_[k]`) and drawn by inferno.

use super::Folded;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The perf script fields [`fold_switches`] reads.
pub const SCRIPT_FIELDS: &str = "comm,pid,tid,cpu,time,event,trace,ip,sym,dso";

/// One switch event's header.
#[derive(Debug, PartialEq)]
struct Switch {
    pid: u32,
    tid: u32,
    comm: String,
    time_ns: u64,
    blocked: bool,
    next_tid: u32,
}

/// Folds `perf script -F SCRIPT_FIELDS` output of `sched:sched_switch`
/// events into blocked time per stack of the processes in `pids`. Waits
/// still open at the end of the recording are left out (their end is
/// unknown). `samples` counts the waits folded.
pub fn fold_switches(script: &str, pids: &HashSet<u32>) -> Folded {
    let mut open: HashMap<u32, (u64, String)> = HashMap::new();
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    let mut waits = 0u64;
    for event in script.split("\n\n") {
        let mut lines = event.lines().filter(|l| !l.trim().is_empty());
        let Some(sw) = lines.next().and_then(parse_header) else {
            continue;
        };
        if let Some((start, stack)) = open.remove(&sw.next_tid) {
            *folded.entry(stack).or_default() += sw.time_ns.saturating_sub(start);
            waits += 1;
        }
        if sw.blocked && pids.contains(&sw.pid) {
            let frames: Vec<String> = lines.filter_map(frame).collect();
            let stack = std::iter::once(sw.comm.clone())
                .chain(frames.into_iter().rev())
                .collect::<Vec<_>>()
                .join(";");
            open.insert(sw.tid, (sw.time_ns, stack));
        }
    }
    let text = folded
        .iter()
        .filter(|(_, ns)| **ns > 0)
        .map(|(s, ns)| format!("{s} {ns}\n"))
        .collect();
    Folded {
        text,
        samples: waits,
    }
}

/// `postgres  9783/9783  [001] 12345.678901234: sched:sched_switch: prev_comm=...`
/// (perf right-aligns the comm, so a header may start with spaces; stack
/// lines have no event name).
fn parse_header(line: &str) -> Option<Switch> {
    let (head, trace) = line.split_once(" sched:sched_switch:")?;
    let mut words = head.split_ascii_whitespace().rev();
    let time = words.next()?.trim_end_matches(':');
    let _cpu = words.next()?;
    let (pid, tid) = words.next()?.split_once('/')?;
    let comm: Vec<&str> = words.collect();
    let comm = comm.into_iter().rev().collect::<Vec<_>>().join(" ");
    let field = |name: &str| {
        let at = trace.find(&format!("{name}="))? + name.len() + 1;
        trace[at..].split_ascii_whitespace().next()
    };
    let (secs, frac) = time.split_once('.')?;
    let frac_ns = format!("{frac:0<9}");
    Some(Switch {
        pid: pid.parse().ok()?,
        tid: tid.parse().ok()?,
        comm,
        time_ns: secs.parse::<u64>().ok()? * 1_000_000_000
            + frac_ns.get(..9)?.parse::<u64>().ok()?,
        blocked: !field("prev_state")?.starts_with('R'),
        next_tid: field("next_pid")?.parse().ok()?,
    })
}

/// A stack line `\tffffffff81a0b1c1 __schedule+0x2f1 ([kernel.kallsyms])`
/// as a frame name: kernel frames end in `_[k]`; unknown symbols keep
/// their object's name.
fn frame(line: &str) -> Option<String> {
    let mut words = line.split_ascii_whitespace();
    let _addr = words.next()?;
    let rest: Vec<&str> = words.collect();
    let (sym, dso) = match rest.split_last() {
        Some((last, syms)) if last.starts_with('(') => (syms.join(" "), *last),
        _ => (rest.join(" "), ""),
    };
    let sym = sym.split("+0x").next().unwrap_or("").trim().to_string();
    let kernel = dso.contains("kernel.kallsyms");
    let name = if sym.is_empty() || sym == "[unknown]" {
        let object = dso.trim_matches(|c| c == '(' || c == ')');
        format!("[{}]", object.rsplit('/').next().unwrap_or("unknown"))
    } else {
        sym
    };
    Some(if kernel { format!("{name}_[k]") } else { name })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shaped as `perf script -F comm,pid,tid,cpu,time,event,trace,ip,sym,dso` prints it on
    // this machine (Linux 6.1, perf 6.1).
    const SCRIPT: &str = "\
postgres  9783/9783  [001] 100.000100000: sched:sched_switch: prev_comm=postgres prev_pid=9783 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
\tffffffff81a0b1c1 __schedule+0x2f1 ([kernel.kallsyms])
\tffffffff81a0b7aa schedule+0x5a ([kernel.kallsyms])
\tffffffff8137c0d0 do_epoll_wait+0x4a0 ([kernel.kallsyms])
\t7f0000001234 epoll_wait+0x54 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t55550000aaaa WaitEventSetWait+0x80 (/usr/lib/postgresql/15/bin/postgres)
\t55550000bbbb ProcSleep+0x3c0 (/usr/lib/postgresql/15/bin/postgres)

    swapper     0/0     [001] 100.000600000: sched:sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=postgres next_pid=9783 next_prio=120
\tffffffff81a0b1c1 __schedule+0x2f1 ([kernel.kallsyms])

postgres  9783/9783  [001] 100.001000000: sched:sched_switch: prev_comm=postgres prev_pid=9783 prev_prio=120 prev_state=R+ ==> next_comm=rustc next_pid=4000 next_prio=120
\tffffffff81a0b1c1 __schedule+0x2f1 ([kernel.kallsyms])

rustc  4000/4000  [001] 100.002000000: sched:sched_switch: prev_comm=rustc prev_pid=4000 prev_prio=120 prev_state=S ==> next_comm=postgres next_pid=9783 next_prio=120
\tffffffff81a0b1c1 __schedule+0x2f1 ([kernel.kallsyms])

postgres  9783/9783  [000] 100.003000000: sched:sched_switch: prev_comm=postgres prev_pid=9783 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
\tffffffff81a0b1c1 __schedule+0x2f1 ([kernel.kallsyms])
\tffffffff81a0c000 io_schedule+0x12 ([kernel.kallsyms])
\t7f0000005678 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)

swapper  0/0  [000] 100.013000000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=postgres next_pid=9783 next_prio=120
";

    #[test]
    fn blocked_time_goes_to_the_stack_the_thread_blocked_in() {
        let f = fold_switches(SCRIPT, &HashSet::from([9783]));
        // 0.5 ms asleep on the latch; preempted (R+) time is not blocked; 10 ms in I/O.
        assert_eq!(f.samples, 2);
        assert_eq!(
            f.text,
            "postgres;ProcSleep;WaitEventSetWait;epoll_wait;do_epoll_wait_[k];schedule_[k];__schedule_[k] 500000\n\
             postgres;[libc.so.6];io_schedule_[k];__schedule_[k] 10000000\n"
        );
        // Other processes' waits are not the server's.
        assert!(fold_switches(SCRIPT, &HashSet::from([4000]))
            .text
            .is_empty());
    }

    #[test]
    fn headers_and_frames() {
        let h = parse_header("my proc  12/13  [000] 5.5: sched:sched_switch: prev_comm=a prev_pid=13 prev_prio=1 prev_state=S ==> next_comm=b next_pid=7 next_prio=1").unwrap();
        assert_eq!((h.pid, h.tid, h.comm.as_str()), (12, 13, "my proc"));
        assert_eq!((h.time_ns, h.blocked, h.next_tid), (5_500_000_000, true, 7));
        assert_eq!(parse_header("\tffff x ([kernel.kallsyms])"), None);
        assert_eq!(
            frame("\tffffffff81 futex_wait+0x1 ([kernel.kallsyms])").unwrap(),
            "futex_wait_[k]"
        );
    }
}
