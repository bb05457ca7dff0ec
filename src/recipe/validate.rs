//! Turns experiment text into a checked [`Experiment`], or a [`SpecError`]
//! naming file, line, field and fix.

use super::locate::{dotted, refs, Ctx, Locator, FORMAT_DOC};
use super::raw::{RawExperiment, RawProfile, RawTrials};
use super::sweep::{apply_common, Axis, AxisTarget};
use super::{
    Component, Experiment, LoadCommon, ProfilePolicy, Restart, SpecError, System, TrialOrder,
    TrialPolicy,
};
use crate::analysis::summary::Headline;
use crate::units::parse_duration;
use std::path::Path;
use std::time::Duration;

/// Parses and checks experiment text (`quick`: with its `[quick]` overlay); `path` is only named in errors.
pub fn validate(path: &Path, text: &str, quick: bool) -> Result<Experiment, SpecError> {
    let cx = Ctx::new(path, Locator::new(text));
    let mut raw = parse_raw(&cx, text)?;
    if quick && raw.quick.is_none() {
        return Err(cx.err(
            &["quick"],
            "--quick was given, but the file has no [quick] table, so there is no short version to run",
            "add a [quick] table with a shorter sweep and fewer trials, e.g.\n  [quick]\n  sweep = { connections = [4, 64] }\n  trials = { duration = \"1s\", min = 2, max = 2 }\nor run without --quick",
        ));
    }
    if quick {
        apply_quick(&mut raw);
    }
    if raw.name.trim().is_empty() {
        return Err(cx.err(&["name"], "must not be empty", "name = \"my-experiment\""));
    }
    let server = component(&cx, "server", &raw.server, &crate::server::kind_names())?;
    let mut load = component(&cx, "load", &raw.load, &crate::load::kind_names())?;
    let mut load_common = LoadCommon {
        connections: 10,
        threads: None,
        rate: None,
        connreqs: None,
        timeout: Duration::from_secs(2),
    };
    apply_common(&mut load_common, &mut load.settings)
        .map_err(|(k, m)| cx.err(&["load", &k], m, FORMAT_DOC))?;
    let axes = axes(&cx, &raw.sweep)?;
    let trials = trials(&cx, &raw.trials)?;
    let systems = systems(&cx, raw.system)?;
    let mut hosts = super::hosts::check(&raw.hosts)
        .map_err(|(field, message, fix)| cx.err(&["hosts", &field], message, fix))?;
    super::servers::check(&cx, &server, &load, &systems, &mut hosts)?;
    let profile = profile(&cx, raw.profile.as_ref())?;
    let energy = super::probe::energy(&raw.probe)
        .map_err(|(field, message, fix)| cx.err(&["probe", field], message, fix))?;
    let syscalls = super::probe::syscalls(&raw.probe)
        .map_err(|(field, message, fix)| cx.err(&["probe", field], message, fix))?;
    refuse_dataset_in_server(&cx, &server, &systems, &axes)?;
    let mut exp = Experiment {
        name: raw.name,
        description: raw.description,
        path: path.to_path_buf(),
        text: text.to_string(),
        quick,
        server,
        load,
        load_common,
        axes,
        trials,
        systems,
        hosts,
        profile,
        energy,
        syscalls,
        machine: super::MachinePolicy {
            tune: raw.machine.tune.unwrap_or(false),
        },
        plan: std::sync::Arc::new(super::plan::Plan {
            systems: Vec::new(),
        }),
    };
    exp.plan = std::sync::Arc::new(super::plan::compile(&cx, &exp)?);
    Ok(exp)
}

