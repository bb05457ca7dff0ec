//! `scalelab load forward`: builds its own router lab, runs the RFC 2544
//! throughput search through it, removes the lab, and prints the result
//! (text, or one JSON object). With `--sink ADDRESS` it only sends, from
//! the private namespace it runs in, into a sink the user built.

use super::load_args::duration_arg;
use anyhow::Context;
use scalelab::load::forward::sink::{self, SinkPlan};
use scalelab::load::forward::trial::LossSite;
use scalelab::load::forward::tx::Generator;
use scalelab::load::forward::{ForwardDriver, ForwardReport, ForwardSettings};
use scalelab::load::result::LatencySummary;
use scalelab::load::{LoadError, LoadSpec, Pacing};
use scalelab::server::router::{Router, RouterSettings};
use scalelab::server::Server;
use scalelab::shutdown::Shutdown;
use std::time::Duration;

/// No peer's flags to translate: iperf3 and RFC 2544 testers share none.
pub const HABITS: &[super::habits::Habit] = &[];

#[derive(clap::Args, Debug)]
pub struct LoadForwardArgs {
    /// Ethernet frame size in bytes, FCS included (RFC 2544: 64..1518).
    #[arg(long, default_value_t = 64, value_name = "BYTES")]
    pub frame_size: u32,
    /// Send A→B and B→A at once.
    #[arg(long)]
    pub bidirectional: bool,
    /// Length of each search trial: 500ms, 2s...
    #[arg(short = 'd', long, default_value = "2s", value_parser = duration_arg)]
    pub duration: Duration,
    /// Acceptable loss in percent of frames sent.
    #[arg(long, default_value_t = 0.0, value_name = "PERCENT")]
    pub loss: f64,
    /// Search precision in percent of the rate.
    #[arg(long, default_value_t = 2.0, value_name = "PERCENT")]
    pub precision: f64,
    /// One trial at this total rate (frames/s) instead of the search.
    #[arg(short = 'R', long, value_name = "FRAMES/S")]
    pub rate: Option<f64>,
    /// R's CPUs (RPS on R's interfaces), comma-separated; default: the last
    /// CPU, with the generator on the others.
    #[arg(long, value_delimiter = ',', value_name = "CPUS")]
    pub router_cpus: Option<Vec<usize>>,
    /// CPUs the hosts' receive stacks run on (RPS on A's and B's
    /// interfaces), comma-separated; default: the CPU that delivered the
    /// frame (R's).
    #[arg(long, value_delimiter = ',', value_name = "CPUS")]
    pub host_rps_cpus: Option<Vec<usize>>,
    /// nftables rules in R that every packet walks (0: no firewall).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub firewall_rules: u32,
    /// A `net.core.*` or `net.ipv4.*` sysctl set inside R, such as
    /// `--sysctl net.ipv4.conf.all.rp_filter=0` (repeatable).
    #[arg(long = "sysctl", value_name = "KEY=VALUE")]
    pub sysctls: Vec<String>,
    /// How frames are handed to the kernel: packet_ring (AF_PACKET TX ring,
    /// the default), sendmmsg, io_uring or xdp (AF_XDP, copy mode).
    #[arg(long, value_parser = generator_arg, value_name = "METHOD")]
    pub generator: Option<Generator>,
    /// Send only, for --duration, into a sink at this address
    /// (198.18.0.0/15) reached through an interface of the private
    /// namespace scalelab runs in (`ip netns exec NAME`); no lab, no
    /// search: frames are counted by the interface's TX counter. At
    /// --rate, or as fast as the generator can without it.
    #[arg(long, value_name = "ADDRESS", conflicts_with_all = [
        "bidirectional", "router_cpus", "host_rps_cpus", "firewall_rules", "sysctls"])]
    pub sink: Option<std::net::Ipv4Addr>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

fn generator_arg(text: &str) -> Result<Generator, String> {
    Generator::parse(text)
}

