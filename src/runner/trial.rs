//! One trial: make sure the server runs, warm up, measure with the probe
//! running, judge the outcome, and commit it to the store.

use super::failure::Failure;
use super::servers::{Servers, Wanted};
use super::sites::{ServerProbe, ServerSite, TrialLoad};
use super::window::{judge_window, Window, WindowFault};
use super::RunError;
use crate::load::facts::KindRule;
use crate::load::{LoadResult, LoadSpec, Pacing};
use crate::model::Point;
use crate::owned::OwnedDir;
use crate::profile::{Folded, ProfileError, Recorder, Recording};
use crate::recipe::plan::PointPlan;
use crate::recipe::Experiment;
use crate::server::Liveness;
use crate::shutdown::Shutdown;
use crate::store::context::{ClientShare, LoadShape, TrialContext};
use crate::store::{Measurement, NewTrial, RunEvent, RunEventKind, Store, TrialStatus};
use std::path::Path;

/// What the runner needs to know about a finished trial.
pub struct Outcome {
    pub status: TrialStatus,
    /// For the stopping rule: the throughput of an ok trial the verdict
    /// keeps; `None` for a failed, client-bound or left-out unsteady one.
    pub throughput: Option<f64>,
    pub line: String,
    /// One line each: the trial was client-bound, or had errors (by kind).
    pub warnings: Vec<String>,
    pub server_version: Option<String>,
}

pub struct TrialCtx<'a> {
    pub exp: &'a Experiment,
    pub store: &'a mut Store,
    pub servers: &'a mut Servers,
    pub run_id: i64,
    pub base_dir: &'a Path,
    pub shutdown: &'a Shutdown,
    /// The remote hosts of a multi-host run.
    pub cluster: Option<&'a crate::remote::cluster::Cluster>,
}

/// How a trial ended.
pub enum TrialEnd {
    /// It was judged and stored, ok or failed.
    Stored(Outcome),
    /// SIGINT or SIGTERM arrived: nothing stored, the run stops.
    Interrupted,
    /// Its window was not what it says (the load generator was stopped):
    /// nothing stored, a run event recorded, the sweep goes on and
    /// `--resume` runs it again. The line says so, for people.
    Discarded(String),
}

/// What a trial produced before it was judged.
struct Measured {
    result: LoadResult,
    /// The measured window as configured and as it ran.
    window: Window,
    probe: Option<crate::probe::ProbeData>,
    /// Why the probe's summary was refused (a required figure was not
    /// finite); stored in its place.
    probe_refused: Option<String>,
    server_died: bool,
    /// Why the server's host could not be asked whether it runs (its ssh
    /// stopped answering), and whether the server still answered.
    unanswered: Option<String>,
    /// Why the server died, when its log or file system says the disk is
    /// full ([`crate::server::diagnose::disk_full`]).
    disk_full: Option<String>,
    client_cpus: usize,
    /// Each client host's share, in a multi-host run.
    client_hosts: Vec<ClientShare>,
    /// The server's folded stacks, when the trial was profiled.
    profile: Option<Result<Folded, ProfileError>>,
    /// The server's own wait counters over the window, when it keeps them.
    server_waits: Option<crate::probe::limiter::server_waits::ServerWaits>,
    /// Each worker's requests in the window, where the server counts them.
    worker_requests: Option<Vec<u64>>,
    /// The warm-up it ran before the window.
    warmed: super::steady::WarmedUp,
}

