//! Sweeps, interleaved trials, the stopping rule and resume.
//!
//! For every sweep point, trials run in rounds: round k runs trial k of every
//! system (A B, B A, ...: each round in the run's seeded random order, see
//! [`order`]; the points too), so drift on the machine hits every system
//! alike and no system always runs first. After
//! `min` rounds the stopping rule decides whether the point needs more.
//! Every trial is committed to the store as it ends; `--resume` skips the
//! trials a run already has, except those that failed for an environmental
//! reason (a lost host, a server that did not start, a full disk): those
//! are deleted (a `trial_retried` event keeps their error) and run again.
//! Before each trial of a multi-host run, lost agents are reconnected; a
//! host that stays gone stops the run early, naming it.

#![forbid(unsafe_code)]

pub mod estimate;
mod failure;
#[cfg(test)]
mod kinds_tests;
mod machine;
pub mod order;
mod profiling;
mod progress;
mod servers;
mod sites;
mod steady;
mod trial;
pub mod tune;
mod window;

use crate::model::Point;
use crate::recipe::Experiment;
use crate::remote::cluster::Cluster;
use crate::remote::RemoteError;
use crate::shutdown::Shutdown;
use crate::store::{
    EnvironmentalFailure, FailureCause, NewRun, RunEvent, RunEventKind, RunStatus, Store,
    StoreError, TrialStatus,
};
use progress::Progress;
use servers::Servers;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trial::{run_trial, TrialCtx, TrialEnd};

/// Why a run could not start or go on. A failed trial is not an error: it
/// is stored with its reason and the sweep goes on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A trial's settings could not be resolved.
    #[error("experiment: {0}")]
    Spec(String),
    /// A remote host failed.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    /// `--resume` was given the run's experiment with changes that change
    /// the measurement.
    #[error("cannot resume run {run}: the experiment changed in ways that change the measurement:\n  {changes}\nresume with the recipe (and --quick setting) the run was made with, or start a new run")]
    RecipeChanged {
        /// The run's id in the store.
        run: i64,
        /// The changed settings, one per line.
        changes: String,
    },
    /// The run's stored experiment no longer parses.
    #[error("cannot read the experiment stored with run {run}: {message}")]
    StoredRecipe {
        /// The run's id in the store.
        run: i64,
        /// The parser's error.
        message: String,
    },
    /// A remote host stayed gone after its agent was lost: the run stopped
    /// early rather than fail every later trial. It is marked interrupted,
    /// so `--resume` continues it once the host is back.
    #[error("{source}\nrun {run} stopped early; every finished trial is stored: when the host is back, continue it with --resume {run}")]
    HostGone {
        /// The run's id in the store.
        run: i64,
        /// Which host, and the last reconnection error.
        source: crate::remote::RemoteError,
    },
    /// A host in the benchmark range is not reached through a lab.
    #[error("{0}")]
    NoLab(String),
    /// `run --tune` could not start (nothing was left changed).
    #[error(transparent)]
    Tune(#[from] tune::TuneError),
    /// A fixed server port is held by another process.
    #[error("system `{system}`: {reason}")]
    PortBusy {
        /// The system whose server wants the port.
        system: String,
        /// Which port, and who holds it.
        reason: crate::server::ports::PortError,
    },
    /// `--resume` with a `--seed` other than the run's own.
    #[error("cannot resume run {run} with --seed {given}: its trials ran in the order of seed {stored}; leave --seed out (a resumed run keeps its own seed and order)")]
    SeedChanged {
        /// The run's id in the store.
        run: i64,
        /// The run's stored seed.
        stored: u64,
        /// The seed given.
        given: u64,
    },
}

/// How to run an experiment.
pub struct RunOptions {
    /// Continue this run instead of starting a new one.
    pub resume: Option<i64>,
    /// Where servers get their private run directories.
    pub base_dir: PathBuf,
    /// Show the progress bar (a terminal is attached).
    pub progress: bool,
    /// What the run is called (`run --label`); `None`: the server host's
    /// OS and kernel release (a resumed run keeps its own).
    pub label: Option<String>,
    /// The revision of the software under test (`run --commit`).
    pub revision: Option<String>,
    /// A new run's repeat group (`run --repeat N`): the group's first run
    /// (`None`: this run is the first) and its size. Stored as the run is
    /// created, so even a killed repeat is resumed with its group.
    pub repeat_of: Option<(Option<i64>, u32)>,
    /// The seed of a new run's random order (`run --seed`); `None`: a
    /// fresh one. A resumed run keeps its stored seed.
    pub seed: Option<u64>,
}