/// The workload declares its dataset in `[load]`: a dataset field in
/// `[server]`, a system's `server`, or a `"server.<field>"` axis (where
/// recipes once put them) is refused with the way to write it now.
fn refuse_dataset_in_server(
    cx: &Ctx,
    server: &Component,
    systems: &[System],
    axes: &[Axis],
) -> Result<(), SpecError> {
    use crate::model::dataset::{moved_message, FIELDS};
    let field = |t: &toml::Table| FIELDS.iter().copied().find(|f| t.contains_key(*f));
    if let Some(f) = field(&server.settings) {
        let fix = format!("move `{f}` from [server] to [load]");
        return Err(cx.err(&["server", f], moved_message(f), fix));
    }
    for (i, sys) in systems.iter().enumerate() {
        if let Some(f) = field(&sys.server) {
            let fix = format!("write it as the system's load setting: load = {{ {f} = ... }}");
            return Err(cx.err(
                &["system", &i.to_string(), "server", f],
                moved_message(f),
                fix,
            ));
        }
    }
    for axis in axes {
        if let AxisTarget::Server(f) = &axis.target {
            if FIELDS.contains(&f.as_str()) {
                let name = axis.target.name();
                return Err(cx.err(
                    &["sweep", &name],
                    format!("the sweep axis \"{name}\" varies the dataset, which is not a server setting any more"),
                    format!("sweep \"load.{f}\" instead: the workload declares its dataset"),
                ));
            }
        }
    }
    Ok(())
}

/// The file as written: TOML syntax and the types of the common fields. A
/// type error names the field by its path and says what to write.
fn parse_raw(cx: &Ctx, text: &str) -> Result<RawExperiment, SpecError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = crate::kinds::plain::path_segments(e.path());
        let inner = e.into_inner();
        let line = inner.span().map(|s| cx.loc.line_of(s.start));
        let message = crate::kinds::plain::plain(inner.message());
        // A syntax error or an unknown key names no field of its own.
        let typed = message.starts_with("expected ");
        SpecError {
            file: cx.path.to_path_buf(),
            line: line.or_else(|| cx.loc.line(&refs(&path))),
            field: if typed {
                dotted(&refs(&path))
            } else {
                String::new()
            },
            message,
            fix: Some(FORMAT_DOC.into()),
        }
    })
}

fn apply_quick(raw: &mut RawExperiment) {
    let Some(q) = raw.quick.take() else { return };
    for (k, v) in q.sweep {
        raw.sweep.insert(k, v);
    }
    for (k, v) in q.server {
        raw.server.insert(k, v);
    }
    for (k, v) in q.load {
        raw.load.insert(k, v);
    }
    raw.trials.overlay(&q.trials);
}

fn component(
    cx: &Ctx,
    section: &str,
    table: &toml::Table,
    kinds: &[&str],
) -> Result<Component, SpecError> {
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) if kinds.contains(&k.as_str()) => k.clone(),
        Some(other) => {
            return Err(cx.err(
                &[section, "kind"],
                format!("unknown kind {other}"),
                format!("use one of: {}", kinds.join(", ")),
            ))
        }
        None => {
            return Err(cx.err(
                &[section],
                "missing `kind`",
                format!("add kind = \"{}\" (one of: {})", kinds[0], kinds.join(", ")),
            ))
        }
    };
    Ok(Component {
        kind,
        settings: table.clone(),
    })
}

fn axes(cx: &Ctx, sweep: &toml::Table) -> Result<Vec<Axis>, SpecError> {
    let mut out = Vec::new();
    for (name, value) in sweep {
        let target = AxisTarget::from_name(name).ok_or_else(|| {
            cx.err(
                &["sweep", name],
                format!("unknown axis `{name}`"),
                "use connections, threads, rate, connreqs, server_cpus, server_memory, \
                 or \"server.<setting>\" / \"load.<setting>\"",
            )
        })?;
        let values = match value {
            toml::Value::Array(a) if !a.is_empty() => a.clone(),
            _ => {
                return Err(cx.err(
                    &["sweep", name],
                    "expected a non-empty list of values",
                    format!("{name} = [1, 10, 100]"),
                ))
            }
        };
        out.push(Axis { target, values });
    }
    Ok(out)
}

fn duration(
    cx: &Ctx,
    field: &str,
    v: &Option<String>,
    default: Duration,
) -> Result<Duration, SpecError> {
    match v {
        None => Ok(default),
        Some(s) => parse_duration(s).map_err(|e| {
            cx.err(
                &["trials", field],
                e.to_string(),
                format!("{field} = \"10s\""),
            )
        }),
    }
}