/// Runs and stores one trial. Not stored, with a run event recorded and
/// run again by `--resume`: a trial SIGINT or SIGTERM cut short
/// ([`TrialEnd::Interrupted`]: a shortened window is not a measurement),
/// and one whose load generator was held still ([`TrialEnd::Discarded`]).
pub fn run_trial(
    cx: &mut TrialCtx,
    system: usize,
    point: &Point,
    trial: u32,
) -> Result<TrialEnd, RunError> {
    let label = cx.exp.systems[system].label.clone();
    let started_at = crate::store::write::now();
    let mut context = TrialContext::default();
    let host = cx.exp.plan.systems[system].host.as_ref();
    context.server_host = host.map(ToString::to_string);
    let gone = host.and_then(|h| Some((h, cx.cluster?.gone(h)?)));
    let measured = match gone {
        // A server host that stayed gone fails its system's trials at once.
        Some((host, why)) => Err(Failure {
            message: format!("lost host {host}: {why}"),
            cause: Some(crate::store::FailureCause::LostHost),
        }),
        None => measure(cx, system, point, &mut context, None),
    };
    if cx.shutdown.is_triggered() {
        let detail = interruption(cx, &measured);
        record_event(cx, &label, point, trial, detail)?;
        return Ok(TrialEnd::Interrupted);
    }
    let policy = &cx.exp.trials;
    let head = format!(
        "{label:<16} {:<28} #{}",
        point.label(),
        of_budget(trial, policy.min_trials, policy.max_trials)
    );
    if let Some(WindowFault::Held(why)) =
        measured.as_ref().ok().and_then(|m| judge_window(&m.window))
    {
        let detail = format!("{why}; the trial was discarded, `--resume` runs it again");
        record_event(cx, &label, point, trial, detail.clone())?;
        return Ok(TrialEnd::Discarded(format!("{head}  DISCARDED: {detail}")));
    }
    let mut window = crate::store::WindowFacts::default();
    let mut capped = None;
    let (status, failure, measurement, histogram, timeline, probe, probe_refused) = match measured {
        Err(failure) => (
            TrialStatus::Failed,
            Some(failure),
            None,
            None,
            Vec::new(),
            None,
            None,
        ),
        Ok(m) => {
            let judged = judged(&m, context.server_host.is_some());
            let bound = client_bound(&m);
            context.extras = m.result.extras.clone();
            context.limiter = Some(limiter(&m, bound.as_deref(), &context));
            context.set_client_bound(bound);
            let status = if judged.is_some() {
                TrialStatus::Failed
            } else {
                TrialStatus::Ok
            };
            let (counts, facts) = super::steady::window_facts(&m.result, policy, m.warmed.ran);
            window = facts;
            capped = m.warmed.capped;
            (
                status,
                judged,
                Some(Measurement::from(&m.result)),
                Some(m.result.histogram_bytes()),
                counts,
                m.probe,
                m.probe_refused,
            )
        }
    };
    // A host of this trial (its server's, a client) lost during it is
    // its cause, whatever the load saw.
    let failure = failure.map(|f| match cx.cluster {
        Some(c) => f.or_lost_host(&c.lost_hosts_of(host)),
        None => f,
    });
    let error = failure.as_ref().map(|f| f.message.clone());
    let failure_cause = failure.as_ref().and_then(|f| f.cause);
    cx.store.insert_trial(&NewTrial {
        run_id: cx.run_id,
        system: &label,
        point,
        trial,
        status,
        error: error.as_deref(),
        failure_cause,
        started_at,
        context: &context,
        measurement: measurement.as_ref(),
        timeline: &timeline,
        window: &window,
        histogram: histogram.as_deref(),
        probe_summary: probe.as_ref().map(|p| &p.summary),
        probe_timeline: probe.as_ref().map(|p| p.timeline.as_slice()),
        probe_refused: probe_refused.as_deref(),
    })?;
    // The stopping rule counts only the trials the verdict will keep.
    let kept = !crate::store::left_out_of_verdicts(&context, &window);
    let throughput = measurement
        .as_ref()
        .filter(|_| status == TrialStatus::Ok && kept)
        .map(|m| m.rps.0);
    let mut line = trial_line(&head, status, error.as_deref(), measurement.as_ref());
    if let (TrialStatus::Ok, Some(l)) = (status, &context.limiter) {
        line = format!("{line}  [{}]", l.kind.label());
    }
    let auto = policy.steady.auto_warmup_max.is_some();
    if status == TrialStatus::Ok {
        line = format!("{line}  {}", super::steady::line_tag(&window, auto));
    }
    let mut warnings = trial_warnings(&head, measurement.as_ref(), &context);
    warnings.extend(super::steady::warnings(&head, &window, capped, policy));
    let server_version = context.server_version.clone();
    Ok(TrialEnd::Stored(Outcome {
        status,
        throughput,
        line,
        warnings,
        server_version,
    }))
}

