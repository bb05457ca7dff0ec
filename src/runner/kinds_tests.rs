//! The registries, and the proof that a new kind is one module plus one
//! registry line: the test-only `fake` server kind (`server/fake.rs`) and
//! `fake` load kind (`load/fake.rs`) are registered that way and nothing
//! else knows them, yet a whole run with them validates, runs, stores and
//! reports in the fake kind's own unit.

use crate::recipe::Experiment;
use crate::runner::{self, RunOptions};
use crate::shutdown::Shutdown;
use crate::store::Store;

#[test]
fn kind_names_are_unique_in_each_family() {
    let mut servers = crate::server::kind_names();
    let mut loads = crate::load::kind_names();
    let (ns, nl) = (servers.len(), loads.len());
    servers.sort_unstable();
    servers.dedup();
    loads.sort_unstable();
    loads.dedup();
    assert_eq!((servers.len(), loads.len()), (ns, nl));
}

#[test]
fn every_load_kind_declares_distinct_error_kinds() {
    for k in crate::load::KINDS {
        assert!(!k.error_kinds.is_empty(), "{} counts no errors", k.name);
        for (i, e) in k.error_kinds.iter().enumerate() {
            assert!(!k.error_kinds[..i].contains(e), "{}: {e:?} twice", k.name);
        }
    }
}

#[test]
fn every_parallelism_setting_is_a_setting_of_its_kind() {
    for k in crate::server::KINDS {
        for setting in k.parallelism {
            let mut t = toml::Table::new();
            t.insert(setting.to_string(), toml::Value::Integer(2));
            let err = (k.compile)(&t)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                !err.contains("unknown field"),
                "{}.{setting}: {err}",
                k.name
            );
        }
    }
}

#[test]
fn every_requirement_names_a_package_and_a_path() {
    let servers = crate::server::KINDS.iter().flat_map(|k| k.requires);
    let loads = crate::load::KINDS.iter().flat_map(|k| k.requires);
    for r in servers
        .chain(loads)
        .chain(crate::kinds::BENCH_TOOLS)
        .chain(crate::kinds::TEST_TOOLS)
    {
        assert!(!r.package.is_empty() && !r.paths.is_empty(), "{r:?}");
    }
    let fake = crate::server::kind("fake").unwrap();
    assert_eq!(fake.requires[0].package, "fake-server-package");
}

#[test]
fn unknown_kinds_are_refused_with_the_list() {
    let err = crate::server::kind("apache").unwrap_err().to_string();
    assert!(err.contains("nginx, postgres, mariadb, external"), "{err}");
    let err = crate::load::kind("grpc").unwrap_err().to_string();
    assert!(err.contains("http, pg, mysql"), "{err}");
}

const FAKE_EXPERIMENT: &str = r#"
name = "fake"
[server]
kind = "fake"
[load]
kind = "fake"
frames = 50
[sweep]
connections = [1, 2]
[trials]
duration = "200ms"
warmup = "0s"
min = 4
max = 4
[[system]]
label = "slow"
baseline = true
server = { speed = 1 }
[[system]]
label = "fast"
server = { speed = 3 }
"#;

/// Runs `text` through the real runner into a fresh store; returns the
/// stored run and how many trials ran.
fn run_fake(text: &str) -> (crate::store::RunData, u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fake.toml");
    std::fs::write(&path, text).unwrap();
    let exp = Experiment::load(&path, false).unwrap();
    let mut store = Store::open(&dir.path().join("s.sqlite"), crate::catalog()).unwrap();
    let opts = RunOptions {
        resume: None,
        base_dir: dir.path().join("work"),
        progress: false,
        label: None,
        revision: None,
        repeat_of: None,
        seed: None,
    };
    let summary = runner::run(&exp, &mut store, &opts, &Shutdown::new()).unwrap();
    assert_eq!(summary.trials_failed, 0);
    (store.load_run("latest").unwrap(), summary.trials_run)
}

