//! The multi-host view: how each client host carried its share of the load
//! in every trial, how evenly the clients started, and what coordination
//! cost. Empty for a run on one machine.

use crate::store::context::ClientShare;
use crate::store::{RunData, Trial};
use maud::{html, Markup};

/// The content of the "Client hosts" section (the page adds its heading),
/// or nothing for a single-machine run.
pub fn section(data: &RunData) -> Markup {
    let mut rows: Vec<(&Trial, &ClientShare, u64)> = Vec::new();
    let mut skews = Vec::new();
    let mut overheads = Vec::new();
    let mut hosts = std::collections::BTreeSet::new();
    for t in &data.trials {
        let shares = &t.context.clients;
        if shares.is_empty() {
            continue;
        }
        if let Some(c) = &t.context.coordination {
            skews.push(c.start_skew_us);
            overheads.push(c.overhead_us);
        }
        let total: u64 = shares.iter().map(|s| s.requests).sum::<u64>().max(1);
        for s in shares {
            hosts.insert(s.host.clone());
            rows.push((t, s, total));
        }
    }
    if rows.is_empty() {
        return Markup::default();
    }
    let max = |v: &[f64]| v.iter().cloned().fold(0.0_f64, f64::max);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (skew_max, overhead_max) = (max(&skews), max(&overheads));
    let intro = format!(
        "The load of every point was split evenly over {n} client hosts ({list}): \
         the sweep's connections and rate are totals. Clients start their measured \
         windows at one instant; the start skew was at most {skew_max:.0} µs \
         (median {skew_med:.0} µs), and coordination added at most {ovh:.1} ms \
         (median {ovh_med:.1} ms) per trial.",
        n = hosts.len(),
        list = hosts.into_iter().collect::<Vec<_>>().join(", "),
        skew_med = median(&mut skews),
        ovh = overhead_max / 1e3,
        ovh_med = median(&mut overheads) / 1e3,
    );
    html! {
            p { (intro) }
            table {
                thead { tr {
                    th { "system" } th { "point" } th { "trial" } th { "client host" }
                    th { "req/s" } th { "share" } th { "client CPU s" }
                    th { "start offset µs" } th { "client-bound" }
                } }
                tbody {
                    @for (t, s, total) in rows {
                        tr {
                            td { (t.system) }
                            td { (t.point.label()) }
                            td { "#" (t.trial) }
                            td { (s.host) }
                            td class="num" { (format!("{:.0}", s.rps)) }
                            td class="num" { (format!("{:.1}%", 100.0 * s.requests as f64 / total as f64)) }
                            td class="num" { (format!("{:.3}", s.client_cpu_s)) }
                            td class="num" { (format!("{:.0}", s.start_offset_us)) }
                            td { (s.client_bound.as_deref().unwrap_or("")) }
                        }
                    }
                }
            }
    }
}
