//! Readings and warnings of two machines' facts: this VM's, and an Intel
//! server's with intel_pstate.

use super::*;

/// This VM as `gather` read it (Linux 6.18 under Firecracker, 2 vCPUs, no
/// cpufreq, cpuidle-haltpoll, 19 IRQs at `0-1`, no irqbalance).
fn this_vm() -> Facts {
    Facts {
        online: vec![0, 1],
        server_cpus: None,
        smt: Some("notsupported".into()),
        idle_states: vec![
            IdleState {
                name: "POLL".into(),
                disable: "0".into(),
                latency_us: "0".into(),
            },
            IdleState {
                name: "haltpoll idle".into(),
                disable: "0".into(),
                latency_us: "1".into(),
            },
        ],
        irqs: (24..=43)
            .filter(|i| *i != 27)
            .map(|i| (i, "0-1".into()))
            .collect(),
        cmdline: "console=ttyS0 quiet cpuidle_haltpoll.force=1 -- --addr 0.0.0.0:2024".into(),
        isolated: Some(String::new()),
        aslr: Some("2".into()),
        thp: Some("madvise".into()),
        numa_balancing: Some("0".into()),
        perf_event_paranoid: Some("2".into()),
        swap_used_bytes: Some(0),
        steal_share: Some(0.0),
        loadavg: Some([0.21, 0.34, 0.23]),
        ..Facts::default()
    }
}

/// An Intel server (intel_pstate in active mode, powersave with
/// balance_performance, turbo on: the driver's defaults, per the kernel's
/// Documentation/admin-guide/pm/intel_pstate.rst), irqbalance running,
/// ASLR off, swap in use and a busy neighbour.
fn intel() -> Facts {
    Facts {
        online: vec![0, 1, 2, 3],
        server_cpus: Some(vec![2, 3]),
        governors: (0..4).map(|c| (c, "powersave".into())).collect(),
        epps: (0..4).map(|c| (c, "balance_performance".into())).collect(),
        no_turbo: Some("0".into()),
        boost: None,
        irqbalance: vec![612],
        irqs: vec![(1, "0-3".into()), (8, "0".into()), (120, "2".into())],
        aslr: Some("0".into()),
        numa_balancing: Some("1".into()),
        swap_used_bytes: Some(3 << 20),
        steal_share: Some(0.05),
        loadavg: Some([2.5, 1.0, 0.5]),
        busy: vec![("stress".into(), 4242, 0.97)],
        ..Facts::default()
    }
}

#[test]
fn this_vm_reads_its_missing_knobs_as_unavailable_with_the_reason() {
    let r = readings(&this_vm());
    assert_eq!(
        r.governor.0,
        "unavailable: no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq is absent)"
    );
    assert!(
        r.turbo
            .0
            .starts_with("unavailable: no intel_pstate/no_turbo"),
        "{r:?}"
    );
    assert!(r.epp.0.starts_with("unavailable: "), "{r:?}");
    assert_eq!(r.deepest_cstate.0, "haltpoll idle (exit latency 1 us)");
    assert_eq!(r.irqbalance.0, "not running");
    assert_eq!(r.server_cpus.0, "0-1 (unpinned: every CPU)");
    assert_eq!(r.irqs_on_server_cpus.0, "19 of 19");
    assert_eq!(r.irq_affinity["26"], "0-1");
    assert_eq!(r.isolcpus.0, "isolcpus=none; kernel: none");
    assert_eq!(
        r.nohz_full.0,
        "nohz_full=none; kernel: no /sys/devices/system/cpu/nohz_full"
    );
    assert_eq!((r.aslr.0.as_str(), r.thp.0.as_str()), ("2", "madvise"));
    assert_eq!(r.swap_used.0, "0 MiB");
    assert_eq!(r.steal.0, "0.0%");
    assert_eq!(r.loadavg.0, "0.21 0.34 0.23");
    assert_eq!(r.busy_processes.0, "none");
    // Nothing here can bias a comparison: no warning.
    assert_eq!(warnings(&this_vm()), Vec::<String>::new());
}

#[test]
fn every_biasing_reading_warns_naming_its_file_and_the_fix() {
    let r = readings(&intel());
    assert_eq!(r.governor.0, "powersave");
    assert_eq!(r.turbo.0, "on (intel_pstate/no_turbo = 0)");
    assert_eq!(r.irqbalance.0, "running (PID 612)");
    assert_eq!(r.irqs_on_server_cpus.0, "2 of 3");
    assert_eq!(r.busy_processes.0, "stress (PID 4242, 97% of a CPU)");
    let w = warnings(&intel());
    let expect = [
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor is `powersave`: write `performance`",
        "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference is `balance_performance`: write `performance`",
        "/sys/devices/system/cpu/intel_pstate/no_turbo is 0 (turbo on): write 1",
        "irqbalance runs (PID 612)",
        "2 of 3 IRQs may run on the server's CPUs 2-3 (/proc/irq/1/smp_affinity_list is `0-3`): write `0-1`",
        "/proc/sys/kernel/randomize_va_space is 0: write 2",
        "/proc/sys/kernel/numa_balancing is 1: write 0",
        "3 MiB of swap is in use",
        "steal is 5.0% of the CPUs (/proc/stat)",
        "the 1-minute load average is 2.50 (/proc/loadavg)",
        "1 other process(es) busy, the first `stress` (/proc/4242/stat, 97% of a CPU)",
    ];
    assert_eq!(w.len(), expect.len(), "{w:#?}");
    for (line, start) in w.iter().zip(expect) {
        assert!(line.starts_with(start), "{line}\n  wanted: {start}");
    }
}

#[test]
fn boost_reads_from_cpufreq_when_there_is_no_intel_pstate() {
    // acpi-cpufreq's global switch (Documentation/admin-guide/pm/cpufreq.rst).
    let f = Facts {
        boost: Some("1".into()),
        ..Facts::default()
    };
    assert_eq!(readings(&f).turbo.0, "on (cpufreq/boost = 1)");
    assert!(warnings(&f)[0]
        .starts_with("/sys/devices/system/cpu/cpufreq/boost is 1 (boost on): write 0"));
    let off = Facts {
        boost: Some("0".into()),
        ..Facts::default()
    };
    assert_eq!(readings(&off).turbo.0, "off (cpufreq/boost = 0)");
}

#[test]
fn readings_round_trip_as_plain_strings() {
    let r = readings(&this_vm());
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["aslr"], "2");
    assert!(
        json.get("tuned").is_none(),
        "an untuned run stores no `tuned`"
    );
    let back: MachineReadings = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);
}