/// The default base directory for servers' run directories and datasets:
/// `$SCALELAB_WORKDIR`, else `/var/tmp/scalelab` (kept across runs so a
/// dataset can be reused).
pub fn default_base_dir() -> PathBuf {
    std::env::var_os("SCALELAB_WORKDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/scalelab"))
}

/// What a run did.
#[derive(Debug)]
pub struct RunSummary {
    /// The run's id in the store.
    pub run_id: i64,
    /// Trials run and stored by this invocation.
    pub trials_run: u32,
    /// Of those, the failed ones.
    pub trials_failed: u32,
    /// SIGINT or SIGTERM stopped it, or trials were discarded; `--resume`
    /// continues it.
    pub interrupted: bool,
    /// Trials discarded because the load generator was stopped during
    /// their window (not stored; `--resume` runs them).
    pub trials_discarded: u32,
    /// One line per profile taken, or why there is none (`--profile`).
    pub profile_lines: Vec<String>,
    /// The seed and order the run's trials were drawn in.
    pub draw: order::Draw,
}

/// Samples so far at one point: throughput of ok trials per system, and
/// which (system, trial) pairs exist.
#[derive(Default)]
struct PointState {
    samples: Vec<Vec<f64>>,
    done: HashMap<(usize, u32), TrialStatus>,
}

/// Runs `exp` (or resumes the run `opts` names) into `store`: every point,
/// every system, interleaved trials until the stopping rule says stop.
pub fn run(
    exp: &Experiment,
    store: &mut Store,
    opts: &RunOptions,
    shutdown: &Shutdown,
) -> Result<RunSummary, RunError> {
    reclaim_leftovers(&opts.base_dir);
    check_fixed_ports(exp, &opts.base_dir)?;
    // Every remote host is reached (or named as unreachable) before the run
    // is created, and its fingerprint goes into the run.
    let cluster = sites::connect(exp, &opts.base_dir)?;
    // This machine's source is checked once (and "no energy counter" said
    // once), however many systems run here; other hosts' agents check their own.
    let local = (0..exp.systems.len()).any(|system| {
        matches!(
            sites::server_site(exp, cluster.as_ref(), system),
            sites::ServerSite::Local
        )
    });
    if local {
        sites::check_energy(&sites::ServerSite::Local, &exp.energy)?;
    }
    // Tuned (if asked) and read before the run is created, so its
    // fingerprint holds the tuned values; put back when `machine` drops.
    let machine = machine::check(exp, &opts.base_dir)?;
    let run_id = open_run(exp, store, opts, cluster.as_ref(), &machine.readings)?;
    let draw = order::run_draw(exp, store, run_id, opts)?;
    eprintln!("{}", order::draw_line(&draw));
    if opts.resume.is_some() {
        let failed = store.environmental_failures(run_id)?;
        store.retry_trials(run_id, &failed)?;
        if let Some(line) = retry_message(&failed) {
            eprintln!("{line}");
        }
    }
    let result = sweep(exp, store, (run_id, draw), opts, cluster.as_ref(), shutdown);
    let result = match result {
        Err(RunError::Remote(source)) if matches!(source, RemoteError::Gone { .. }) => {
            store.set_run_status(run_id, RunStatus::Interrupted)?;
            Err(RunError::HostGone {
                run: run_id,
                source,
            })
        }
        other => other,
    };
    // The lease only speeds up `list`; a stale one is taken over anyway.
    let _ = store.release_lease(run_id);
    result
}

/// Removes what killed scalelab processes left behind and their reapers
/// could not remove, for every kind: cgroups, the servers' directories,
/// perf directories, and ssh control directories (stopping their masters).
/// Returns what it removed.
pub fn reclaim_leftovers(base_dir: &Path) -> Vec<PathBuf> {
    for line in tune::state::reclaim(base_dir) {
        eprintln!("a killed scalelab's tune: {line}");
    }
    let mut removed = crate::server::reclaim_leftovers(base_dir);
    let perf = crate::owned::reclaim_stale(base_dir, trial::PERF_DIR, crate::owned::remove_tree);
    removed.extend(perf);
    removed.extend(crate::remote::ssh::reclaim_stale());
    removed
}

