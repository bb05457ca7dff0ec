//! Seed 000's combined figure and seed 004's CPU line, plus the words a
//! chart uses for the run's load kind:
//!
//! - seed 000 (2018): TPS, TPS per thread normalised to a baseline thread
//!   count, and CPU load × frequency, on one plot with two y axes, because
//!   where they part is the finding; a warning when the frequency is
//!   nominal (no cpufreq: load × frequency is then load × a constant);
//! - seed 004: the server's CPU count as a vertical line on a client
//!   concurrency axis (the peak "at 8 client threads (= 1 thread/CPU core)");
//! - captions name what the load counts (requests, transactions, queries,
//!   frames), and a forwarding rate says whether it sums both directions.

use super::plain_series as series;
use super::{Chart, ChartKind, GroupCtx};
use crate::model::AxisTarget;
use crate::report::format;
use crate::report::svg::{DualAxisChart, Mark, Pt, DASHED, DOTTED};
use crate::units::RateUnit;

/// How captions speak of the load's unit of work.
pub(super) struct Words {
    /// `request`, `transaction`, `query`, `frame`.
    pub item: &'static str,
    /// What the bandwidth panel's Gbit/s counts.
    pub bytes: &'static str,
    /// Whose latency the percentiles are.
    pub latency: &'static str,
    /// What a "request" of the per-request charts is, when not an HTTP
    /// request: ` (one request is one transaction)`.
    pub request_is: &'static str,
}

impl Words {
    pub fn of(unit: Option<RateUnit>) -> Words {
        match unit {
            Some(RateUnit::Requests) | None => Words {
                item: "request",
                bytes: "response bytes read by the load generator",
                latency: "request latency, as wrk's latency distribution",
                request_is: "",
            },
            Some(RateUnit::Transactions) => Words {
                item: "transaction",
                bytes: "bytes the database clients read",
                latency: "transaction latency, as pgbench and sysbench report it",
                request_is: " (one request is one transaction)",
            },
            Some(RateUnit::Queries) => Words {
                item: "query",
                bytes: "response bytes read by the load generator",
                latency: "query latency, as dnsperf reports it",
                request_is: " (one request is one query)",
            },
            Some(RateUnit::Frames) => Words {
                item: "frame",
                bytes: "Ethernet frame bytes received (FCS included), summed over directions",
                latency: "one-way frame latency, from the timestamp each frame carries",
                request_is: " (one request is one frame forwarded)",
            },
        }
    }
}

