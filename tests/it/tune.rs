//! `run --tune` (issue 47): every knob of the profile that exists on this
//! machine is set during a real nginx run and put back after a normal end,
//! after Ctrl-C (SIGINT) and after `kill -9`; the test reads each file
//! before, during and after. The fingerprint holds the values, `compare`
//! of a tuned run against an untuned one names them, and `doctor
//! --machine --reset` puts back a leftover. One test covers the endings,
//! so the tune runs never overlap (scalelab refuses a second tuner).
//!
//! The test changes real settings: ASLR to 1 first, so the profile (ASLR
//! 2) has something to change on a machine already at 2. A [`Restore`]
//! guard puts every file it read back when the test ends, fails or
//! panics, and the test process's own reaper does if it is killed.

use crate::support::run::{count_trials, run_cmd, wait_for};
use crate::support::{stderr, stdout};
use scalelab::owned::{self, Removal};
use scalelab::probe::machine::{files, irq_affinities};
use scalelab::store::Store;
use std::ffi::OsStr;
use std::path::Path;

const ASLR: &str = files::ASLR;

/// The two tests both write ASLR: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Puts each file back as it was when [`Restore::keep`] read it.
struct Restore(Vec<(String, String)>);

impl Restore {
    fn keep(&mut self, file: &str) -> String {
        let old = std::fs::read_to_string(file).unwrap().trim().to_string();
        owned::register(Removal::Restore, &[OsStr::new(file), OsStr::new(&old)]);
        self.0.push((file.to_string(), old.clone()));
        old
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        for (file, old) in self.0.drain(..).rev() {
            let _ = std::fs::write(&file, &old);
            owned::forget(Removal::Restore, &[OsStr::new(&file), OsStr::new(&old)]);
        }
    }
}

fn read(file: &str) -> String {
    std::fs::read_to_string(file).unwrap().trim().to_string()
}

/// The files the profile changes on this machine with the server on CPU 1
/// (the last of two or more), and the value each should hold during the
/// run: ASLR, every IRQ that may run on CPU 1 and accepts writes, and the
/// governor and turbo where cpufreq exists.
fn expected(restore: &mut Restore) -> Vec<(String, String)> {
    let online = scalelab::probe::machine::online_cpus();
    let server = *online.last().unwrap();
    let mut want = vec![(ASLR.to_string(), "2".to_string())];
    for (irq, list) in irq_affinities() {
        let file = files::of(files::IRQ_AFFINITY, irq);
        let Some(to) = scalelab::probe::machine::moved_off(&list, &[server], &online) else {
            continue;
        };
        // An IRQ that refuses its own value back refuses the move too.
        if to != list && std::fs::write(&file, &list).is_ok() {
            restore.keep(&file);
            want.push((file, to));
        }
    }
    for cpu in &online {
        let file = files::of(files::GOVERNOR, cpu);
        if Path::new(&file).exists() {
            restore.keep(&file);
            want.push((file, "performance".into()));
        }
    }
    for (file, off) in [(files::NO_TURBO, "1"), (files::BOOST, "0")] {
        if Path::new(file).exists() {
            restore.keep(file);
            want.push((file.into(), off.into()));
            break;
        }
    }
    want
}

fn values(want: &[(String, String)]) -> Vec<String> {
    want.iter().map(|(f, _)| read(f)).collect()
}

const RECIPE: &str = "name = \"tune\"\n[server]\nkind = \"nginx\"\nworker_processes = 1\n\
    server_cpus = 1\n[load]\nkind = \"http\"\npath = \"/\"\nrate = 200\n\
    [trials]\nduration = \"1s\"\nwarmup = \"0s\"\n";

/// Starts a tuned run of `trials` trials, waits until every knob holds its
/// tuned value (returned as read), and returns the child.
fn tuned_run(
    dir: &Path,
    trials: u32,
    want: &[(String, String)],
) -> (std::process::Child, Vec<String>) {
    let exp = dir.join(format!("tuned-{trials}.toml"));
    std::fs::write(&exp, format!("{RECIPE}min = {trials}\nmax = {trials}\n")).unwrap();
    let mut cmd = run_cmd(dir, &dir.join("s.sqlite"), &exp);
    cmd.arg("--tune")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd.spawn().unwrap();
    let tuned = || want.iter().all(|(f, v)| read(f) == *v);
    assert!(
        wait_for(60, tuned),
        "never tuned: {:?} want {want:?}",
        values(want)
    );
    (child, values(want))
}