/// Runs every point of an opened run.
fn sweep(
    exp: &Experiment,
    store: &mut Store,
    (run_id, draw): (i64, order::Draw),
    opts: &RunOptions,
    cluster: Option<&Cluster>,
    shutdown: &Shutdown,
) -> Result<RunSummary, RunError> {
    let points = exp.points();
    let mut states = existing_trials(exp, store, run_id, &points)?;
    let expected = (points.len() * exp.systems.len()) as u64 * exp.trials.min_trials as u64;
    let already: u64 = states.iter().map(|s| s.done.len() as u64).sum();
    let progress = Progress::new(expected.saturating_sub(already), opts.progress);
    let sites = (0..exp.systems.len())
        .map(|s| sites::server_site(exp, cluster, s))
        .collect();
    let mut servers = Servers::new(sites);
    let mut summary = RunSummary {
        run_id,
        trials_run: 0,
        trials_failed: 0,
        interrupted: false,
        trials_discarded: 0,
        profile_lines: Vec::new(),
        draw,
    };
    let mut next_start = store.next_start_seq(run_id)?;
    let mut cx = TrialCtx {
        exp,
        store,
        servers: &mut servers,
        run_id,
        base_dir: &opts.base_dir,
        shutdown,
        cluster,
    };
    let point_order = draw.points(&order::point_groups(exp));
    for (k, &p) in point_order.iter().enumerate() {
        let (point, state) = (&points[p], &mut states[p]);
        progress.point(k + 1, points.len());
        let mut at = Placing {
            draw: &draw,
            next_start: &mut next_start,
        };
        let reason = run_point(&mut cx, (point, &mut at), state, &progress, &mut summary)?;
        match reason {
            Some(r) => {
                let n = state.samples.iter().map(Vec::len).max().unwrap_or(0) as u32;
                cx.store.record_point_stop(run_id, point.index, &r, n)?;
            }
            None => break,
        }
        if exp.trials.restart != crate::recipe::Restart::Never {
            cx.servers.stop_all();
        }
    }
    if let Some(policy) = exp.profile.filter(|_| !shutdown.is_triggered()) {
        progress.starting("profiling the peak and collapse points");
        summary.profile_lines = profiling::profile_run(&mut cx, policy, &points, &states)?;
    }
    cx.servers.stop_all();
    progress.done();
    summary.interrupted = shutdown.is_triggered() || summary.trials_discarded > 0;
    store.set_run_status(
        run_id,
        if summary.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Finished
        },
    )?;
    Ok(summary)
}

/// Where the next trial goes: the run's order, and the next place in its
/// start order.
struct Placing<'a> {
    draw: &'a order::Draw,
    next_start: &'a mut u32,
}

/// Runs rounds at one point until the stopping rule says stop, the systems
/// of each round in the run's order. Returns the reason, or `None` when
/// interrupted.
fn run_point(
    cx: &mut TrialCtx,
    (point, at): (&Point, &mut Placing),
    state: &mut PointState,
    progress: &Progress,
    summary: &mut RunSummary,
) -> Result<Option<String>, RunError> {
    let policy = &cx.exp.trials;
    let started = Instant::now();
    for round in 1..=policy.max_trials {
        if round > policy.min_trials {
            let elapsed = started.elapsed();
            if let Some(reason) = stop_reason(cx.exp, &state.samples, round - 1, elapsed) {
                return Ok(Some(reason));
            }
            progress.grow(cx.exp.systems.len() as u64);
        }
        let systems = at.draw.round(cx.exp.systems.len(), point.index, round);
        for (position, &system) in systems.iter().enumerate() {
            if state.done.contains_key(&(system, round)) {
                continue;
            }
            if cx.shutdown.is_triggered() {
                return Ok(None);
            }
            heal_hosts(cx.exp, cx.cluster, progress)?;
            progress.starting(&format!(
                "{} {} trial {}",
                cx.exp.systems[system].label,
                point.label(),
                trial::of_budget(round, policy.min_trials, policy.max_trials)
            ));
            let mut outcome = match run_trial(cx, system, point, round)? {
                TrialEnd::Stored(outcome) => outcome,
                // Not stored: resume runs it again.
                TrialEnd::Interrupted => return Ok(None),
                TrialEnd::Discarded(line) => {
                    summary.trials_discarded += 1;
                    progress.warn(&line);
                    continue;
                }
            };
            let place = crate::store::TrialPlace {
                round_position: position as u32,
                start_seq: *at.next_start,
            };
            *at.next_start += 1;
            let label = cx.exp.systems[system].label.as_str();
            (cx.store).set_trial_place(cx.run_id, (label, point.index, round), place)?;
            summary.trials_run += 1;
            if outcome.status == TrialStatus::Failed {
                summary.trials_failed += 1;
            }
            if let Some(v) = outcome.server_version.take() {
                cx.store.set_server_version(cx.run_id, &v)?;
            }
            if let Some(x) = outcome.throughput {
                state.samples[system].push(x);
            }
            state.done.insert((system, round), outcome.status);
            progress.finished(&outcome.line);
            for w in &outcome.warnings {
                progress.warn(w);
            }
            if cx.shutdown.is_triggered() {
                return Ok(None);
            }
            if !cx.exp.trials.cooldown.is_zero() {
                cx.shutdown.sleep(cx.exp.trials.cooldown);
            }
        }
    }
    Ok(Some("max_trials".into()))
}