/// Exit codes as `run` gives them: 0 a rate was found, 2 bad input (or a
/// lab that could not be built, before anything ran), 4 nothing measured
/// (no rate passed, or the search failed and has no result), 130
/// interrupted. A search gives one result or none, so there is no partial
/// run (3).
pub fn run(a: &LoadForwardArgs, shutdown: &Shutdown) -> anyhow::Result<i32> {
    use super::exit;
    if let Some(dest) = a.sink {
        return run_sink(a, dest, shutdown);
    }
    let settings = ForwardSettings {
        frame_size: Some(a.frame_size),
        bidirectional: a.bidirectional,
        loss: Some(a.loss),
        precision: Some(a.precision),
        max_steps: None,
        generator: a.generator.unwrap_or_default(),
    };
    settings.validate()?;
    let spec = LoadSpec {
        pacing: a.rate.map_or(Pacing::Closed, |rate| Pacing::Open { rate }),
        client_cpus: None,
        ..LoadSpec::closed(1, 1, a.duration)
    };
    spec.validate()?;
    let online = scalelab::placement::online_cpus();
    let router_cpus = a
        .router_cpus
        .clone()
        .or_else(|| (online > 1).then(|| vec![online - 1]));
    let client_cpus: Option<Vec<usize>> = router_cpus
        .as_ref()
        .map(|r| (0..online).filter(|c| !r.contains(c)).collect::<Vec<_>>());
    let spec = LoadSpec {
        client_cpus: client_cpus.filter(|c| !c.is_empty()),
        ..spec
    };
    let mut router = Router::from_settings(router_settings(a)?);
    let endpoint = router
        .build(router_cpus.clone())
        .context("building the router lab")?;
    let driver = ForwardDriver::new(settings, &endpoint.uri)?;
    let report = driver.forward(&spec, shutdown);
    router.stop()?;
    if shutdown.is_triggered() {
        eprintln!("interrupted: a search cut short has no result");
        return Ok(exit::INTERRUPTED);
    }
    let report = match report {
        Ok(r) => r,
        // The frame size against the lab's MTU is only known now.
        Err(e @ LoadError::Spec(_)) => return Err(e.into()),
        Err(e) => {
            eprintln!("error: the forwarding search through the lab failed: {e}");
            return Ok(exit::NOTHING_MEASURED);
        }
    };
    if a.json {
        let json = serde_json::json!({
            "pps": report.pps,
            "gbit_s": report.gbit_s,
            "frame_size": report.frame_size,
            "loss": report.loss,
            "bidirectional": report.bidirectional,
            "client_bound": report.client_bound,
            "generator": report.generator.name(),
            "trial_s": a.duration.as_secs_f64(),
            "router": router.describe(),
            "kernel": report.best().map(|b| &b.kernel),
            "best": report.best(),
            "latency_us": report.best().and_then(|b| b.latency.as_ref()).map(LatencySummary::of),
            "steps": report.search.steps,
        });
        outln!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print_text(&report);
    }
    if report.best().is_none() {
        eprintln!("nothing was measured: {}", report.nothing_passed());
        return Ok(exit::NOTHING_MEASURED);
    }
    Ok(exit::OK)
}

/// `--sink`: sends for --duration and prints what the interface counted.
/// Exit 0 when the interface counted frames, 4 when none left, 130
/// interrupted.
fn run_sink(
    a: &LoadForwardArgs,
    dest: std::net::Ipv4Addr,
    shutdown: &Shutdown,
) -> anyhow::Result<i32> {
    use super::exit;
    if a.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        anyhow::bail!("--rate must be a positive number of frames per second, such as -R 1000000");
    }
    if a.duration.is_zero() {
        anyhow::bail!("--sink sends for --duration, which must be above zero, such as -d 3s");
    }
    let plan = SinkPlan {
        dest,
        generator: a.generator.unwrap_or_default(),
        frame_size: a.frame_size,
        rate: a.rate,
        duration: a.duration,
    };
    let r = match sink::run(&plan, shutdown) {
        Ok(r) => r,
        Err(e @ (LoadError::Spec(_) | LoadError::Target { .. })) => return Err(e.into()),
        Err(e) => {
            eprintln!("error: sending into the sink at {dest} failed: {e}");
            return Ok(exit::NOTHING_MEASURED);
        }
    };
    if shutdown.is_triggered() {
        eprintln!("interrupted: the sink run was cut short");
        return Ok(exit::INTERRUPTED);
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        outln!(
            "{}-byte frames into {dest} on {} by {}: {:.0} frames/s by its TX counter \
             ({} frames in {:.3} s, {} TX dropped), {:.0} ns of CPU per frame; \
             generator sent {}{}",
            r.frame_size,
            r.interface,
            r.generator.name(),
            r.tx_pps,
            r.tx_packets,
            r.duration_s,
            r.tx_dropped,
            r.cpu_s / r.tx_packets.max(1) as f64 * 1e9,
            r.sent,
            if r.reconciled {
                " (reconciled)"
            } else {
                " (NOT reconciled with the interface)"
            },
        );
    }
    if r.tx_packets == 0 {
        eprintln!("nothing was measured: the interface sent no frame");
        return Ok(exit::NOTHING_MEASURED);
    }
    Ok(exit::OK)
}

