//! Runs `perf record -e cpu-clock -g` system-wide (or on the server's CPUs)
//! for one measured window, then keeps only the server's process tree and
//! folds its stacks with inferno.
//!
//! Why system-wide and not `perf record -p`: `-p` follows only the threads
//! that exist when perf attaches, so PostgreSQL backends forked for the
//! trial's connections (and nginx workers respawned by the master) are
//! missed. Recording every task and then reading perf's own
//! `PERF_RECORD_FORK` events gives the server's whole tree, including
//! processes born and gone within the window, without racing /proc.

use super::{Folded, ProfileError};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long perf may take to write its file after SIGINT.
const STOP_LIMIT: Duration = Duration::from_secs(20);
/// How long perf may take to start sampling (it first reads every task in
/// /proc, which is slow on a loaded machine).
const START_LIMIT: Duration = Duration::from_secs(20);
/// The descriptors perf's `--control fd:` reads commands from and acks on.
const CTL_FD: i32 = 100;
const ACK_FD: i32 = 101;

/// A `perf record` running in the background.
pub struct Recorder {
    recording: super::Recording,
    child: Child,
    data: PathBuf,
    stderr: PathBuf,
    /// Kept open while perf runs: it watches the control descriptor.
    control: Option<Control>,
}

/// The two pipes of perf's control protocol, our ends.
struct Control {
    ctl: std::fs::File,
    ack: std::fs::File,
}