/// Reconnects the agents of hosts lost since the last trial (a run without
/// hosts has none). A server host that stays gone fails its own systems'
/// trials from now on and the others go on; the run fails when a client
/// host stays gone, or every system's server host has.
fn heal_hosts(
    exp: &Experiment,
    cluster: Option<&Cluster>,
    progress: &Progress,
) -> Result<(), RunError> {
    let Some(cluster) = cluster else {
        return Ok(());
    };
    let healed = cluster.heal()?;
    for r in &healed.reconnected {
        progress.warn(&format!(
            "host {}: its agent was lost; reconnected (attempt {} of {})",
            r.host,
            r.attempt,
            crate::remote::cluster::RECONNECT_ATTEMPTS
        ));
        if let Some(pid) = r.stale_stopped {
            progress.warn(&format!(
                "host {}: the old agent (PID {pid}) had outlived its session; stopped with \
                 its server",
                r.host
            ));
        }
    }
    let hosts: Vec<Option<&crate::model::Host>> =
        exp.plan.systems.iter().map(|s| s.host.as_ref()).collect();
    let all_gone = hosts
        .iter()
        .all(|h| h.is_some_and(|h| cluster.gone(h).is_some()));
    for (host, error) in healed.gone {
        if all_gone {
            return Err(RunError::Remote(error));
        }
        let systems: Vec<&str> = exp
            .plan
            .systems
            .iter()
            .filter(|s| s.host.as_ref() == Some(&host))
            .map(|s| s.label.as_str())
            .collect();
        progress.warn(&format!(
            "{error}
the trials of {} fail from now on; the other systems go on",
            systems.join(", ")
        ));
    }
    Ok(())
}

/// What `--resume` says about the failed trials it runs again:
/// `retrying N trial(s) that failed for environmental reasons (lost host:
/// a, server start: b, disk full: c)`; `None` when there are none.
fn retry_message(failed: &[EnvironmentalFailure]) -> Option<String> {
    if failed.is_empty() {
        return None;
    }
    let counts: Vec<String> = FailureCause::ALL
        .iter()
        .map(|c| {
            let n = failed.iter().filter(|f| f.cause == *c).count();
            format!("{}: {n}", c.words())
        })
        .collect();
    Some(format!(
        "retrying {} trial(s) that failed for environmental reasons ({})",
        failed.len(),
        counts.join(", ")
    ))
}

/// The stopping rule, asked after `rounds` complete rounds.
fn stop_reason(
    exp: &Experiment,
    samples: &[Vec<f64>],
    rounds: u32,
    elapsed: std::time::Duration,
) -> Option<String> {
    use crate::analysis::stopping::{decide, Decision, StoppingRule};
    let rule = StoppingRule {
        min_trials: exp.trials.min_trials as usize,
        max_trials: exp.trials.max_trials as usize,
        target_rel_half_width: exp.trials.target_ci,
        budget: exp.trials.budget,
    };
    match decide(&rule, samples, rounds as usize, elapsed) {
        Decision::Continue => None,
        Decision::Stop(reason) => Some(reason.to_string()),
    }
}

/// Refuses a sweep whose server settings fix a loopback port that something
/// else already holds: every trial would fail the same way.
fn check_fixed_ports(exp: &Experiment, base_dir: &std::path::Path) -> Result<(), RunError> {
    let mut checked = Vec::new();
    for point in exp.points() {
        for (system, sys) in exp.systems.iter().enumerate() {
            if exp.plan.systems[system].host.is_some() {
                continue; // its port is on its own host
            }
            let target = exp
                .plan
                .point(system, &point)
                .server
                .build(base_dir)
                .map_err(|e| RunError::Spec(e.to_string()))?;
            let Some(port) = target.fixed_port() else {
                continue;
            };
            if !checked.contains(&port) {
                checked.push(port);
                crate::server::ports::ensure_free(port).map_err(|reason| RunError::PortBusy {
                    system: sys.label.clone(),
                    reason,
                })?;
            }
        }
    }
    Ok(())
}