fn profile(cx: &Ctx, p: Option<&RawProfile>) -> Result<Option<ProfilePolicy>, SpecError> {
    let Some(p) = p.filter(|p| p.enabled != Some(false)) else {
        return Ok(None);
    };
    let frequency = p
        .frequency
        .unwrap_or(i64::from(crate::profile::DEFAULT_FREQUENCY));
    if !(1..=20_000).contains(&frequency) {
        return Err(cx.err(
            &["profile", "frequency"],
            format!("expected 1 to 20000 samples per second, got {frequency}"),
            "frequency = 997",
        ));
    }
    Ok(Some(ProfilePolicy {
        frequency: frequency as u32,
    }))
}

fn trials(cx: &Ctx, t: &RawTrials) -> Result<TrialPolicy, SpecError> {
    let duration_ = duration(cx, "duration", &t.duration, Duration::from_secs(10))?;
    if duration_.is_zero() {
        return Err(cx.err(
            &["trials", "duration"],
            "must be longer than zero",
            "duration = \"10s\"",
        ));
    }
    let min = t.min.unwrap_or(3);
    let max = t.max.unwrap_or(min.max(3));
    if !(1..=1000).contains(&min) {
        return Err(cx.err(
            &["trials", "min"],
            format!("expected 1 to 1000 trials, got {min}"),
            "min = 3",
        ));
    }
    if max < min || max > 1000 {
        return Err(cx.err(
            &["trials", "max"],
            format!("must be between min ({min}) and 1000, got {max}"),
            format!("max = {}", min.max(5)),
        ));
    }
    let target_ci = t.target_ci.unwrap_or(0.05);
    if !(target_ci > 0.0 && target_ci < 1.0) {
        return Err(cx.err(
            &["trials", "target_ci"],
            format!("expected a fraction between 0 and 1, got {target_ci}"),
            "target_ci = 0.05 (5%)",
        ));
    }
    let noise = t.noise.unwrap_or(0.02);
    if !(0.0..0.5).contains(&noise) {
        return Err(cx.err(
            &["trials", "noise"],
            format!("expected a fraction between 0 and 0.5, got {noise}"),
            "noise = 0.02 (2%)",
        ));
    }
    let restart = match t.restart.as_deref().unwrap_or("per_point") {
        "never" => Restart::Never,
        "per_point" => Restart::PerPoint,
        "per_trial" => Restart::PerTrial,
        other => {
            return Err(cx.err(
                &["trials", "restart"],
                format!("unknown restart policy `{other}`"),
                "use never, per_point or per_trial",
            ))
        }
    };
    let word = t.headline.as_deref().unwrap_or("median");
    let headline = Headline::parse(word).ok_or_else(|| {
        cx.err(
            &["trials", "headline"],
            format!("unknown headline `{word}`"),
            "use median or best",
        )
    })?;
    let budget = match &t.budget {
        None => None,
        Some(_) => Some(duration(cx, "budget", &t.budget, Duration::ZERO)?),
    };
    let sample_interval = duration(
        cx,
        "sample_interval",
        &t.sample_interval,
        Duration::from_secs(1),
    )?;
    if sample_interval < Duration::from_millis(100) {
        return Err(cx.err(
            &["trials", "sample_interval"],
            "must be at least 100ms",
            "sample_interval = \"1s\"",
        ));
    }
    let runs = t.runs.unwrap_or(1);
    if !(1..=i64::from(super::MAX_RUNS)).contains(&runs) {
        return Err(cx.err(
            &["trials", "runs"],
            format!(
                "{runs} is not a number of runs from 1 to {}",
                super::MAX_RUNS
            ),
            "runs = 3 (three whole runs of the sweep: the fewest a verdict between runs needs)",
        ));
    }
    let order = match t.order.as_deref().unwrap_or("random") {
        "random" => TrialOrder::Random,
        "sweep" => TrialOrder::Sweep,
        other => {
            return Err(cx.err(
                &["trials", "order"],
                format!("unknown order `{other}`"),
                "use random (the default: a seeded random order of systems and points) or \
                 sweep (the order written, e.g. for a ramp that must rise)",
            ))
        }
    };
    let steady = super::steady::policy(cx, t, duration_)?;
    let warmup = match steady.auto_warmup_max {
        Some(_) => super::steady::auto_warmup_step(duration_),
        None => duration(cx, "warmup", &t.warmup, Duration::from_secs(1))?,
    };
    Ok(TrialPolicy {
        order,
        runs: runs as u32,
        duration: duration_,
        warmup,
        steady,
        cooldown: duration(cx, "cooldown", &t.cooldown, Duration::ZERO)?,
        min_trials: min as u32,
        max_trials: max as u32,
        target_ci,
        budget,
        restart,
        headline,
        noise,
        sample_interval,
    })
}