#[test]
fn a_fake_kind_runs_end_to_end_through_the_registry() {
    let (data, trials) = run_fake(FAKE_EXPERIMENT);
    assert_eq!(trials, 16);
    // 50 frames per connection per second over 0.2 s, times the speed.
    let at = |system: &str, point: u32| {
        let t = data.trials_at(system, point).next().unwrap();
        t.measurement.as_ref().unwrap().requests
    };
    assert_eq!((at("slow", 0), at("fast", 0), at("fast", 1)), (10, 30, 60));
    let text = crate::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("throughput in frames/s"), "{text}");
    assert!(text.contains("+200.0%"), "{text}");
}

/// Validation compiles every (system, point) pair once; the run reads no
/// settings table, and each trial builds one driver for its warmup and
/// its measured window (before the plan, two per trial and a re-parse at
/// every build).
#[test]
fn the_experiment_is_compiled_once_and_a_trial_builds_one_driver() {
    use crate::load::fake::COUNTS;
    let text = FAKE_EXPERIMENT
        .replace("warmup = \"0s\"", "warmup = \"50ms\"")
        .replace("min = 4\nmax = 4", "min = 2\nmax = 2");
    let counts = || COUNTS.with(|c| (c.compiled.get(), c.drivers.get()));
    let before = counts();
    let exp = Experiment::parse(std::path::Path::new("f.toml"), &text, false).unwrap();
    let compiled = counts();
    // 2 systems x 2 points, once each.
    assert_eq!((compiled.0 - before.0, compiled.1 - before.1), (4, 0));
    assert_eq!(exp.plan.systems.len(), 2);
    let (_, trials) = run_fake(&text);
    assert_eq!(trials, 8);
    let after = counts();
    // run_fake loads the file again (4 more compiles), then only builds drivers.
    assert_eq!((after.0 - compiled.0, after.1 - compiled.1), (4, 8));
}

#[test]
fn a_fake_kind_is_checked_by_its_own_rules() {
    let bad = FAKE_EXPERIMENT.replace("speed = 3", "speed = 0");
    let err = Experiment::parse(std::path::Path::new("f.toml"), &bad, false).unwrap_err();
    assert!(
        err.to_string().contains("speed must be at least 1"),
        "{err}"
    );
    let bad = FAKE_EXPERIMENT.replace("frames = 50", "frames = \"many\"");
    let err = Experiment::parse(std::path::Path::new("f.toml"), &bad, false).unwrap_err();
    assert!(
        err.to_string()
            .contains("`frames`: expected a whole number"),
        "{err}"
    );
    assert_eq!(err.field, "load.frames");
}

/// `[trials] noise` is stored with the run, printed in the header and used
/// for the verdicts: a deterministic +20% is a difference under the default
/// 2% floor and noise under a 30% one.
#[test]
fn the_runs_own_noise_floor_prints_and_judges() {
    let plus_20 = FAKE_EXPERIMENT
        .replace("speed = 3 }", "speed = 1 }\nload = { frames = 60 }")
        .replace("connections = [1, 2]", "connections = [1]");
    let (data, _) = run_fake(&plus_20);
    assert_eq!(data.run.noise, 0.02);
    let text = crate::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("2% noise floor"), "{text}");
    assert!(text.contains("+20.0% (p="), "{text}");

    let noisy = plus_20.replace("warmup = \"0s\"", "warmup = \"0s\"\nnoise = 0.3");
    let (data, _) = run_fake(&noisy);
    assert_eq!(data.run.noise, 0.3);
    let text = crate::report::terminal::render_width(&data, false, 120);
    assert!(text.contains("(Mann-Whitney U, 30% noise floor)"), "{text}");
    assert!(!text.contains("+20.0% (p="), "{text}");
    assert!(text.contains("~ (p="), "{text}");
    let html = crate::report::html::render(&data);
    assert!(html.contains("reaches inside the 30% noise floor"));
}