impl GroupCtx<'_> {
    /// The caption words of this run's load kind.
    pub(super) fn words(&self) -> Words {
        Words::of(self.agg.facts.rate_unit)
    }

    /// The throughput axis's label: the unit, and for a forwarding run
    /// whether the rate is per direction or both summed.
    pub(super) fn rate_label(&self) -> String {
        match self.agg.facts.bidirectional {
            Some(true) => format!("{}, both directions summed", self.agg.unit),
            Some(false) => format!("{}, one direction (A→B)", self.agg.unit),
            None => self.agg.unit.to_string(),
        }
    }

    /// The sentence a forwarding chart's caption adds on directions.
    pub(super) fn direction_sentence(&self) -> &'static str {
        match self.agg.facts.bidirectional {
            Some(true) => {
                " Frames/s is the sum of both directions (A→B and B→A at once, the rate split \
                 evenly): each direction carried half."
            }
            Some(false) => " Frames/s is one direction, A→B.",
            None => "",
        }
    }

    /// The x axis's typed target, when the group has one.
    fn x_target(&self) -> Option<&AxisTarget> {
        let axis = self.agg.layout.x_axis.as_deref()?;
        self.agg
            .points
            .iter()
            .find_map(|p| p.coord(axis))
            .map(|c| &c.target)
    }

    /// Seed 004: a vertical line at the server's CPU count, on an axis
    /// that counts clients or server threads and whose range holds it.
    pub(super) fn cpu_count_mark(&self) -> Option<Mark> {
        if !self.agg.usl_axis || self.dataset.is_some() {
            return None;
        }
        let counts_clients = match self.x_target()? {
            AxisTarget::Connections | AxisTarget::Threads | AxisTarget::Server(_) => true,
            // The CPU count is the x itself, or x does not count anything
            // that runs on a CPU.
            AxisTarget::ServerCpus
            | AxisTarget::Rate
            | AxisTarget::Connreqs
            | AxisTarget::ServerMemory
            | AxisTarget::Load(_)
            | AxisTarget::Dataset(_) => false,
        };
        let cpus = f64::from(self.agg.facts.server_cpus?);
        let xs: Vec<f64> = self
            .agg
            .cells_in_group(self.group)
            .filter_map(|c| c.x)
            .collect();
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(*x), b.max(*x))
            });
        (counts_clients && cpus >= lo && cpus <= hi).then(|| Mark {
            x: cpus,
            label: "server's CPUs".into(),
            color: None,
            x_in_label: true,
        })
    }

    /// Seed 000's figure: throughput (left axis), and throughput per unit
    /// of x and CPU load × frequency as ratios to their value at a baseline
    /// level (right axis, 1.0 where the first system's throughput is at
    /// that level). The baseline level is the server's CPU count when the
    /// sweep has it, else the lowest level.
    pub(super) fn combined_scaling(&self) -> Option<Chart> {
        if !self.lines || self.dataset.is_some() || !self.agg.usl_axis {
            return None;
        }
        let base = self.baseline_level()?;
        let per = super::seed_panels::per_word(&self.axis);
        let mut c = DualAxisChart::new(
            &format!(
                "Throughput, throughput {per} and CPU load × frequency{}",
                self.suffix
            ),
            &self.x_label(),
            &self.rate_label(),
            &format!("× its value at {}={}", self.axis, format::axis_value(base)),
        );
        c.x_kind = self.x_kind;
        c.x_format = self.x_format();
        c.left_format = format::tick;
        c.marks.extend(self.cpu_count_mark());
        let mut any_freq = false;
        for (i, s) in self.agg.systems.iter().enumerate() {
            let cells = self.cells(s);
            let at = |x: f64| cells.iter().find(|c| c.x == Some(x)).copied();
            let Some(base_tps) = at(base).and_then(|c| c.headline()).filter(|v| *v > 0.0) else {
                continue;
            };
            if c.left.is_empty() {
                c.link = base_tps;
            }
            let tps = cells
                .iter()
                .filter_map(|c| self.throughput_point(c))
                .collect();
            c.left.push((series(s, i, tps), None));
            let per_unit = cells
                .iter()
                .filter_map(|cell| {
                    let x = cell.x.filter(|x| *x > 0.0)?;
                    let r = (cell.headline()? / x) / (base_tps / base);
                    Some(self.point(cell, r, |v| format!("{v:.2}× per unit at the baseline")))
                })
                .collect();
            c.right
                .push((series(&format!("{s} {per}"), i, per_unit), Some(DASHED)));
            let base_freq = at(base).and_then(|c| c.server.load_x_freq);
            let freq: Vec<Pt> = cells
                .iter()
                .filter_map(|cell| {
                    let r = cell.server.load_x_freq? / base_freq.filter(|v| *v > 0.0)?;
                    let mut p = self.point(cell, r, |v| format!("{v:.2}×"));
                    let ghz = cell.server.load_x_freq? / 1000.0;
                    p.tip = format!("{} ({ghz:.2} busy GHz)", p.tip);
                    Some(p)
                })
                .collect();
            if !freq.is_empty() {
                any_freq = true;
                let label = format!("{s} CPU load × frequency");
                c.right.push((series(&label, i, freq), Some(DOTTED)));
            }
        }
        if c.left.is_empty() {
            return None;
        }
        let nominal = self.agg.facts.nominal_freq.as_ref().filter(|_| any_freq);
        c.warning = nominal.map(|driver| {
            format!(
                "CPU frequency is nominal ({driver}): load × frequency is load × a constant clock"
            )
        });
        let caption = self.combined_caption(base, &per, any_freq, nominal.is_some());
        Some(self.chart(ChartKind::PerClient, c.render(), caption))
    }

    fn combined_caption(&self, base: f64, per: &str, freq: bool, nominal: bool) -> String {
        let first = self.agg.systems.first().map(String::as_str).unwrap_or("");
        format!(
            "Solid (left axis): the {} throughput. Right axis, as multiples of the value at \
             {axis}={b}, where 1.0 sits on {first}'s throughput: dashed, throughput {per} \
             (flat while each added unit brings its full share){}. Where throughput stops \
             following the CPU delivered, it is lost to contention, not to a lack of CPU.{}{}",
            self.agg.headline_word(),
            if freq {
                "; dotted, CPU load × frequency (busy share × clock summed over CPUs, \
                 machine-wide, the load generator included)"
            } else {
                "; the probe recorded no CPU frequency, so load × frequency is not drawn"
            },
            if nominal {
                " The CPU frequency is nominal on this host (no cpufreq): the dotted curve \
                 follows the load alone, not the clock."
            } else {
                ""
            },
            self.direction_sentence(),
            axis = self.axis,
            b = format::axis_value(base),
        )
    }

    /// The level the ratios are normalised to: the server's CPU count when
    /// swept, else the lowest positive level.
    fn baseline_level(&self) -> Option<f64> {
        let xs: Vec<f64> = self
            .agg
            .cells_in_group(self.group)
            .filter(|c| c.summary.is_some())
            .filter_map(|c| c.x)
            .filter(|x| *x > 0.0)
            .collect();
        let cpus = self.agg.facts.server_cpus.map(f64::from);
        cpus.filter(|n| xs.contains(n))
            .or_else(|| xs.iter().copied().reduce(f64::min))
    }
}
