//! Helpers: child process trees that are always killed (by their own
//! process group id), and /proc readers.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A child in its own process group; the whole group is SIGKILLed and the
/// child reaped on drop.
pub struct Group {
    pub child: Child,
    lines: Option<mpsc::Receiver<String>>,
}

impl Group {
    /// Spawns `cmd` as the leader of a new process group with stdout piped.
    pub fn spawn(mut cmd: Command) -> Group {
        cmd.process_group(0)
            .stdout(Stdio::piped())
            .stdin(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn test process");
        let out = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Group {
            child,
            lines: Some(rx),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes a line to the child's stdin.
    pub fn send(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("piped stdin");
        writeln!(stdin, "{line}").expect("write to child");
    }

    /// Waits (bounded) until the child printed every line in `wanted`.
    pub fn expect_lines(&mut self, wanted: &[&str], timeout: Duration) {
        let rx = self.lines.as_ref().expect("stdout reader");
        let mut missing: Vec<&str> = wanted.to_vec();
        let end = Instant::now() + timeout;
        while !missing.is_empty() {
            let left = end.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => missing.retain(|w| *w != line.trim()),
                Err(_) => panic!("child did not print {missing:?} within {timeout:?}"),
            }
        }
    }

    /// Waits (bounded) for the child to exit, returning its status.
    pub fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let end = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < end,
                "child did not exit within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: signals exactly the process group this test created.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// The direct and indirect children of `root`, from /proc/*/stat ppids.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(stat) = scalelab::procfs::pid::stat(pid) {
            parent_of.push((pid, stat.ppid));
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(child, _) in parent_of.iter().filter(|(_, pp)| *pp == p) {
            out.push(child);
            frontier.push(child);
        }
    }
    out
}

/// Waits (bounded) until `root` has at least `n` descendants.
pub fn wait_descendants(root: u32, n: usize) -> Vec<u32> {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let d = descendants(root);
        if d.len() >= n {
            return d;
        }
        assert!(Instant::now() < end, "{root} never had {n} children");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The cgroup path of `pid` in the v1 hierarchy of `controller` (or the v2
/// path when no v1 hierarchy has it).
pub fn cgroup_of(pid: u32, controller: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("read cgroup");
    let v1 = text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        ctrls
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_string())
    });
    v1.or_else(|| {
        text.lines()
            .find_map(|l| l.strip_prefix("0::").map(String::from))
    })
    .expect("cgroup line")
}

/// The CPU `pid` last ran on (field 39 of /proc/<pid>/stat).
pub fn last_cpu(pid: u32) -> Option<usize> {
    Some(scalelab::procfs::pid::stat(pid)?.processor? as usize)
}

/// The system Python: a version manager's shim (pyenv's is a bash script
/// that forks dozens of processes) would add processes and CPU to the trees
/// the tests measure.
pub fn python() -> &'static str {
    if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// `sh -c script` with `$PY` set to [`python`].
pub fn sh_py(script: &str) -> Command {
    let mut c = sh(script);
    c.env("PY", python());
    c
}

/// A shell command that burns CPU forever.
pub const BURN_FOREVER: &str = "while :; do :; done";

pub fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

/// A unique suffix for cgroup names, so parallel test runs don't collide.
pub fn unique(tag: &str) -> String {
    format!("it-{tag}-{}", std::process::id())
}