fn systems(cx: &Ctx, raw: Vec<super::raw::RawSystem>) -> Result<Vec<System>, SpecError> {
    if raw.is_empty() {
        return Ok(vec![System {
            label: "default".into(),
            baseline: true,
            host: None,
            agent: None,
            server: toml::Table::new(),
            load: toml::Table::new(),
        }]);
    }
    let mut out: Vec<System> = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        let idx = i.to_string();
        if s.label.trim().is_empty() {
            return Err(cx.err(
                &["system", &idx, "label"],
                "must not be empty",
                "label = \"linux 6.1\"",
            ));
        }
        if s.label.chars().any(char::is_control) {
            return Err(cx.err(
                &["system", &idx, "label"],
                format!(
                    "holds a control character (\"{}\"): every table shows it",
                    s.label.escape_debug()
                ),
                "label = \"linux 6.1\" (one line of printable text)",
            ));
        }
        if out.iter().any(|o| o.label == s.label) {
            return Err(cx.err(
                &["system", &idx, "label"],
                format!("the label `{}` is used twice", s.label),
                "give every system its own label",
            ));
        }
        if s.load.contains_key("kind") {
            return Err(cx.err(
                &["system", &idx, "load", "kind"],
                format!(
                    "system `{}`: a system cannot change the load kind",
                    s.label
                ),
                "every system serves the run's one load kind; compare load kinds in separate runs with `scalelab compare`",
            ));
        }
        let host = s
            .host
            .as_deref()
            .map(crate::model::Host::parse)
            .transpose()
            .map_err(|m| {
                cx.err(
                    &["system", &idx, "host"],
                    format!("system `{}`: {m}", s.label),
                    "write it like host = \"root@198.18.0.11\" (see docs/experiment-format.md, [[system]])",
                )
            })?;
        out.push(System {
            label: s.label,
            baseline: s.baseline,
            host,
            agent: s.agent,
            server: s.server,
            load: s.load,
        });
    }
    let marked: Vec<usize> = out
        .iter()
        .enumerate()
        .filter(|(_, s)| s.baseline)
        .map(|(i, _)| i)
        .collect();
    match marked.len() {
        0 => out[0].baseline = true,
        1 => {}
        _ => {
            let idx = marked[1].to_string();
            return Err(cx.err(
                &["system", &idx, "baseline"],
                "more than one system is marked baseline",
                "mark exactly one system with baseline = true",
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str =
        "name = \"t\"\n[server]\nkind = \"nginx\"\n[load]\nkind = \"http\"\nthreads = 2\n";

    fn parse(extra: &str, quick: bool) -> Result<Experiment, SpecError> {
        validate(Path::new("t.toml"), &format!("{BASE}{extra}"), quick)
    }

    /// A spec whose server of `kind` (with `settings`) runs on another host.
    fn on_another_host(kind: &str, settings: &str) -> Result<Experiment, SpecError> {
        let text = format!(
            "name = \"t\"\n[hosts]\nserver = \"root@198.18.0.11\"\n\
             [server]\nkind = \"{kind}\"\n{settings}\n[load]\nkind = \"http\"\n"
        );
        validate(Path::new("t.toml"), &text, false)
    }

    #[test]
    fn whether_a_server_may_run_on_another_host_is_read_from_its_kind() {
        // The fake kind, like `external`, runs under no agent: its record
        // says so, and its settings are not given an address (they refuse
        // `listen`), though its name is not "external".
        assert!(on_another_host("fake", "").is_ok());
        assert!(on_another_host("nginx", "").is_ok());
        assert!(on_another_host("mariadb", "").is_ok());
        let e = on_another_host("nsd", "").unwrap_err().to_string();
        assert!(
            e.contains("`nsd` cannot run on another host: it cannot listen on that host's address"),
            "{e}"
        );
        assert!(e.contains("kind = \"external\""), "{e}");
        let e = on_another_host("nginx", "worker_processes = 0").unwrap_err();
        assert!(e.to_string().contains("worker_processes"), "{e}");
    }

    #[test]
    fn defaults_fill_in() {
        let e = parse("", false).unwrap();
        assert_eq!(e.trials.min_trials, 3);
        assert_eq!(e.trials.duration, Duration::from_secs(10));
        assert_eq!(e.load_common.threads, Some(2));
        assert_eq!(e.systems.len(), 1);
        assert_eq!(e.baseline(), "default");
        assert_eq!(e.points().len(), 1);
        assert!(
            !e.load.settings.contains_key("threads"),
            "common keys leave the driver's table"
        );
    }

    #[test]
    fn quick_without_a_quick_table_is_an_error_naming_the_fix() {
        let e = parse("", true).unwrap_err().to_string();
        assert!(e.contains("no [quick] table"), "{e}");
        assert!(
            e.contains("add a [quick] table") && e.contains("without --quick"),
            "{e}"
        );
        assert!(parse("", false).is_ok());
    }

    #[test]
    fn quick_overlays_sweep_and_trials() {
        let extra = "[sweep]\nconnections = [1, 2, 4]\n[trials]\nmin = 5\nmax = 9\n\
                     [quick]\nsweep = { connections = [2] }\ntrials = { max = 5 }\n";
        let full = parse(extra, false).unwrap();
        assert_eq!((full.points().len(), full.trials.max_trials), (3, 9));
        let quick = parse(extra, true).unwrap();
        assert_eq!(
            (
                quick.points().len(),
                quick.trials.min_trials,
                quick.trials.max_trials
            ),
            (1, 5, 5)
        );
    }

    #[test]
    fn the_first_system_is_the_default_baseline() {
        let e = parse(
            "[[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\"\n",
            false,
        )
        .unwrap();
        assert_eq!(e.baseline(), "a");
        let e = parse(
            "[[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\"\nbaseline = true\n",
            false,
        )
        .unwrap();
        assert_eq!(e.baseline(), "b");
    }

    #[test]
    fn two_baselines_are_refused() {
        let extra = "[[system]]\nlabel = \"a\"\nbaseline = true\n[[system]]\nlabel = \"b\"\nbaseline = true\n";
        let err = parse(extra, false).unwrap_err();
        assert_eq!(err.field, "system[2].baseline");
        let text = format!("{BASE}{extra}");
        let lines: Vec<&str> = text.lines().collect();
        let last_baseline = lines
            .iter()
            .rposition(|l| l.starts_with("baseline"))
            .unwrap()
            + 1;
        assert_eq!(err.line, Some(last_baseline));
    }

    /// Issue 46: a label is shown in every table, so a newline or an ESC
    /// in it is refused, by field, shown escaped.
    #[test]
    fn a_label_with_a_control_character_is_refused() {
        let extra = "[[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\\nc\"\n";
        let err = parse(extra, false).unwrap_err();
        assert_eq!(err.field, "system[2].label");
        let text = err.to_string();
        assert!(text.contains("control character (\"b\\nc\")"), "{text}");
        assert!(!text.contains("b\nc"), "shown escaped: {text}");
    }

    #[test]
    fn a_dataset_in_the_server_table_says_where_it_went() {
        let pg = "name = \"t\"\n[server]\nkind = \"postgres\"\nscale = 10\n[load]\nkind = \"pg\"\n";
        let err = validate(Path::new("old.toml"), pg, false).unwrap_err();
        assert_eq!((err.field.as_str(), err.line), ("server.scale", Some(4)));
        let text = err.to_string();
        assert!(text.contains("old.toml"), "{text}");
        assert!(
            text.contains("move `scale` to [load]: the workload declares its dataset"),
            "{text}"
        );
        let moved = pg.replace("scale = 10\n[load]\n", "[load]\nscale = 10\n");
        let exp = validate(Path::new("new.toml"), &moved, false).unwrap();
        assert_eq!(
            exp.load.settings.get("scale"),
            Some(&toml::Value::Integer(10))
        );

        let mysql = "name = \"t\"\n[server]\nkind = \"mariadb\"\n[load]\nkind = \"mysql\"\n\
                     [[system]]\nlabel = \"a\"\nserver = { table_size = 5 }\n";
        let err = validate(Path::new("t.toml"), mysql, false).unwrap_err();
        assert_eq!(err.field, "system[1].server.table_size");
        assert!(
            err.to_string().contains("move `table_size` to [load]"),
            "{err}"
        );

        let sweep = format!("{pg}[sweep]\n\"server.scale\" = [1, 2]\n").replace("scale = 10\n", "");
        let err = validate(Path::new("t.toml"), &sweep, false).unwrap_err();
        assert_eq!(err.field, "sweep.server.scale");
        assert!(
            err.to_string().contains("sweep \"load.scale\" instead"),
            "{err}"
        );
    }

    /// The dbsize recipe sweeps the workload's dataset: a typed dataset
    /// axis, whose every point declares its own pgbench scale.
    #[test]
    fn the_dbsize_recipe_sweeps_a_dataset_axis() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("recipes/pg-readonly-dbsize.toml");
        let exp = crate::recipe::Experiment::load(&path, true).unwrap();
        assert_eq!(exp.axes[1].target, AxisTarget::Dataset("scale".into()));
        let scales: Vec<_> = exp
            .points()
            .iter()
            .map(|p| exp.plan.point(0, p).dataset.clone())
            .collect();
        let pgbench = |scale| Some(crate::model::Dataset::Pgbench { scale });
        assert_eq!(scales, vec![pgbench(2), pgbench(16), pgbench(32)]);
    }

    /// The xdp generator runs one thread: a recipe that leaves `threads`
    /// out gets one, and one that asks for two is refused when checked,
    /// naming the field, its line and the fix.
    #[test]
    fn the_xdp_generator_gets_one_thread_and_refuses_more_when_checked() {
        let dns = |extra: &str| {
            validate(
                Path::new("t.toml"),
                &format!(
                    "name = \"t\"\n[server]\nkind = \"nsd\"\n[load]\nkind = \"dns\"\n\
                     generator = \"xdp\"\nqueries = {{ names = 10, count = 100 }}\n{extra}[sweep]\nconnections = [4, 64]\n"
                ),
                false,
            )
        };
        let exp = dns("").unwrap();
        for p in exp.points() {
            assert_eq!(exp.plan.point(0, &p).common.threads, Some(1));
        }
        let err = dns("threads = 2\n").unwrap_err();
        assert_eq!(err.field, "load.threads", "{err}");
        assert!(err.message.contains("set threads to 1"), "{err}");
        assert!(err.line.is_some(), "{err}");
        // The socket generator keeps the default (one per CPU, at most
        // one per connection).
        let socket = validate(
            Path::new("t.toml"),
            "name = \"t\"\n[server]\nkind = \"nsd\"\n[load]\nkind = \"dns\"\n\
             queries = { names = 10, count = 100 }\n",
            false,
        )
        .unwrap();
        let p = &socket.points()[0];
        assert_eq!(socket.plan.point(0, p).common.threads, None);
    }

    #[test]
    fn axis_values_are_checked_per_point() {
        let err = parse("[sweep]\nrate = [100, -5]\n", false).unwrap_err();
        assert_eq!(err.field, "sweep.rate");
        assert!(err.message.contains("from 0.001"), "{}", err.message);
    }
}
