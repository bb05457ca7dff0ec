//! Was the load generator itself held still during its run? A process
//! stopped by SIGSTOP or SIGTSTP (Ctrl-Z, then `fg`), frozen in its cgroup
//! or suspended with the machine does not send, receive or count while the
//! clock runs on: its window then holds seconds in which nothing could
//! happen, and the rate it reports is not the server's.
//!
//! A watcher thread ticks every 100 ms and, at each tick, compares how
//! much boot-clock time passed (`CLOCK_BOOTTIME`: stopped and suspended
//! time included) with what it asked to sleep plus how long it waited for
//! a CPU (its own `schedstat` run-queue delay). What is left over is time
//! the thread could not run although it was not waiting for a CPU: the
//! whole process was held. A busy machine makes the watcher wait for a
//! CPU, which is run-queue delay and not counted, so load on the machine
//! is not mistaken for a stop.

use super::{Driver, LoadError, LoadResult, LoadSpec};
use crate::probe::own::boottime_ns;
use crate::shutdown::Shutdown;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the watcher wakes up.
const TICK: Duration = Duration::from_millis(100);

/// Runs `driver` with a [`HeldWatch`] around it and records in the result
/// the longest stretch this process was held ([`LoadResult::held`]).
pub fn run_watched(
    driver: &dyn Driver,
    spec: &LoadSpec,
    shutdown: &Shutdown,
) -> Result<LoadResult, LoadError> {
    let watch = HeldWatch::start();
    let run = driver.run(spec, shutdown);
    let held = watch.stop();
    run.map(|mut r| {
        r.held = r.held.max(held);
        r
    })
}

/// A running watcher thread; [`HeldWatch::stop`] ends it and tells the
/// longest stretch it saw the process held.
pub struct HeldWatch {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<Duration>>,
}

impl HeldWatch {
    /// Starts the watcher. If the thread cannot be spawned, the watch
    /// reports nothing held (the run is not refused for it).
    pub fn start() -> HeldWatch {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("held-watch".into())
            .spawn(move || watch(&stopped))
            .ok();
        HeldWatch { stop, thread }
    }

    /// Ends the watcher: the longest stretch in which this process was
    /// held (zero when it never was).
    pub fn stop(mut self) -> Duration {
        let _ = self.stop.send(());
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or(Duration::ZERO)
    }
}

/// The watcher's loop: ticks until told to stop, keeping the largest
/// unexplained gap.
fn watch(stopped: &mpsc::Receiver<()>) -> Duration {
    let mut longest = Duration::ZERO;
    loop {
        let (t0, wait0) = (boottime_ns(), run_queue_ns());
        let done = !matches!(
            stopped.recv_timeout(TICK),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let (t1, wait1) = (boottime_ns(), run_queue_ns());
        // The last tick counts too: after a stop, the run may end and ask
        // the watcher to stop before it wakes up from its tick, so the
        // message and the gap come together. A tick cut short by the stop
        // message slept less than TICK and shows nothing held.
        let gap = Gap {
            passed: Duration::from_nanos(t1.saturating_sub(t0)),
            slept: TICK,
            queued: Duration::from_nanos(wait1.saturating_sub(wait0)),
        };
        longest = longest.max(gap.held());
        if done {
            return longest;
        }
    }
}

/// One tick of the watcher.
#[derive(Clone, Copy, Debug)]
struct Gap {
    /// Boot-clock time between the two readings.
    passed: Duration,
    /// What the thread asked to sleep.
    slept: Duration,
    /// How long it waited for a CPU in that time.
    queued: Duration,
}

impl Gap {
    /// The time the thread neither slept, ran nor waited for a CPU.
    fn held(self) -> Duration {
        self.passed.saturating_sub(self.slept + self.queued)
    }
}

/// The calling thread's run-queue wait so far, in ns (0 when the kernel
/// keeps no schedstat).
fn run_queue_ns() -> u64 {
    crate::procfs::pid::schedstat(crate::procfs::me::THREAD_SCHEDSTAT)
        .map_or(0, |(_, waited)| waited)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn a_busy_machine_is_not_a_stop() {
        let ms = Duration::from_millis;
        let waited = Gap {
            passed: ms(900),
            slept: ms(100),
            queued: ms(800),
        };
        assert_eq!(waited.held(), Duration::ZERO);
        let stopped = Gap {
            passed: ms(5100),
            slept: ms(100),
            queued: ms(3),
        };
        assert_eq!(stopped.held(), ms(4997));
    }

    #[test]
    fn an_undisturbed_watch_sees_no_stop() {
        let watch = HeldWatch::start();
        std::thread::sleep(Duration::from_millis(350));
        let held = watch.stop();
        // Not zero to the nanosecond (timer slack), but far below a stop.
        assert!(held < Duration::from_millis(100), "held {held:?}");
    }

    /// The watcher of a child process that is really stopped (SIGSTOP)
    /// for a second sees it: the child is this test binary, re-run with
    /// only `held_child` and the environment variable set.
    #[test]
    fn a_stopped_process_is_seen() {
        let exe = std::env::current_exe().unwrap();
        let child = Command::new(exe)
            .args(["--exact", "load::held::tests::held_child", "--nocapture"])
            .env("SCALELAB_HELD_CHILD", "1")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(400));
        let pid = child.id() as libc::pid_t;
        // SAFETY: kill with a PID we own (our child, not yet reaped).
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        std::thread::sleep(Duration::from_millis(1200));
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let ms: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("held_ms="))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no held_ms line in {text}"));
        assert!((1000..3000).contains(&ms), "held {ms} ms");
    }

    #[test]
    fn held_child() {
        if std::env::var_os("SCALELAB_HELD_CHILD").is_none() {
            return;
        }
        let watch = HeldWatch::start();
        // Like a load run whose deadline passed during the stop: it ends
        // as soon as it runs again, maybe before the watcher wakes up.
        let started = std::time::Instant::now();
        let mut last = started;
        while started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
            if last.elapsed() > Duration::from_millis(500) {
                break;
            }
            last = std::time::Instant::now();
        }
        println!("held_ms={}", watch.stop().as_millis());
    }
}