/// The workload declares its dataset and the runner hands it to the
/// server: the fake load's `scale` reaches the fake server, which records
/// what it was started with. A `"load.scale"` axis is a dataset axis, and
/// even with `restart = "never"` each point's server holds that point's data.
#[test]
fn the_runner_gives_the_server_the_loads_dataset() {
    let text = FAKE_EXPERIMENT
        .replace("frames = 50", "frames = 50\nscale = 7")
        .replace(
            "connections = [1, 2]",
            "connections = [1]\n\"load.scale\" = [2, 3]",
        )
        .replace("min = 4\nmax = 4", "min = 2\nmax = 2\nrestart = \"never\"");
    let (data, trials) = run_fake(&text);
    assert_eq!(trials, 8);
    let axis = &data.trials[0].point.coords[1];
    assert_eq!(
        axis.target,
        crate::model::AxisTarget::Dataset("scale".into())
    );
    for t in &data.trials {
        let scale = t.point.coords[1].value.as_integer().unwrap();
        let held = t.context.dataset.as_ref().expect("the dataset is recorded");
        assert_eq!(held.description, format!("pgbench scale {scale}"), "{t:?}");
    }
    // Without the axis, every trial runs against the `[load]` declaration.
    let (data, _) = run_fake(&FAKE_EXPERIMENT.replace("frames = 50", "frames = 50\nscale = 7"));
    let held: Vec<_> = data
        .trials
        .iter()
        .map(|t| t.context.dataset.clone().unwrap().description)
        .collect();
    assert!(held.iter().all(|d| d == "pgbench scale 7"), "{held:?}");
}

#[test]
fn a_dataset_in_server_settings_is_refused_by_every_server_kind() {
    for k in crate::server::KINDS {
        let mut t = toml::Table::new();
        t.insert("scale".into(), toml::Value::Integer(2));
        let e = crate::server::compile(k, &t).err().unwrap().to_string();
        assert!(e.contains("move `scale` to [load]"), "{}: {e}", k.name);
    }
}

#[test]
fn a_kind_without_data_refuses_a_declared_dataset() {
    use crate::model::Dataset;
    assert!(crate::server::refuse_dataset("nginx", None).is_ok());
    let e = crate::server::refuse_dataset("nginx", Some(&Dataset::Pgbench { scale: 3 }))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "could not start nginx: nginx holds no dataset, but the workload declares \
         pgbench scale 3; use a load kind that speaks to nginx"
    );
}

#[test]
fn a_kind_listens_on_its_host_address_exactly_when_its_settings_take_listen() {
    let mut with_listen = toml::Table::new();
    with_listen.insert("listen".into(), toml::Value::String("198.18.0.11".into()));
    for k in crate::server::KINDS {
        let on_host = k.settings_on_host(&toml::Table::new(), "198.18.0.11".parse().unwrap());
        let check = (k.compile)(&with_listen).map(drop);
        if k.listens_on_host_address {
            assert_eq!(on_host, with_listen, "{}", k.name);
            assert!(check.is_ok(), "{}: {:?}", k.name, check.err());
        } else {
            assert!(on_host.is_empty(), "{}: {on_host:?}", k.name);
            let err = check.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains("listen"), "{} takes `listen`: {err}", k.name);
        }
    }
}

#[test]
fn the_dns_lab_kinds_are_those_whose_record_builds_a_lab() {
    let labs: Vec<_> = crate::server::KINDS
        .iter()
        .filter(|k| k.dns_lab.is_some())
        .map(|k| k.name)
        .collect();
    assert_eq!(labs, ["nsd", "unbound", "bind"]);
}

#[test]
fn one_lookup_serves_every_registry() {
    let err = crate::kinds::lookup("load", crate::load::KINDS, "gopher").unwrap_err();
    assert!(
        err.starts_with("unknown load kind `gopher`; expected one of: http, pg"),
        "{err}"
    );
    assert_eq!(
        crate::kinds::lookup("server", crate::server::KINDS, "fake")
            .unwrap()
            .name,
        "fake"
    );
    let err = crate::server::kind("gopher").unwrap_err().to_string();
    assert!(
        err.contains("unknown server kind `gopher`; expected one of: nginx"),
        "{err}"
    );
}
