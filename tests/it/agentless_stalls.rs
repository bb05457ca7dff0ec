//! A host without an agent that stalls mid-trial (issue 46, items 3.2-3.4
//! and 4.4), in the netns lab with real sshd: its probe shell frozen
//! (SIGSTOP of the real `/bin/sh`), its sshd frozen, its veth cut (`ip
//! link set down` of its bridge port), and its work directory on a full
//! tmpfs. No stalled trial is stored as ok, each failure names its cause,
//! `--resume` runs the lost ones again, and nothing is left on the host.

use crate::agentless::{entries_starting, eventually};
use crate::multihost::{run_cmd, spawn_run, Lab};
use crate::multihost_systems::lines_from;
use crate::support::{stderr, stdout};
use scalelab::store::{FailureCause, RunData, Store, Trial, TrialStatus};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// nginx on h1 without an agent, loaded from h2: one point, `trials`
/// trials of 3 s, sampled every 500 ms, its access log in `dir/access.log`.
fn recipe(dir: &Path, trials: u32) -> PathBuf {
    let text = format!(
        "name = \"stall\"\n[hosts]\nserver = \"root@198.18.0.11\"\nclients = [\"root@198.18.0.12\"]\n\
         agent = false\n[server]\nkind = \"nginx\"\nworker_processes = 1\naccess_log_path = \"{}\"\n\
         [load]\nkind = \"http\"\npath = \"/\"\n[sweep]\nconnections = [2]\n\
         [trials]\nduration = \"3s\"\nwarmup = \"0s\"\nmin = {trials}\nmax = {trials}\n\
         sample_interval = \"500ms\"\n",
        access_log(dir).display()
    );
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, text).unwrap();
    exp
}

fn access_log(dir: &Path) -> PathBuf {
    dir.join("access.log")
}