/// How far an interrupted trial had got.
fn interruption(cx: &TrialCtx, measured: &Result<Measured, Failure>) -> String {
    let window = crate::units::format_duration(cx.exp.trials.duration);
    match measured {
        Ok(m) => format!(
            "interrupted {:.2}s into the {window} measured window; the trial was discarded",
            m.result.elapsed.as_secs_f64()
        ),
        Err(e) => format!(
            "interrupted before the measured window ({}); the trial was discarded",
            e.message
        ),
    }
}

/// Records a run event about `trial`, which was not stored: `--resume`
/// runs it again.
fn record_event(
    cx: &mut TrialCtx,
    system: &str,
    point: &Point,
    trial: u32,
    detail: String,
) -> Result<(), RunError> {
    cx.store.record_event(
        cx.run_id,
        &RunEvent {
            at: crate::store::write::now(),
            kind: RunEventKind::TrialInterrupted,
            system: Some(system.to_string()),
            point_index: Some(point.index),
            trial: Some(trial),
            detail,
        },
    )?;
    Ok(())
}

/// An extra trial, not stored and not used for statistics: its throughput,
/// and with `profile` the server's folded stacks over the measured window
/// (on-CPU samples, or blocked time from every context switch).
pub fn extra_trial(
    cx: &mut TrialCtx,
    system: usize,
    point: &Point,
    profile: Option<Recording>,
) -> Result<(f64, Option<Result<Folded, ProfileError>>), String> {
    let mut context = TrialContext::default();
    let m = measure(cx, system, point, &mut context, profile).map_err(|f| f.message)?;
    if let Some(reason) = judge(&m) {
        return Err(reason);
    }
    Ok((m.result.rps(), m.profile))
}