impl Recorder {
    /// Starts recording every CPU in `cpus` (all when `None`): samples at
    /// a frequency, or every context switch, as `recording` says. Returns
    /// once events are being taken (perf starts with its events off and
    /// acknowledges turning them on); files go into `dir`.
    pub fn start(
        dir: &Path,
        cpus: Option<&[usize]>,
        recording: super::Recording,
    ) -> Result<Self, ProfileError> {
        let data = dir.join("perf.data");
        let stderr = dir.join("perf-record.err");
        let io = |what: &str| {
            let what = what.to_string();
            move |source| ProfileError::Io { what, source }
        };
        let (ctl_r, ctl_w) = pipe().map_err(io("make a pipe"))?;
        let (ack_r, ack_w) = pipe().map_err(io("make a pipe"))?;
        let mut cmd = Command::new("perf");
        let event = match recording {
            super::Recording::OnCpu { .. } => "cpu-clock",
            super::Recording::OffCpu => "sched:sched_switch",
        };
        // -N: no copy of every binary into ~/.debug (a run leaves nothing outside
        // its directory); perf script reads the binaries in place right after.
        cmd.args([
            "record", "-N", "-e", event, "-g", "--quiet", "-a", "-D", "-1",
        ])
        .arg(format!("--control=fd:{CTL_FD},{ACK_FD}"));
        if let super::Recording::OnCpu { frequency } = recording {
            cmd.arg("-F").arg(frequency.to_string());
        }
        cmd.arg("-o").arg(&data);
        if let Some(c) = cpus.filter(|c| !c.is_empty()) {
            cmd.arg("-C")
                .arg(crate::placement::affinity::format_cpu_list(c));
        }
        let err_file =
            std::fs::File::create(&stderr).map_err(io(&format!("create {}", stderr.display())))?;
        let (ctl_child, ack_child) = (ctl_r.as_raw_fd(), ack_w.as_raw_fd());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err_file)
            .process_group(0);
        // SAFETY: only async-signal-safe calls. PDEATHSIG has the kernel
        // kill perf if scalelab dies (kill -9 included), so none outlives
        // it; the control pipes land on the descriptors perf was told.
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                for (from, to) in [(ctl_child, CTL_FD), (ack_child, ACK_FD)] {
                    if libc::dup2(from, to) < 0 || libc::fcntl(to, libc::F_SETFD, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| ProfileError::Unavailable {
            reason: if e.kind() == std::io::ErrorKind::NotFound {
                "perf is not installed (apt-get install linux-perf)".into()
            } else {
                format!("cannot start perf: {e}")
            },
        })?;
        drop((ctl_r, ack_w));
        let mut r = Recorder {
            recording,
            child,
            data,
            stderr,
            control: None,
        };
        let mut control = Control {
            ctl: ctl_w.into(),
            ack: ack_r.into(),
        };
        match r.enable(&mut control) {
            Ok(()) => {
                r.control = Some(control);
                Ok(r)
            }
            // perf fails at once when it may not open events (paranoid
            // level, a container).
            Err(_) if exits_within(&mut r.child, Duration::from_secs(2)) => {
                Err(ProfileError::Unavailable {
                    reason: r.failure_line(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Turns sampling on and waits for perf's acknowledgement.
    fn enable(&mut self, c: &mut Control) -> Result<(), ProfileError> {
        use std::io::Write;
        let failed = |m: &str| ProfileError::Failed(format!("perf record did not start: {m}"));
        c.ctl
            .write_all(b"enable\n")
            .map_err(|e| failed(&e.to_string()))?;
        let end = Instant::now() + START_LIMIT;
        let mut got = Vec::new();
        // perf answers "ack\n" followed by a NUL.
        while !got.contains(&b'\n') {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() || matches!(self.child.try_wait(), Ok(Some(_))) {
                return Err(failed("no acknowledgement"));
            }
            let mut pfd = libc::pollfd {
                fd: c.ack.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one descriptor we own, bounded wait.
            let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(200) as i32) };
            if n > 0 {
                let mut buf = [0u8; 16];
                match c.ack.read(&mut buf) {
                    Ok(0) => return Err(failed("it closed its control pipe")),
                    Ok(k) => got.extend_from_slice(&buf[..k]),
                    Err(e) => return Err(failed(&e.to_string())),
                }
            }
        }
        Ok(())
    }

    /// Stops sampling and folds the samples of `root` and its descendants.
    pub fn finish(mut self, root: u32) -> Result<Folded, ProfileError> {
        // SAFETY: signalling our own child by its PID.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let end = Instant::now() + STOP_LIMIT;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
                _ => break None,
            }
        };
        self.control = None;
        let Some(status) = status else {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return Err(ProfileError::Failed(
                "perf record did not stop within 20 s".into(),
            ));
        };
        // perf exits with SIGINT's code after a clean stop.
        if !self.data.exists() {
            return Err(ProfileError::Failed(format!(
                "perf record wrote no data ({status}): {}",
                self.failure_line()
            )));
        }
        let tasks = perf_script(&self.data, &["--show-task-events", "-F", "pid,tid,comm"])?;
        let pids = tree_from_forks(root, BufReader::new(tasks.as_slice()));
        if self.recording == super::Recording::OffCpu {
            // Every switch: a wait ends when another task switches to it.
            let script = perf_script(&self.data, &["-F", super::offcpu::SCRIPT_FIELDS])?;
            let members = pids.into_iter().collect();
            return Ok(super::offcpu::fold_switches(
                &String::from_utf8_lossy(&script),
                &members,
            ));
        }
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        let stacks = perf_script(&self.data, &["--pid", &list.join(",")])?;
        let folded = fold(&stacks)?;
        Ok(folded)
    }

    fn failure_line(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        first_meaningful_line(&text)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.data);
        let _ = std::fs::remove_file(&self.stderr);
    }
}

fn exits_within(child: &mut Child, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return true,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
            _ => return false,
        }
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors that we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors, owned from here on.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The one line of perf's complaint worth showing.
pub fn first_meaningful_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| {
            let bare = ["error:", "warning:"].contains(&l.to_ascii_lowercase().as_str());
            !bare && l.chars().any(char::is_alphanumeric)
        })
        .unwrap_or("perf record exited at once without a message");
    format!("perf record failed: {line}")
}

fn perf_script(data: &Path, args: &[&str]) -> Result<Vec<u8>, ProfileError> {
    let mut child = Command::new("perf")
        .arg("script")
        .arg("-i")
        .arg(data)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| ProfileError::Failed(format!("cannot run perf script: {e}")))?;
    let mut out = Vec::new();
    if let Some(mut so) = child.stdout.take() {
        so.read_to_end(&mut out).map_err(|e| ProfileError::Io {
            what: "read perf script output".into(),
            source: e,
        })?;
    }
    let status = child.wait().map_err(|e| ProfileError::Io {
        what: "wait for perf script".into(),
        source: e,
    })?;
    if !status.success() {
        return Err(ProfileError::Failed(format!(
            "perf script failed ({status})"
        )));
    }
    Ok(out)
}

