//! The profiling pass after the sweep (`run --profile`): at each point that
//! is some system's peak or collapse, every system runs a plain trial and
//! then a trial under `perf record`, back to back. Both are extra trials:
//! they are stored as a profile (folded stacks plus the paired throughputs
//! that give the overhead), never as trials, so the statistics ignore them.
//! A third extra trial records every context switch
//! (`sched:sched_switch`) for the off-CPU graph; where tracepoints may not
//! be used, one line says so and no later point tries again. Measured
//! trials are never traced.

use super::trial::{extra_trial, TrialCtx};
use super::{PointState, RunError};
use crate::model::Point;
use crate::profile::{self, ProfileError, Recording, Role};
use crate::recipe::ProfilePolicy;
use crate::store::ProfileRecord;

/// Profiles the run's marked points; returns one line per profile taken or
/// the one line saying why there is none.
pub(super) fn profile_run(
    cx: &mut TrialCtx,
    policy: ProfilePolicy,
    points: &[Point],
    states: &[PointState],
) -> Result<Vec<String>, RunError> {
    let systems = cx.exp.systems.len();
    let medians: Vec<Vec<Option<f64>>> = (0..systems)
        .map(|s| {
            states
                .iter()
                .map(|st| crate::analysis::summary::median(&st.samples[s]))
                .collect()
        })
        .collect();
    let plan = profile::plan(&medians);
    if plan.is_empty() {
        return Ok(vec!["no profile: no point had a successful trial".into()]);
    }
    let mut lines = Vec::new();
    let mut offcpu_possible = true;
    for (index, roles) in plan {
        let point = &points[index];
        for (system, role) in roles.into_iter().enumerate() {
            if cx.shutdown.is_triggered() {
                return Ok(lines);
            }
            let (mut record, unavailable) = profile_one(cx, policy, system, point, role);
            let noise =
                profile::overhead_noise(&states[index].samples[system], cx.exp.trials.noise);
            lines.push(describe(&record, noise));
            if offcpu_possible && !unavailable {
                let traced = offcpu_one(cx, system, point, &mut record);
                offcpu_possible = traced.is_some();
                let head = format!("profile {:<16} {:<28}", record.system, point.label());
                match (&record.offcpu_error, traced.flatten()) {
                    (Some(why), _) => lines.push(format!("{head} no off-CPU profile: {why}")),
                    (None, Some((waits, rps))) => lines.push(format!(
                        "{head} off-CPU: {waits} waits traced, {rps:.0}/s under tracing{}",
                        match profile::Overhead::judge(record.plain_rps, Some(rps), noise) {
                            profile::Overhead::Unknown => String::new(),
                            o => format!(" (overhead {o} against the plain trial)"),
                        }
                    )),
                    (None, None) => {}
                }
            }
            cx.store.insert_profile(cx.run_id, &record)?;
            if unavailable {
                // perf cannot run here: one line, and the run goes on.
                return Ok(lines);
            }
        }
    }
    Ok(lines)
}

/// One (system, point): a plain trial, then a profiled one. The flag says
/// perf is unavailable on this machine (no use trying other points).
fn profile_one(
    cx: &mut TrialCtx,
    policy: ProfilePolicy,
    system: usize,
    point: &Point,
    role: Role,
) -> (ProfileRecord, bool) {
    let mut record = ProfileRecord {
        system: cx.exp.systems[system].label.clone(),
        point: point.clone(),
        role: role.as_str().into(),
        samples: 0,
        folded: None,
        plain_rps: None,
        profiled_rps: None,
        error: None,
        offcpu: None,
        offcpu_error: None,
    };
    match extra_trial(cx, system, point, None) {
        Ok((rps, _)) => record.plain_rps = Some(rps),
        Err(e) => {
            record.error = Some(format!("the plain trial failed: {e}"));
            return (record, false);
        }
    }
    let on_cpu = Recording::OnCpu {
        frequency: policy.frequency,
    };
    match extra_trial(cx, system, point, Some(on_cpu)) {
        Ok((rps, folded)) => {
            record.profiled_rps = Some(rps);
            match folded {
                Some(Ok(f)) if f.samples > 0 => {
                    record.samples = f.samples;
                    record.folded = Some(f.text);
                }
                Some(Ok(_)) => record.error = Some("perf saw no samples of the server".into()),
                Some(Err(ProfileError::Unavailable { reason })) => {
                    record.error = Some(reason);
                    return (record, true);
                }
                Some(Err(e)) => record.error = Some(e.to_string()),
                None => record.error = Some("the trial was not profiled".into()),
            }
        }
        Err(e) => record.error = Some(format!("the profiled trial failed: {e}")),
    }
    (record, false)
}

/// A third extra trial under `sched:sched_switch` tracing: the off-CPU
/// stacks go into `record`. Returns `None` when tracepoints are not
/// permitted here (no use trying the next point), else the waits traced
/// and the traced trial's throughput when it was traced.
fn offcpu_one(
    cx: &mut TrialCtx,
    system: usize,
    point: &Point,
    record: &mut ProfileRecord,
) -> Option<Option<(u64, f64)>> {
    match extra_trial(cx, system, point, Some(Recording::OffCpu)) {
        Ok((rps, Some(Ok(f)))) if !f.text.is_empty() => {
            record.offcpu = Some(f.text);
            return Some(Some((f.samples, rps)));
        }
        Ok((_, Some(Ok(_)))) => {
            record.offcpu_error = Some("no blocked time of the server was traced".into())
        }
        Ok((_, Some(Err(ProfileError::Unavailable { reason })))) => {
            record.offcpu_error = Some(format!(
                "tracepoints (sched:sched_switch) are not permitted here; the run goes on ({reason})"
            ));
            return None;
        }
        Ok((_, Some(Err(e)))) => record.offcpu_error = Some(e.to_string()),
        Ok((_, None)) => record.offcpu_error = Some("the trial was not traced".into()),
        Err(e) => record.offcpu_error = Some(format!("the traced trial failed: {e}")),
    }
    Some(None)
}

fn describe(r: &ProfileRecord, noise: f64) -> String {
    let head = format!("profile {:<16} {:<28}", r.system, r.point.label());
    match (&r.folded, r.overhead()) {
        (Some(_), Some(_)) => format!(
            "{head} {} samples ({}), overhead {} ({:.0}/s plain, {:.0}/s under perf)",
            r.samples,
            r.role,
            profile::Overhead::judge(r.plain_rps, r.profiled_rps, noise),
            r.plain_rps.unwrap_or(0.0),
            r.profiled_rps.unwrap_or(0.0)
        ),
        _ => format!(
            "{head} no profile: {}",
            r.error.as_deref().unwrap_or("unknown")
        ),
    }
}