/// Opens the run (a new one, or the one to resume) and takes its lease.
fn open_run(
    exp: &Experiment,
    store: &mut Store,
    opts: &RunOptions,
    cluster: Option<&Cluster>,
    machine: &crate::probe::machine::MachineReadings,
) -> Result<i64, RunError> {
    if let Some(id) = opts.resume {
        check_resumable(exp, store, id)?;
        store.acquire_lease(id)?;
        store.record_event(
            id,
            &RunEvent {
                at: crate::store::write::now(),
                kind: RunEventKind::Resumed,
                system: None,
                point_index: None,
                trial: None,
                detail: format!("resumed by PID {}", std::process::id()),
            },
        )?;
        store.set_run_status(id, RunStatus::Running)?;
        store.set_run_label(id, opts.label.as_deref(), opts.revision.as_deref())?;
        return Ok(id);
    }
    let id = create_run(exp, store, opts, cluster, machine)?;
    store.acquire_lease(id)?;
    Ok(id)
}

/// Whether `exp` may continue run `id` (or add repeats to its group):
/// same experiment, and no difference that changes the measurement (see
/// [`crate::recipe::diff`]).
pub fn check_resumable(exp: &Experiment, store: &Store, id: i64) -> Result<(), RunError> {
    // The name may change (docs/experiment-format.md): only what changes
    // the measurement is compared.
    let run = store.run(id)?;
    let stored = Experiment::parse(
        Path::new(&run.experiment_path),
        &run.experiment,
        store.run_quick(id)?,
    )
    .map_err(|e| RunError::StoredRecipe {
        run: id,
        message: e.to_string(),
    })?;
    let changes = crate::recipe::diff::measurement_changes(&stored, exp);
    if changes.is_empty() {
        return Ok(());
    }
    let changes: Vec<String> = changes.iter().map(ToString::to_string).collect();
    Err(RunError::RecipeChanged {
        run: id,
        changes: changes.join("\n  "),
    })
}

fn create_run(
    exp: &Experiment,
    store: &mut Store,
    opts: &RunOptions,
    cluster: Option<&Cluster>,
    machine: &crate::probe::machine::MachineReadings,
) -> Result<i64, RunError> {
    let mut env = sites::environment(exp, cluster);
    env.machine.machine = Some(machine.clone());
    let server = exp.hosts.server.as_ref().map(ToString::to_string);
    let label = (opts.label.clone()).unwrap_or_else(|| env.os_label(server.as_deref()));
    let run = NewRun {
        name: &exp.name,
        description: &exp.description,
        experiment: &exp.text,
        experiment_path: &exp.path.display().to_string(),
        quick: exp.quick,
        environment: &env,
        baseline: exp.baseline(),
        headline: exp.trials.headline.as_str(),
        load_kind: &exp.load.kind,
        server_kind: &exp.server.kind,
        rate_unit: crate::catalog().rate_unit_of(&exp.load.kind),
        parallelism: crate::catalog().parallelism_of(&exp.server.kind),
        noise: exp.trials.noise,
        label: Some(&label),
        revision: opts.revision.as_deref(),
    };
    Ok(store.create_run_in_group(&run, opts.repeat_of)?)
}

/// Loads the trials a resumed run already has, per point.
fn existing_trials(
    exp: &Experiment,
    store: &Store,
    run_id: i64,
    points: &[Point],
) -> Result<Vec<PointState>, RunError> {
    let mut states: Vec<PointState> = points
        .iter()
        .map(|_| PointState {
            samples: vec![Vec::new(); exp.systems.len()],
            done: HashMap::new(),
        })
        .collect();
    let data = store.load_run(&run_id.to_string())?;
    for t in &data.trials {
        let Some(system) = exp.systems.iter().position(|s| s.label == t.system) else {
            continue;
        };
        let Some(state) = states.get_mut(t.point.index as usize) else {
            continue;
        };
        if points[t.point.index as usize].coords != t.point.coords {
            continue;
        }
        state.done.insert((system, t.trial), t.status);
        if let Some(x) = t.throughput() {
            state.samples[system].push(x);
        }
    }
    Ok(states)
}

#[cfg(test)]
mod retry_tests {
    use super::*;

    fn failure(cause: FailureCause) -> EnvironmentalFailure {
        EnvironmentalFailure {
            id: 1,
            system: "a".into(),
            point_index: 0,
            trial: 1,
            cause,
            error: String::new(),
        }
    }

    #[test]
    fn the_retry_line_counts_each_cause() {
        assert_eq!(retry_message(&[]), None);
        let failed = [
            failure(FailureCause::LostHost),
            failure(FailureCause::LostHost),
            failure(FailureCause::DiskFull),
        ];
        assert_eq!(
            retry_message(&failed).unwrap(),
            "retrying 3 trial(s) that failed for environmental reasons \
             (lost host: 2, server start: 0, disk full: 1)"
        );
    }
}