fn load(dir: &Path) -> RunData {
    Store::open(&dir.join("s.sqlite"), scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap()
}

fn signal(pids: &[u32], sig: i32) {
    for p in pids {
        // SAFETY: kill(2) on PIDs read from the lab host's namespace.
        unsafe { libc::kill(*p as i32, sig) };
    }
}

/// Waits until h1's nginx logged a request from h2 (the first trial's
/// window has begun, its probe shell sampling), then 1 s more; the probe
/// shell's PIDs.
fn probe_shell_in_a_window(lab: &Lab, log: &Path) -> Vec<u32> {
    assert!(
        eventually(Duration::from_secs(90), || lines_from(log, "198.18.0.12")
            > 0),
        "no request from h2 reached h1's nginx"
    );
    std::thread::sleep(Duration::from_secs(1));
    lab.processes(1, "scalelab-probe-")
}

/// Every trial's (status, error, cause), for the assertions' messages.
fn said(data: &RunData) -> Vec<(TrialStatus, Option<String>, Option<FailureCause>)> {
    data.trials
        .iter()
        .map(|t| (t.status, t.error.clone(), t.failure_cause))
        .collect()
}

/// An ok trial's probe window is its load's, within one interval and slack.
fn assert_no_bent_window(data: &RunData) {
    for t in data.trials.iter().filter(|t| t.status == TrialStatus::Ok) {
        let (p, m) = (t.probe.as_ref().unwrap(), t.measurement.as_ref().unwrap());
        assert!(
            p.window_s <= m.duration_s.0 + 0.5 + 0.5,
            "an ok trial with a {:.2} s probe window for a {:.2} s load",
            p.window_s,
            m.duration_s.0
        );
    }
}

/// `--resume` of the latest run: its stderr, after checking it succeeded.
fn resume(lab: &Lab, dir: &Path, exp: &Path, data: &RunData) -> String {
    let out = run_cmd(lab, dir, exp)
        .args(["--resume", &data.run.id.to_string()])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{}\n{err}", stdout(&out));
    err
}

/// Nothing of the run is left on h1: no nginx, no shell, no script.
fn assert_nothing_left(lab: &Lab, dir: &Path) {
    let gone = || {
        lab.processes(1, "nginx").is_empty()
            && lab.processes(1, "scalelab-bare-").is_empty()
            && lab.processes(1, "scalelab-probe-").is_empty()
    };
    assert!(
        eventually(Duration::from_secs(20), gone),
        "left on h1: {:?}",
        lab.processes(1, "scalelab-")
    );
    let mut left = entries_starting(dir, "scalelab-probe-");
    left.extend(entries_starting(dir, "scalelab-bare-"));
    assert!(left.is_empty(), "left in the work directory: {left:?}");
}

fn failed(data: &RunData) -> Vec<&Trial> {
    data.trials
        .iter()
        .filter(|t| t.status == TrialStatus::Failed)
        .collect()
}

#[test]
fn a_frozen_probe_shell_fails_its_trial_rather_than_bend_its_window() {
    // Issue 46 (3.2): the probe shell frozen 6 s gave a 6.6 s probe window
    // for a 2 s load, server CPU 0.146 instead of 0.39, status ok.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = recipe(dir.path(), 2);
    let child = spawn_run(&lab, dir.path(), &exp);
    let shells = probe_shell_in_a_window(&lab, &access_log(dir.path()));
    assert!(!shells.is_empty(), "no probe shell on h1");
    signal(&shells, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(6));
    signal(&shells, libc::SIGCONT);
    let out = child.wait_with_output().unwrap();
    let data = load(dir.path());
    assert_eq!(data.trials.len(), 2, "{}", stderr(&out));
    assert_no_bent_window(&data);
    let failed = failed(&data);
    assert_eq!(failed.len(), 1, "{:?}", said(&data));
    let reason = failed[0].error.as_deref().unwrap_or("");
    assert!(
        reason.contains("the probe's window ran") && reason.contains("root@198.18.0.11"),
        "{reason}"
    );
    assert_eq!(failed[0].failure_cause, Some(FailureCause::LostHost));
    let err = resume(&lab, dir.path(), &exp, &data);
    assert!(err.contains("retrying 1 trial(s)"), "{err}");
    let data = load(dir.path());
    assert!(failed_none(&data), "{:?}", said(&data));
    assert_nothing_left(&lab, dir.path());
}

fn failed_none(data: &RunData) -> bool {
    data.trials.len() == 2 && data.trials.iter().all(|t| t.status == TrialStatus::Ok)
}

#[test]
fn a_frozen_sshd_is_the_hosts_ssh_not_a_dead_server_and_is_retried() {
    // Issue 46 (3.4): "the server died during the trial" while nginx
    // served the whole window; never retried.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = recipe(dir.path(), 2);
    let child = spawn_run(&lab, dir.path(), &exp);
    probe_shell_in_a_window(&lab, &access_log(dir.path()));
    // Every sshd of h1: the listener and the session's own process.
    let sshd = lab.processes(1, "sshd");
    assert!(sshd.len() >= 2, "{sshd:?}");
    signal(&sshd, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(9));
    signal(&sshd, libc::SIGCONT);
    let out = child.wait_with_output().unwrap();
    let data = load(dir.path());
    let first = &data.trials[0];
    assert_eq!(first.status, TrialStatus::Failed, "{:?}", said(&data));
    let reason = first.error.as_deref().unwrap_or("");
    assert!(
        reason.contains("stopped answering over ssh")
            && reason.contains("still answered")
            && !reason.contains("the server died"),
        "{reason}\n{}",
        stderr(&out)
    );
    assert_eq!(first.failure_cause, Some(FailureCause::LostHost));
    assert_no_bent_window(&data);
    let err = resume(&lab, dir.path(), &exp, &data);
    assert!(err.contains("retrying"), "{err}");
    let data = load(dir.path());
    assert!(failed_none(&data), "{:?}", said(&data));
    assert_nothing_left(&lab, dir.path());
}

/// Sets h1's port on the lab's bridge down or up.
fn link(lab: &Lab, state: &str) {
    let out = Command::new("ip")
        .args(["-n", &lab.bridge_ns(), "link", "set", "p1", state])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_cut_network_is_a_lost_host_resume_retries_it_and_no_script_is_left() {
    // Issue 46 (3.3): a failed trial with no cause, never retried, and a
    // scalelab-probe-*.sh left in the host's work directory.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = recipe(dir.path(), 2);
    let child = spawn_run(&lab, dir.path(), &exp);
    probe_shell_in_a_window(&lab, &access_log(dir.path()));
    link(&lab, "down");
    std::thread::sleep(Duration::from_secs(9));
    link(&lab, "up");
    let out = child.wait_with_output().unwrap();
    let data = load(dir.path());
    let first = &data.trials[0];
    assert_eq!(first.status, TrialStatus::Failed, "{:?}", said(&data));
    let reason = first.error.as_deref().unwrap_or("");
    assert!(
        reason.contains("the host stopped answering over ssh: "),
        "{reason}\n{}",
        stderr(&out)
    );
    for t in failed(&data) {
        assert!(t.failure_cause.is_some(), "{:?}", said(&data));
    }
    assert_no_bent_window(&data);
    let err = resume(&lab, dir.path(), &exp, &data);
    assert!(err.contains("retrying"), "{err}");
    let data = load(dir.path());
    assert!(failed_none(&data), "{:?}", said(&data));
    assert_nothing_left(&lab, dir.path());
}

/// A tmpfs of `kib` KiB mounted at `dir` in h1's mount namespace (its
/// sshd's: `ip netns exec` gave the lab hosts their own), unmounted on
/// drop. The coordinator sees the empty directory under it.
struct Tmpfs {
    dir: PathBuf,
    sshd: String,
}

impl Tmpfs {
    fn mount(lab: &Lab, dir: PathBuf, kib: u64) -> Tmpfs {
        std::fs::create_dir(&dir).unwrap();
        let sshd = lab.processes(1, "sshd")[0].to_string();
        let t = Tmpfs { dir, sshd };
        let size = format!("size={kib}k,mode=755");
        let d = t.dir.display().to_string();
        t.on_h1(&["mount", "-t", "tmpfs", "-o", &size, "tmpfs", &d]);
        t
    }

    fn on_h1(&self, args: &[&str]) -> String {
        let out = Command::new("nsenter")
            .args(["-t", &self.sshd, "-m", "--"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    }

    /// Fills it up to `leave` bytes free (or less), as h1 sees it.
    fn fill(&self, leave: u64) {
        let d = self.dir.display().to_string();
        let text = self.on_h1(&["df", "-P", "-k", &d]);
        let line = text.lines().nth(1).unwrap();
        let free = line
            .split_whitespace()
            .nth(3)
            .unwrap()
            .parse::<u64>()
            .unwrap()
            * 1024;
        let count = format!("count={}", free.saturating_sub(leave) / 1024);
        let of = format!("of={d}/filler");
        self.on_h1(&["dd", "if=/dev/zero", &of, "bs=1024", &count, "status=none"]);
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let d = self.dir.display().to_string();
        let _ = Command::new("nsenter")
            .args(["-t", &self.sshd, "-m", "--", "umount", &d])
            .output();
    }
}

#[test]
fn a_full_disk_on_a_host_without_an_agent_is_named_as_a_full_disk() {
    // Issue 46 (4.4): "cannot write server.sh (an argument holds a
    // quote?)", filed as a server-start failure.
    let lab = Lab::up(2);
    let dir = tempfile::tempdir().unwrap();
    let exp = recipe(dir.path(), 1);
    for leave in [0, 24 * 1024] {
        let work = Tmpfs::mount(&lab, dir.path().join(format!("full-{leave}")), 256);
        work.fill(leave);
        let out = run_cmd(&lab, dir.path(), &exp)
            .env("SCALELAB_WORKDIR", &work.dir)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{}", stderr(&out));
        let data = load(dir.path());
        let t = &data.trials[0];
        let reason = t.error.as_deref().unwrap_or("");
        assert!(
            reason.contains(&format!("the host's disk is full: {}", work.dir.display()))
                && reason.contains("bytes free")
                && !reason.contains("quote"),
            "{leave} bytes left: {reason}"
        );
        assert_eq!(t.failure_cause, Some(FailureCause::DiskFull), "{reason}");
        assert!(lab.processes(1, "nginx").is_empty());
        drop(work);
    }
}