/// Starts what is needed and runs warmup plus the measured window (under
/// `perf record` with `profile`). An `Err` is a failure before anything
/// was measured.
fn measure(
    cx: &mut TrialCtx,
    system: usize,
    point: &Point,
    context: &mut TrialContext,
    profile: Option<Recording>,
) -> Result<Measured, Failure> {
    let policy = cx.exp.trials.restart;
    let plan = cx.exp.plan.clone();
    let system_plan = &plan.systems[system];
    let planned = plan.point(system, point);
    // The workload declares its dataset; the server is started holding it.
    let wanted = Wanted {
        point: point.index,
        kind: system_plan.server_kind,
        planned,
    };
    let server = cx
        .servers
        .ensure(system, &wanted, policy, cx.base_dir, cx.shutdown)
        .map_err(|e| e.failure())?;
    server.target.check_port().map_err(|e| e.to_string())?;
    context.placement = Some(server.placement.describe());
    context.dataset = server.target.dataset();
    context.server_version = server.target.version();
    context.server_settings = server.target.describe();
    let client_cpus = server.placement.client_cpus();
    let spec = load_spec(cx.exp, planned, client_cpus.clone());
    context.load = Some(LoadShape {
        connections: spec.connections,
        threads: spec.threads,
        rate: planned.common.rate,
        connreqs: spec.requests_per_connection,
        client_cpus: client_cpus.clone(),
    });
    let root_pid = server.target.root_pid();
    // Without a PID the server's CPU cannot be told from the rest: said
    // with the trial, whose background is then unknown.
    let unidentified = root_pid.map_or_else(|| server.target.unidentified(), |_| None);
    // One driver for the warmup and the measured window.
    let load = TrialLoad::new(cx.cluster, system_plan.load_kind, planned, &server.endpoint)?;
    let warmed = super::steady::warm_up(&load, &spec, &cx.exp.trials, cx.shutdown)?;
    let server_cpus = server.placement.cpus.clone();
    let waits_before = server.target.wait_counters();
    let requests_before = server.target.worker_requests();
    let interval = cx.exp.trials.sample_interval;
    let site = cx.servers.site(system).clone();
    let prober = prober(&site);
    let probe = ServerProbe::start(
        &site,
        interval,
        root_pid,
        (&cx.exp.energy, cx.exp.syscalls),
        cx.base_dir,
    )?;
    let recorder = profile.map(|p| match site {
        ServerSite::Local => start_recorder(cx.base_dir, server_cpus.as_deref(), p),
        _ => Err(ProfileError::Failed(
            "the server runs on another host; flame graphs are taken on this machine only".into(),
        )),
    });
    let run = load.run(&spec, cx.shutdown);
    let mut probe = probe.stop();
    if unidentified.is_some() {
        probe.summary.background = probe
            .summary
            .background
            .take()
            .map(crate::probe::background::Background::server_not_told_apart);
    }
    probe.summary.warnings.extend(unidentified);
    if let Ok(r) = &run {
        let shares = super::sites::client_shares_meter(&site);
        probe.summary.set_energy_per_op(r.result.rps(), shares);
    }
    let (probe, probe_refused) = match probe.finite() {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    let profile = recorder.map(|r| {
        let root = root_pid.ok_or_else(|| ProfileError::Failed("the server has no PID".into()));
        r.and_then(|(rec, _dir)| rec.finish(root?))
    });
    let run = run.map_err(|f| f.during("load"))?;
    let window = Window {
        duration: spec.duration,
        drain: spec.timeout,
        elapsed: run.result.elapsed,
        held: run.result.held,
        client: run.held_host.as_ref().map_or("scalelab".into(), |h| {
            format!("the agent on client host {h}")
        }),
        probe_s: probe
            .as_ref()
            .map(|p| p.summary.window_s)
            .filter(|w| *w > 0.0),
        interval,
        prober,
    };
    context.clients = run.clients.clone();
    context.coordination = run.coordination;
    let server = cx
        .servers
        .active(system)
        .ok_or("the server was stopped during the trial")?;
    let server_waits = waits_before
        .zip(server.target.wait_counters())
        .and_then(|(a, b)| crate::probe::limiter::server_waits::ServerWaits::between(&a, &b));
    let worker_requests = requests_before
        .zip(server.target.worker_requests())
        .and_then(|(a, b)| crate::probe::limiter::balance::worker_requests_between(&a, &b));
    let (server_died, unanswered) = match server.target.liveness() {
        Liveness::Running => (false, None),
        Liveness::Gone => (true, None),
        Liveness::Unknown(why) => (false, Some(why)),
    };
    let disk_full = server_died
        .then(|| crate::server::diagnose::disk_full(server.target.as_ref()))
        .flatten();
    if server_died || unanswered.is_some() {
        cx.servers.stop(system);
    }
    let client_cpus = client_cpus
        .map(|c| c.len())
        .unwrap_or_else(crate::placement::online_cpus);
    Ok(Measured {
        result: run.result,
        window,
        probe,
        probe_refused,
        server_died,
        unanswered,
        disk_full,
        client_cpus,
        client_hosts: run.clients,
        profile,
        server_waits,
        worker_requests,
        warmed,
    })
}

/// The start of a perf directory's name in the base dir; the owner's PID
/// follows (`perf-<PID>-<random>`).
pub(crate) const PERF_DIR: &str = "perf-";

/// Starts `perf record` on the server's CPUs (all CPUs when it is not
/// pinned), writing into a fresh directory `base/perf-<PID>-<random>`
/// (removed by the reaper if scalelab is killed).
fn start_recorder(
    base: &Path,
    cpus: Option<&[usize]>,
    recording: Recording,
) -> Result<(Recorder, OwnedDir), ProfileError> {
    let dir = OwnedDir::create(base, PERF_DIR).map_err(|e| ProfileError::Io {
        what: format!("make a directory under {}", base.display()),
        source: e,
    })?;
    Ok((Recorder::start(dir.path(), cpus, recording)?, dir))
}

fn load_spec(exp: &Experiment, r: &PointPlan, client_cpus: Option<Vec<usize>>) -> LoadSpec {
    let cpus = client_cpus
        .as_ref()
        .map(Vec::len)
        .unwrap_or_else(crate::placement::online_cpus) as u32;
    let threads = LoadSpec::default_threads(r.common.threads, cpus, r.common.connections);
    LoadSpec {
        connections: r.common.connections,
        threads,
        duration: exp.trials.duration,
        pacing: r
            .common
            .rate
            .map_or(Pacing::Closed, |rate| Pacing::Open { rate }),
        requests_per_connection: r.common.connreqs,
        timeout: r.common.timeout,
        max_requests: None,
        client_cpus,
        // Recipes measure scaling, where the server is often not saturated:
        // reply coalescing would lower those points' throughput.
        coalesce: false,
    }
}

/// Why the trial describes the client rather than the server, if it does:
/// the load generator used (or waited for) 90% of the CPUs it may use.
fn client_bound(m: &Measured) -> Option<String> {
    if !m.client_hosts.is_empty() {
        // Each client host is judged on its own CPUs.
        return m.client_hosts.iter().find_map(|c| {
            c.client_bound
                .as_ref()
                .map(|reason| format!("client host {}: {reason}", c.host))
        });
    }
    let r = &m.result;
    // The load kind's own rule first (a DNS generator behind its schedule,
    // a forwarding search that checked every step's sent rate).
    if let KindRule::Decided(why) = r.extras.client_bound() {
        return why;
    }
    let by_cpu =
        crate::probe::client_bound_reason(r.client_cpu.0, r.elapsed.as_secs_f64(), m.client_cpus);
    by_cpu.or_else(|| {
        m.probe
            .as_ref()
            .and_then(|p| crate::probe::client_verdict(&p.summary, m.client_cpus))
    })
}

/// What limited the trial (`probe::limiter`), from the probe's figures,
/// the load's errors and whether the client bounded it.
fn limiter(
    m: &Measured,
    client_bound: Option<&str>,
    context: &TrialContext,
) -> crate::probe::limiter::Limiter {
    let summary = m.probe.as_ref().map(|p| &p.summary);
    let pinned = context.placement.as_ref().and_then(|p| p.cpus.as_deref());
    // Unpinned, the server may use every CPU of its host: this machine's,
    // or the server host's as its probe counted them.
    let host_cpus = summary
        .filter(|s| context.server_host.is_some() && s.online_cpus > 0)
        .map(|s| s.online_cpus as usize);
    let server_cpus = pinned.map_or_else(
        || host_cpus.unwrap_or_else(crate::placement::online_cpus),
        <[usize]>::len,
    );
    // A server pinned has the load generator on the other CPUs; one on
    // another host does not share them either.
    let shares_cpus = pinned.is_none() && m.client_hosts.is_empty();
    let mut limiter = crate::probe::limiter::judge(&crate::probe::limiter::LimiterInputs {
        cpus_busy_share: summary.and_then(|s| crate::probe::limiter::cpu::busy_share(s, pinned)),
        client_cpu_s: summary.filter(|_| shares_cpus).map(|s| s.client_cpu_s),
        figures: summary.and_then(|s| s.limiter.as_ref()),
        server_waits: m.server_waits,
        worker_requests: m.worker_requests.as_deref(),
        background: summary.and_then(|s| s.background),
        window_s: summary.map_or(m.result.elapsed.as_secs_f64(), |s| s.window_s),
        server_cpu_s: summary.and_then(|s| s.server_cpu_s),
        server_cpus: server_cpus as u32,
        client_bound,
        errors: m.result.errors.total(),
        requests: m.result.requests,
    });
    // What the CPU bought: the work per request beside a CPU verdict.
    let cpu_bound = matches!(
        limiter.kind,
        crate::probe::limiter::LimiterKind::ServerCpu
            | crate::probe::limiter::LimiterKind::CpusShared
    );
    let work = summary.and_then(|s| s.work.as_ref());
    if let (true, Some(clause)) = (
        cpu_bound,
        work.and_then(|w| crate::probe::work::per_request_clause(w, m.result.requests)),
    ) {
        limiter.verdict = format!("{}; {clause}", limiter.verdict);
    }
    limiter
}

/// Who probes the server at `site`, for the probe-window fault.
fn prober(site: &ServerSite) -> String {
    match site {
        ServerSite::Local => "scalelab's sampler".into(),
        ServerSite::Agent(_) => "the server host's agent".into(),
        ServerSite::Ssh(_, host) => format!("the probe on {host} (over ssh)"),
    }
}

/// A measured trial's failure, or `None` when it is good: a host that
/// stopped answering over ssh, and (`remote`: the server on another host)
/// a probe window bent by a stalled host, are lost hosts that `--resume`
/// runs again; else [`judge`]'s reason, a full disk named first.
fn judged(m: &Measured, remote: bool) -> Option<Failure> {
    if let Some(why) = &m.unanswered {
        return Some(Failure::unanswered(why));
    }
    if let (true, Some(WindowFault::ProbeOverran(why))) = (remote, judge_window(&m.window)) {
        return Some(Failure {
            message: why,
            cause: Some(crate::store::FailureCause::LostHost),
        });
    }
    judge(m).map(|reason| Failure::judged(reason, m.disk_full.clone()))
}

/// Why a measured trial counts as failed, or `None` when it is good.
fn judge(m: &Measured) -> Option<String> {
    let r = &m.result;
    if m.server_died {
        return Some(format!(
            "the server died during the trial ({} requests completed before)",
            r.requests
        ));
    }
    if let Some(note) = r.notes.iter().find(|n| n.contains("ephemeral port")) {
        return Some(note.clone());
    }
    if let Some(
        WindowFault::Overran(why) | WindowFault::Held(why) | WindowFault::ProbeOverran(why),
    ) = judge_window(&m.window)
    {
        return Some(why);
    }
    if r.requests == 0 {
        let e = &r.errors;
        return Some(format!(
            "no request completed: errors connect {}, read {}, write {}, timeout {}, protocol {}, other {}",
            e.connect, e.read, e.write, e.timeout, e.protocol, e.other
        ));
    }
    None
}

/// Trial `n` out of the stopping rule's budget: `2/4` when `min = max`,
/// else `4 of 3..10` (the rule stops between the two).
pub fn of_budget(n: u32, min: u32, max: u32) -> String {
    if min == max {
        format!("{n}/{max}")
    } else {
        format!("{n} of {min}..{max}")
    }
}

/// `1 worker  connections=64  #2/4  139874/s  p99 1.93ms`, or the failure.
fn trial_line(
    head: &str,
    status: TrialStatus,
    error: Option<&str>,
    m: Option<&Measurement>,
) -> String {
    match (status, m) {
        (TrialStatus::Ok, Some(m)) => format!(
            "{head}  {:>12.0}/s  p99 {}",
            m.rps.0,
            // `112µs`, as the tables print it.
            crate::judging::format::latency_us(m.latency_us.p99.0 as f64)
        ),
        _ => format!("{head}  FAILED: {}", error.unwrap_or("unknown")),
    }
}

/// The trial's warnings, one line each, said as they happen rather than
/// in a list at the end: client-bound (with why), and errors by kind.
fn trial_warnings(head: &str, m: Option<&Measurement>, context: &TrialContext) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = context.client_bound_why() {
        out.push(format!("{head}  client-bound: {why}"));
    }
    if let Some(m) = m.filter(|m| m.errors.total() > 0) {
        let attempts = m.requests + m.errors.total();
        out.push(format!(
            "{head}  {} error{} ({} of {attempts} attempts): {}",
            m.errors.total(),
            if m.errors.total() == 1 { "" } else { "s" },
            crate::judging::format::sig(100.0 * m.errors.total() as f64 / attempts as f64, 2) + "%",
            m.errors.kinds()
        ));
    }
    out
}