/// R's settings from the flags, checked as a `[server]` table is.
fn router_settings(a: &LoadForwardArgs) -> anyhow::Result<RouterSettings> {
    let mut t = toml::Table::new();
    if a.firewall_rules > 0 {
        t.insert("firewall".into(), "rules".into());
        t.insert("firewall_rules".into(), i64::from(a.firewall_rules).into());
    }
    if let Some(cpus) = &a.host_rps_cpus {
        let list: Vec<toml::Value> = cpus.iter().map(|&c| (c as i64).into()).collect();
        t.insert("host_rps_cpus".into(), list.into());
    }
    let mut sysctls = toml::Table::new();
    for pair in &a.sysctls {
        let Some((key, value)) = pair.split_once('=') else {
            anyhow::bail!(
                "--sysctl `{pair}` is not KEY=VALUE, such as --sysctl net.ipv4.ip_forward=1"
            );
        };
        sysctls.insert(key.trim().into(), value.trim().into());
    }
    if !sysctls.is_empty() {
        t.insert("sysctls".into(), sysctls.into());
    }
    Ok(RouterSettings::parse(&t)?)
}

fn print_text(r: &ForwardReport) {
    let dirs = if r.bidirectional { "A<->B" } else { "A->B" };
    outln!(
        "RFC 2544 throughput, {}-byte frames, {dirs}, loss <= {}%",
        r.frame_size,
        r.loss
    );
    // Rates (frames/s of the step's sending time) first, then counts of
    // frames; each column says which.
    outln!("  step     nominal     offered    received      lost   lost in R  lost at rcv  result");
    outln!("        (frames/s)  (frames/s)  (frames/s)  (frames)    (frames)     (frames)");
    for (i, s) in r.search.steps.iter().enumerate() {
        let t = &s.trial;
        let nominal = s
            .offered_pps
            .map_or("unpaced".to_string(), |p| format!("{p:.0}"));
        let verdict = match (s.passed, s.client_bound && s.offered_pps.is_some()) {
            (true, false) => "pass".to_string(),
            (true, true) => "pass at sent rate (client-bound)".to_string(),
            (false, _) => match t.loss_site() {
                Some(LossSite::Router) => "loss, in R".to_string(),
                Some(LossSite::Receiver) => "loss, entering the receiver".to_string(),
                None => "loss".to_string(),
            },
        };
        outln!(
            "  {:>4}  {:>10}  {:>10.0}  {:>10.0}  {:>8}  {:>10}  {:>11}  {verdict}",
            i,
            nominal,
            t.sent_pps,
            t.received_pps(),
            t.lost,
            t.lost_in_router(),
            t.lost_at_receiver(),
        );
    }
    outln!(
        "  (offered: frames actually sent per second of sending, resent ones included; \
         nominal: the rate asked for)"
    );
    if let Some(l) = r.best().and_then(|b| b.latency.as_ref()) {
        outln!(
            "One-way latency at the result: {}",
            LatencySummary::of(l).describe()
        );
    }
    outln!(
        "Throughput: {:.0} frames/s ({:.3} Gbit/s){}",
        r.pps,
        r.gbit_s,
        if r.client_bound {
            "  [client-bound: the generator, not the router, was the limit]"
        } else {
            ""
        }
    );
}
