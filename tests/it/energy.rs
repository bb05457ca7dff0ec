//! Energy end to end with the real binary and a real nginx on loopback:
//! a fixture tree stands in for sysfs (`SCALELAB_SYSFS_ROOT`), its RAPL
//! counter advanced by a writer thread at a known rate and wrapping at
//! `max_energy_range_uj`; a `command` meter printing a fixed wattage; and
//! a host with no source, whose output is as a run without energy.
//! (This machine has no /sys/class/powercap: no real reading is made.)

use crate::support::run::Lab;
use crate::support::{stderr, stdout};
use scalelab::probe::energy::{NO_COUNTER, SYSFS_ROOT_ENV};
use scalelab::store::{RunData, Store, TrialStatus};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The fixture's package power: 40 W, as µJ per second.
const RATE_UJ_PER_S: f64 = 40e6;
/// The fixture's counter range: 60 J, so it wraps every 1.5 s.
const MAX_RANGE_UJ: u64 = 60_000_000;

/// A powercap tree whose package-0 counter a thread advances at
/// [`RATE_UJ_PER_S`], wrapping at [`MAX_RANGE_UJ`], until dropped.
struct FakeRapl {
    root: tempfile::TempDir,
    stop: Arc<AtomicBool>,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl FakeRapl {
    fn start() -> FakeRapl {
        let root = tempfile::tempdir().unwrap();
        let zone = root.path().join("class/powercap/intel-rapl:0");
        std::fs::create_dir_all(&zone).unwrap();
        std::fs::write(zone.join("name"), "package-0\n").unwrap();
        std::fs::write(
            zone.join("max_energy_range_uj"),
            format!("{MAX_RANGE_UJ}\n"),
        )
        .unwrap();
        // A core subdomain, which is inside the package's count: not summed.
        let core = root.path().join("class/powercap/intel-rapl:0:0");
        std::fs::create_dir_all(&core).unwrap();
        std::fs::write(core.join("name"), "core\n").unwrap();
        std::fs::write(core.join("energy_uj"), "0\n").unwrap();
        write_counter(&zone, 50_000_000);
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, dir) = (stop.clone(), zone.clone());
        let writer = std::thread::spawn(move || {
            realtime_priority();
            let t0 = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                let uj = 50_000_000.0 + t0.elapsed().as_secs_f64() * RATE_UJ_PER_S;
                write_counter(&dir, uj as u64 % MAX_RANGE_UJ);
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        FakeRapl {
            root,
            stop,
            writer: Some(writer),
        }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }
}

impl Drop for FakeRapl {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

/// Writes `energy_uj` whole (a rename), so a reader never sees half a number.
fn write_counter(zone: &Path, uj: u64) {
    let tmp = zone.join(".energy_uj.tmp");
    std::fs::write(&tmp, format!("{uj}\n")).unwrap();
    std::fs::rename(&tmp, zone.join("energy_uj")).unwrap();
}

/// The writer stands in for hardware that counts whatever the machine is
/// doing: on a loaded 2-CPU machine it must not wait for a CPU, or the
/// counter it shows lags the rate. Best effort (SCHED_FIFO needs root).
fn realtime_priority() {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: sched_setscheduler reads `param` only; pid 0 is this thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

const TRIALS: &str = "[trials]\nduration = \"3s\"\nwarmup = \"500ms\"\nmin = 2\nmax = 2\nsample_interval = \"250ms\"\n";
/// The RAPL run's trials: long enough that a reading held up by a busy
/// machine at either end of the window moves the watts by well under 2%.
const LONG_TRIALS: &str = "[trials]\nduration = \"8s\"\nwarmup = \"500ms\"\nmin = 2\nmax = 2\nsample_interval = \"250ms\"\n";

fn run_lab(lab: &Lab, sysfs: &Path) -> std::process::Output {
    let out = lab.run().env(SYSFS_ROOT_ENV, sysfs).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

fn load(lab: &Lab) -> RunData {
    Store::open(&lab.store).unwrap().load_run("latest").unwrap()
}

fn export(lab: &Lab, format: &str) -> String {
    let store = lab.store.to_string_lossy();
    let out = crate::support::run(&["--store", &store, "export", "latest", "--format", format]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn rapl_watts_follow_the_counter_across_its_wraps() {
    let rapl = FakeRapl::start();
    let lab = Lab::new(&format!("[sweep]\nconnections = [2, 8]\n{LONG_TRIALS}"));
    let out = run_lab(&lab, rapl.path());
    drop(rapl);
    let data = load(&lab);
    assert_eq!(data.trials.len(), 4);
    let mut wraps = 0;
    for t in &data.trials {
        assert_eq!(t.status, TrialStatus::Ok, "{:?}", t.error);
        let p = t.probe.as_ref().unwrap();
        let e = p.energy.as_ref().expect("an energy summary");
        assert_eq!(e.domains, ["package-0"]);
        assert!(e.client_shares_meter, "a local run shares the package");
        let watts = p.watts.unwrap();
        let want = RATE_UJ_PER_S / 1e6;
        assert!(
            (watts / want - 1.0).abs() < 0.02,
            "trial {}: {watts} W against the counter's {want} W ({:?})",
            t.id,
            p.warnings
        );
        // Every interval had its energy: no wrap was taken for a reset
        // (which leaves its interval out, with a warning).
        assert!(
            !p.warnings.iter().any(|w| w.contains("energy")),
            "{:?}",
            p.warnings
        );
        assert!(
            e.measured_s > 0.9 * p.window_s,
            "{} of {} s",
            e.measured_s,
            p.window_s
        );
        let ops = p.ops_per_joule.unwrap();
        let rps = t.throughput().unwrap();
        assert!(
            (ops - rps / watts).abs() <= 1e-9 * ops,
            "{ops} != {rps} / {watts}"
        );
        wraps += e.wraps;
    }
    // ≈8.5 s of sampling per trial at 1.5 s per wrap.
    assert!(
        wraps >= 4 * 4,
        "the counter wrapped {wraps} times in 4 trials"
    );
    // The terminal gets its columns and says what it measured.
    let text = stdout(&out);
    assert!(text.contains("ops/J") && text.contains(" W "), "{text}");
    assert!(text.contains("energy (rapl: package-0)"), "{text}");
    assert!(
        text.contains("the load generator ran on the measured package"),
        "{text}"
    );
    assert!(!stderr(&out).contains(NO_COUNTER));
    // JSON: each trial's probe has watts and ops/J, each point its energy,
    // and the document follows the documented schema.
    let doc: serde_json::Value = serde_json::from_str(&export(&lab, "json")).unwrap();
    for t in doc["trials"].as_array().unwrap() {
        assert!(t["probe"]["watts"].is_number() && t["probe"]["ops_per_joule"].is_number());
    }
    for p in doc["points"].as_array().unwrap() {
        assert!(p["energy"]["summary"]["median"].is_number(), "{p}");
    }
    let bad = crate::support::json_schema::violations(&crate::support::export_schema(), &doc);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // CSV: watts and ops_per_joule columns.
    let csv = export(&lab, "csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (w, o) = (col("watts"), col("ops_per_joule"));
    for row in csv.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let watts: f64 = f[w].parse().unwrap();
        assert!((watts / 40.0 - 1.0).abs() < 0.02, "{row}");
        assert!(f[o].parse::<f64>().unwrap() > 0.0, "{row}");
    }
}

#[test]
fn a_command_meter_printing_a_fixed_wattage_gives_that_wattage() {
    let lab = Lab::new(&format!(
        "[sweep]\nconnections = [4]\n{TRIALS}[probe]\nenergy = \"command\"\n\
         energy_command = \"echo '    Instantaneous power reading:   137 Watts'\"\n"
    ));
    let empty = tempfile::tempdir().unwrap();
    run_lab(&lab, empty.path());
    for t in &load(&lab).trials {
        let p = t.probe.as_ref().unwrap();
        let watts = p.watts.unwrap();
        assert!((watts - 137.0).abs() < 1e-9, "{watts} W: {:?}", p.warnings);
        let e = p.energy.as_ref().unwrap();
        assert!(!e.domains[0].contains("command:"), "{:?}", e.domains);
        assert!(
            e.domains[0].starts_with("echo "),
            "the source is the report's: {:?}",
            e.domains
        );
        let rps = t.throughput().unwrap();
        assert!((p.ops_per_joule.unwrap() - rps / 137.0).abs() < 1e-9 * rps);
    }
}

#[test]
fn without_a_source_only_one_line_is_added() {
    let empty = tempfile::tempdir().unwrap();
    // Two systems on this machine: the line is still said once.
    let body = format!(
        "[sweep]\nconnections = [4]\n{TRIALS}[[system]]\nlabel = \"one\"\n\
         [[system]]\nlabel = \"two\"\nserver = {{ worker_processes = 2 }}\n"
    );
    let auto = Lab::new(&body);
    let off = Lab::new(&format!("{body}[probe]\nenergy = \"off\"\n"));
    let auto_out = run_lab(&auto, empty.path());
    let off_out = run_lab(&off, empty.path());
    let said = |o: &std::process::Output| stderr(o).matches(NO_COUNTER).count();
    assert_eq!(
        (said(&auto_out), said(&off_out)),
        (1, 0),
        "{}",
        stderr(&auto_out)
    );
    // The terminal table, the JSON and the CSV have the same shape as a run
    // that never looked for a meter, and nothing of energy in them.
    let table_header = |o: &std::process::Output| {
        let text = stdout(o);
        let line = text
            .lines()
            .find(|l| l.contains("p99"))
            .unwrap_or_default()
            .to_string();
        line.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert_eq!(table_header(&auto_out), table_header(&off_out));
    assert!(!stdout(&auto_out).contains("ops/J"));
    for format in ["json", "csv"] {
        let (a, b) = (export(&auto, format), export(&off, format));
        for word in ["watts", "ops_per_joule", "energy"] {
            assert!(!a.contains(word), "{format} has `{word}`");
        }
        if format == "json" {
            let keys = |t: &str| key_paths(&serde_json::from_str(t).unwrap(), "");
            assert_eq!(keys(&a), keys(&b));
        } else {
            assert_eq!(a.lines().next(), b.lines().next());
        }
    }
}

/// Every key path in a JSON document (array elements merged), sorted.
fn key_paths(v: &serde_json::Value, at: &str) -> Vec<String> {
    let mut out: Vec<String> = match v {
        serde_json::Value::Object(o) => o
            .iter()
            .flat_map(|(k, v)| {
                let here = format!("{at}.{k}");
                let mut below = key_paths(v, &here);
                below.push(here);
                below
            })
            .collect(),
        serde_json::Value::Array(a) => a
            .iter()
            .flat_map(|v| key_paths(v, &format!("{at}[]")))
            .collect(),
        _ => Vec::new(),
    };
    out.sort();
    out.dedup();
    out
}