/// `root` and every process perf saw forked from a member, transitively.
/// Reads `perf script --show-task-events` lines such as
/// `postgres 0/0 PERF_RECORD_FORK(9783:9783):(25694:25694)`; perf also
/// synthesises these for tasks that existed when it started, and lists
/// them parent first.
pub fn tree_from_forks(root: u32, lines: impl BufRead) -> Vec<u32> {
    let mut members = HashSet::from([root]);
    let mut order = vec![root];
    for line in lines.lines().map_while(Result::ok) {
        let Some((child, parent)) = parse_fork(&line) else {
            continue;
        };
        if members.contains(&parent) && members.insert(child) {
            order.push(child);
        }
    }
    order
}

/// `(child pid, parent pid)` of a FORK event line.
fn parse_fork(line: &str) -> Option<(u32, u32)> {
    let rest = &line[line.find("PERF_RECORD_FORK(")? + "PERF_RECORD_FORK(".len()..];
    let (child, rest) = rest.split_once(':')?;
    let parent = rest.split_once(":(")?.1.split_once(':')?.0;
    Some((child.trim().parse().ok()?, parent.trim().parse().ok()?))
}

/// Folds `perf script` output into stack lines with inferno.
pub fn fold(perf_script: &[u8]) -> Result<Folded, ProfileError> {
    use inferno::collapse::perf::{Folder, Options};
    use inferno::collapse::Collapse;
    let mut opts = Options::default();
    opts.nthreads = 1;
    opts.annotate_kernel = true;
    let mut out = Vec::new();
    Folder::from(opts)
        .collapse(perf_script, &mut out)
        .map_err(|e| ProfileError::Failed(format!("folding the stacks failed: {e}")))?;
    let text = String::from_utf8_lossy(&out).into_owned();
    // Each sample starts with an unindented header line; its frames are
    // indented.
    let samples = perf_script
        .split(|&b| b == b'\n')
        .filter(|l| l.first().is_some_and(|b| !b.is_ascii_whitespace()))
        .count() as u64;
    Ok(Folded { text, samples })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_follows_forks_from_the_root_only() {
        let events = "\
         process_api     0/0     PERF_RECORD_FORK(25694:25694):(1:1)
            postgres     0/0     PERF_RECORD_FORK(25695:25695):(25694:25694)
               :9783     0/0     PERF_RECORD_FORK(9783:9783):(25694:25694)
               :9790     0/0     PERF_RECORD_FORK(9790:9790):(9783:9783)
               rustc     0/0     PERF_RECORD_FORK(4000:4000):(1:1)
               rustc     0/0     PERF_RECORD_FORK(4001:4001):(4000:4000)
            postgres  9783/9783  PERF_RECORD_COMM: postgres:9783/9783
";
        let tree = tree_from_forks(25694, BufReader::new(events.as_bytes()));
        assert_eq!(tree, vec![25694, 25695, 9783, 9790]);
    }

    #[test]
    fn perf_script_output_folds_into_counted_stacks() {
        let script = "\
nginx 1234 [001] 100.000001: 1001001 cpu-clock:
\tffffffff81000001 tcp_sendmsg+0x10 ([kernel.kallsyms])
\t55550001 ngx_http_write_filter+0x5 (/usr/sbin/nginx)

nginx 1234 [001] 100.001001: 1001001 cpu-clock:
\tffffffff81000001 tcp_sendmsg+0x10 ([kernel.kallsyms])
\t55550001 ngx_http_write_filter+0x5 (/usr/sbin/nginx)

nginx 1234 [001] 100.002001: 1001001 cpu-clock:
\t55550002 ngx_epoll_process_events+0x5 (/usr/sbin/nginx)

";
        let f = fold(script.as_bytes()).unwrap();
        assert_eq!(f.samples, 3);
        assert!(
            f.text
                .contains("nginx;ngx_http_write_filter;tcp_sendmsg_[k] 2002002"),
            "{}",
            f.text
        );
        assert!(f.text.contains("nginx;ngx_epoll_process_events 1001001"));
    }

    #[test]
    fn perf_complaints_shrink_to_one_line() {
        let text = "\nError:\nAccess to performance monitoring and observability operations is limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid\n";
        assert_eq!(
            first_meaningful_line(text),
            "perf record failed: Access to performance monitoring and observability operations is limited."
        );
    }
}
