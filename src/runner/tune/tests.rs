//! The profile's plan over two machines' facts, and the knobs it may write.

use super::*;
use crate::probe::machine::Facts;

#[test]
fn only_the_documented_knobs_may_be_written() {
    for ok in [
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "/sys/devices/system/cpu/cpu17/cpufreq/scaling_governor",
        "/sys/devices/system/cpu/intel_pstate/no_turbo",
        "/sys/devices/system/cpu/cpufreq/boost",
        "/proc/irq/24/smp_affinity_list",
        "/proc/sys/kernel/randomize_va_space",
    ] {
        assert!(allowed(ok), "{ok}");
    }
    for bad in [
        "/proc/irq/default_smp_affinity",
        "/proc/irq//smp_affinity_list",
        "/proc/irq/1/../../sys/vm/drop_caches",
        "/sys/devices/system/cpu/cpux/cpufreq/scaling_governor",
        "/proc/sys/kernel/numa_balancing",
        "/etc/passwd",
    ] {
        assert!(!allowed(bad), "{bad}");
    }
}

#[test]
fn on_this_vm_the_profile_moves_irqs_and_sets_aslr_and_says_what_is_missing() {
    // This VM: no cpufreq, 2 CPUs, IRQs at `0-1`, irqbalance not running,
    // ASLR at 1 (as a test sets it), a server pinned to CPU 1.
    let f = Facts {
        online: vec![0, 1],
        server_cpus: Some(vec![1]),
        irqs: vec![(24, "0-1".into()), (28, "0".into())],
        aslr: Some("1".into()),
        ..Facts::default()
    };
    let (changes, notes) = plan(&f, |_| true);
    let w = |file: &str, old: &str, new: &str| Change::Write {
        file: file.into(),
        old: old.into(),
        new: new.into(),
    };
    assert_eq!(
        changes,
        vec![
            w("/proc/irq/24/smp_affinity_list", "0-1", "0"),
            w("/proc/sys/kernel/randomize_va_space", "1", "2"),
        ]
    );
    assert_eq!(
        notes,
        vec![
            "governor: unavailable: no cpufreq driver",
            "turbo: unavailable: no intel_pstate/no_turbo or cpufreq/boost",
            "irqbalance: not running",
        ]
    );
    for change in &changes {
        if let Change::Write { file, .. } = change {
            assert!(allowed(file), "{file}");
        }
    }
}

#[test]
fn on_an_intel_server_every_knob_changes() {
    let f = Facts {
        online: vec![0, 1, 2, 3],
        server_cpus: None,
        governors: vec![(0, "powersave".into()), (1, "performance".into())],
        no_turbo: Some("0".into()),
        boost: Some("1".into()),
        irqbalance: vec![612],
        irqs: vec![(1, "0-3".into())],
        aslr: Some("2".into()),
        ..Facts::default()
    };
    let (changes, notes) = plan(&f, |cpu| cpu == 0);
    assert_eq!(changes.len(), 3, "{changes:?}"); // ASLR is already 2
    assert!(matches!(&changes[0], Change::Write { file, new, .. }
        if file.ends_with("cpu0/cpufreq/scaling_governor") && new == "performance"));
    assert!(matches!(&changes[1], Change::Write { file, new, .. }
        if file.ends_with("intel_pstate/no_turbo") && new == "1"));
    assert_eq!(changes[2], Change::Pause { pid: 612 });
    assert!(
        notes[0].starts_with("IRQs: left where they are: no server of this machine is pinned"),
        "{notes:?}"
    );
}

/// A paused process is woken again by the undo, and a file written back.
#[test]
fn a_pause_and_a_write_are_undone() {
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id();
    let ticks = crate::procfs::pid::start_ticks(pid).unwrap();
    crate::sys::process::signal(pid, libc::SIGSTOP);
    let stopped = || crate::procfs::pid::stat(pid).map(|s| s.state);
    let wait = |want: char| {
        (0..250).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            stopped() == Some(want)
        })
    };
    assert!(wait('T'), "never stopped");
    let said = state::undo(&Undo::Cont {
        pid,
        start_ticks: ticks,
    });
    assert!(said.contains("resumed"), "{said}");
    assert!(wait('S'), "never woken");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn one_scalelab_tunes_at_a_time() {
    let first = lock().unwrap();
    let second = lock().unwrap_err();
    assert_eq!(second.kind(), std::io::ErrorKind::AddrInUse, "{second}");
    drop(first);
    let again = lock().unwrap();
    drop(again);
}