#[test]
fn tuning_is_set_during_the_run_and_put_back_however_it_ends() {
    assert!(
        scalelab::probe::machine::online_cpus().len() >= 2,
        "the server needs a CPU of its own"
    );
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut restore = Restore(Vec::new());
    restore.keep(ASLR);
    std::fs::write(ASLR, "1").unwrap();
    let want = expected(&mut restore);
    let before = values(&want);
    assert!(want.len() > 1, "no IRQ accepts an affinity here: {want:?}");

    // An untuned run first, for compare.
    let exp = dir.path().join("plain.toml");
    std::fs::write(&exp, format!("{RECIPE}min = 1\nmax = 1\n")).unwrap();
    let plain = run_cmd(dir.path(), &dir.path().join("s.sqlite"), &exp)
        .output()
        .unwrap();
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert_eq!(values(&want), before, "an untuned run changed something");

    // 1. A normal end.
    let (child, during) = tuned_run(dir.path(), 2, &want);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("tune: /proc/sys/kernel/randomize_va_space: 1 -> 2"),
        "{err}"
    );
    assert_eq!(
        values(&want),
        before,
        "after a normal end (during: {during:?})"
    );

    // The fingerprint holds the values and what was changed.
    let store = Store::open(&dir.path().join("s.sqlite"), scalelab::catalog()).unwrap();
    let facts = store.load_run("2").unwrap().run.environment_facts();
    let m = &facts["machine"];
    assert_eq!(m["aslr"], "2", "{m}");
    assert_eq!(m["tuned"][ASLR], "1 -> 2", "{m}");
    let (irq_file, irq_to) = &want[1];
    let irq = irq_file
        .trim_start_matches("/proc/irq/")
        .trim_end_matches("/smp_affinity_list");
    assert_eq!(m["irq_affinity"][irq], irq_to.as_str(), "{m}");
    assert_eq!(m["server_cpus"], "1", "{m}");
    let plain_facts = store.load_run("1").unwrap().run.environment_facts();
    assert_eq!(plain_facts["machine"]["aslr"], "1");
    assert!(plain_facts["machine"].get("tuned").is_none());

    // compare names the tuned knobs.
    let cmp = crate::support::run(&[
        "--store",
        dir.path().join("s.sqlite").to_str().unwrap(),
        "compare",
        "1",
        "2",
        "--each-run",
    ]);
    let text = stdout(&cmp);
    let row = |key: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no {key} row:\n{text}\n{}", stderr(&cmp)))
            .to_string()
    };
    assert!(row("machine.aslr").ends_with(" 2"), "{text}");
    row(&format!("machine.irq_affinity.{irq}"));
    row(&format!("machine.tuned.{ASLR}"));

    // 2. Ctrl-C: SIGINT to the foreground group, as a terminal sends it.
    let (child, _) = tuned_run(dir.path(), 20, &want);
    // SAFETY: kill(2) on the process group the child leads.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert_eq!(values(&want), before, "after Ctrl-C");

    // 3. kill -9: the reaper puts it back.
    let (mut child, _) = tuned_run(dir.path(), 20, &want);
    let _ = wait_for(30, || count_trials(&dir.path().join("s.sqlite")) > 3);
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    assert!(
        wait_for(10, || values(&want) == before),
        "10 s after kill -9: {:?}, before {before:?}",
        values(&want)
    );
}

/// A leftover of a scalelab whose reaper died too: `doctor --machine
/// --reset` writes it back from the state file.
#[test]
fn doctor_reset_puts_back_a_dead_scalelabs_leftover() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let mut restore = Restore(Vec::new());
    let old = restore.keep(ASLR);
    let leftover = if old == "1" { "2" } else { "1" };
    let state = dir.path().join("scalelab-tune-999999999-x");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("state"), format!("write\t{ASLR}\t{leftover}\n")).unwrap();
    let out = crate::support::scalelab()
        .args(["doctor", "--machine", "--reset"])
        .env("SCALELAB_WORKDIR", dir.path())
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains(&format!("reset: {ASLR}: put back `{leftover}`")),
        "{text}"
    );
    assert_eq!(read(ASLR), leftover);
    assert!(!state.exists());
    assert!(text.lines().any(|l| l.starts_with("aslr ")), "{text}");
}
