//! The interval probe of a host without an agent: one long-lived shell
//! there ([`super::probe_script`]) asked for a sample every interval by a
//! thread here, and once more at the window's end; the samples become the
//! timeline and summary the agent's probe gives ([`super::summarize`]).

use super::parse::{parse_sample, HostSample};
use super::probe_script::probe_script;
use super::session::{Session, SessionError};
use super::summarize::{summarize, Timed};
use crate::probe::ProbeData;
use crate::remote::ssh::Ssh;
use crate::remote::Host;
use crate::server::bare::HostOs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one sample may take to arrive.
const SAMPLE_LIMIT: Duration = Duration::from_secs(10);

/// A running interval probe.
pub struct IntervalProbe {
    session: Arc<Session>,
    os: HostOs,
    started: Instant,
    interval: Duration,
    root: Option<u32>,
    samples: Arc<Mutex<Vec<Timed>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Asks `session` for one sample and parses it.
fn take(session: &Session, os: HostOs) -> Result<HostSample, String> {
    session.send("s")?;
    let lines = session.until(&["#end"], SAMPLE_LIMIT)?;
    let from = lines.iter().rposition(|l| l == "#sample").unwrap_or(0);
    Ok(parse_sample(os, &lines[from..].join("\n")))
}

impl IntervalProbe {
    /// Starts the shell on `host` (scripts go to `dir` there), takes the
    /// first sample and samples every `interval` until [`Self::stop`].
    pub fn start(
        ssh: &Ssh,
        host: &Host,
        dir: &str,
        interval: Duration,
        root: Option<u32>,
    ) -> Result<IntervalProbe, SessionError> {
        let os = super::server::host_os(ssh, host)?;
        let name = format!(
            "scalelab-probe-{}-{}.sh",
            std::process::id(),
            super::server::unique()
        );
        let script = probe_script(os, root);
        let what = format!("the probe on {host}");
        let session = Arc::new(Session::start_remote(ssh, host, dir, &name, &script, what)?);
        let first = take(&session, os)?;
        let started = Instant::now();
        let samples = Arc::new(Mutex::new(vec![(0.0, first)]));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (session, samples, stop) = (session.clone(), samples.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut next = started + interval;
                while !stop.load(Ordering::SeqCst) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    next += interval;
                    let t = started.elapsed().as_secs_f64();
                    match take(&session, os) {
                        Ok(s) => crate::remote::lock(&samples).push((t, s)),
                        Err(_) => break,
                    }
                }
            })
        };
        Ok(IntervalProbe {
            session,
            os,
            started,
            interval,
            root,
            samples,
            stop,
            thread: Some(thread),
        })
    }

    /// Takes the last sample, ends the shell and returns the window's data.
    pub fn stop(mut self) -> ProbeData {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let t = self.started.elapsed().as_secs_f64();
        let last = take(&self.session, self.os);
        let mut samples = std::mem::take(&mut *crate::remote::lock(&self.samples));
        let failed = match last {
            Ok(s) => {
                samples.push((t, s));
                None
            }
            Err(e) => Some(e),
        };
        let mut data = if samples.len() >= 2 {
            summarize(&samples, self.root, self.interval.as_secs_f64())
        } else {
            ProbeData::default()
        };
        if let Some(e) = failed {
            data.summary
                .warnings
                .push(format!("the probe's last sample failed: {e}"));
        }
        data
    }
}
