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
//!   frames), and the load kind's note on its rate (a forwarding rate
//!   says whether it sums both directions: `load::facts::RateNote`).

use super::plain_series as series;
use super::{Chart, ChartKind, GroupCtx};
use crate::judging::format;
use crate::judging::rows::Cell;
use crate::model::AxisTarget;
use crate::svg::{DualAxisChart, Mark, Pt, DASHED, DOTTED};
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

    /// The throughput axis's label: the unit, and what the load kind says
    /// of its rate (a forwarding rate's directions).
    pub(super) fn rate_label(&self) -> String {
        match &self.agg.facts.rate_note {
            Some(note) => format!("{}, {}", self.agg.unit, note.axis),
            None => self.agg.unit.to_string(),
        }
    }

    /// The sentence the load kind adds to a throughput caption (a
    /// forwarding rate's directions).
    pub(super) fn direction_sentence(&self) -> &str {
        self.agg
            .facts
            .rate_note
            .as_ref()
            .map_or("", |note| note.caption.as_str())
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
    ///
    /// Each series draws three curves, so more than
    /// [`COMBINED_MAX_SERIES`] series are drawn as small multiples of at
    /// most that many (an N-run page's six series were 18 curves on one
    /// chart), each caption saying so.
    pub(super) fn combined_scaling(&self) -> Vec<Chart> {
        if !self.lines || self.dataset.is_some() || !self.agg.usl_axis {
            return Vec::new();
        }
        let Some(base) = self.baseline_level() else {
            return Vec::new();
        };
        let systems: Vec<(usize, &str)> = self
            .agg
            .systems
            .iter()
            .map(String::as_str)
            .enumerate()
            .collect();
        let chunks: Vec<&[(usize, &str)]> = systems.chunks(COMBINED_MAX_SERIES).collect();
        let n = chunks.len();
        (chunks.iter().enumerate())
            .filter_map(|(k, chunk)| {
                self.combined_chart(base, chunk, (n > 1).then_some((k + 1, n)))
            })
            .collect()
    }

    /// One combined figure of `systems` (index, name); `facet` is this
    /// chart's place among the small multiples (1-based, of how many).
    fn combined_chart(
        &self,
        base: f64,
        systems: &[(usize, &str)],
        facet: Option<(usize, usize)>,
    ) -> Option<Chart> {
        let per = super::seed_panels::per_word(&self.axis);
        let part = facet.map_or(String::new(), |(k, n)| format!(" ({k} of {n})"));
        let mut c = DualAxisChart::new(
            &format!(
                "Throughput, throughput {per} and CPU load × frequency{}{part}",
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
        let whose = BusyShare::of(self.agg.cells_in_group(self.group));
        let mut any_freq = false;
        for &(i, s) in systems {
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
            let busy = |c: &Cell| whose.busy_mhz(c);
            let base_freq = at(base).and_then(busy);
            let freq: Vec<Pt> = cells
                .iter()
                .filter_map(|cell| {
                    let r = busy(cell)? / base_freq.filter(|v| *v > 0.0)?;
                    let mut p = self.point(cell, r, |v| format!("{v:.2}×"));
                    let ghz = busy(cell)? / 1000.0;
                    p.tip = format!("{} ({ghz:.2} busy GHz, {})", p.tip, whose.short());
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
        let freq = any_freq.then_some(whose);
        let first = systems.first().map_or("", |(_, s)| s);
        let caption = self.combined_caption(base, (&per, first), freq, nominal.is_some())
            + &facet.map_or(String::new(), |f| self.facet_sentence(f));
        Some(self.chart(ChartKind::PerClient, c.render(), caption))
    }

    /// What a chart of the small multiples is: ` Chart 1 of 2: the 6
    /// series' 18 curves would cover one another on one chart, so they are
    /// drawn at most 3 series to a chart.`
    fn facet_sentence(&self, (k, n): (usize, usize)) -> String {
        let all = self.agg.systems.len();
        format!(
            " Chart {k} of {n}: the {all} series' {} curves would cover one another on one \
             chart, so they are drawn at most {COMBINED_MAX_SERIES} series to a chart (the \
             throughput chart above has them all).",
            all * 3
        )
    }

    fn combined_caption(
        &self,
        base: f64,
        (per, first): (&str, &str),
        freq: Option<BusyShare>,
        nominal: bool,
    ) -> String {
        format!(
            "Solid (left axis): the {} throughput. Right axis, as multiples of the value at \
             {axis}={b}, where 1.0 sits on {first}'s throughput: dashed, throughput {per} \
             (flat while each added unit brings its full share){}. Where throughput stops \
             following the CPU delivered, it is lost to contention, not to a lack of CPU.{}{}",
            self.agg.headline_word(),
            match freq {
                Some(BusyShare::Server) => {
                    "; dotted, CPU load × frequency of the server (the CPUs its processes \
                     used × the mean clock: the load generator and other processes left out)"
                }
                Some(BusyShare::Machine) => {
                    "; dotted, CPU load × frequency of the whole machine (busy share × clock \
                     summed over CPUs, the load generator and every other process included: \
                     the server's own CPU was not measured, so on a busy host the curve \
                     follows the machine, not the server)"
                }
                None => "; the probe recorded no CPU frequency, so load × frequency is not drawn",
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

/// The most series one combined figure draws (three curves each: 9
/// curves); more are drawn as small multiples.
pub(super) const COMBINED_MAX_SERIES: usize = 3;

/// Whose CPU the combined figure's load × frequency counts: the server's
/// (its CPUs used × the mean clock) wherever the probe followed the
/// server, else the whole machine's busy share × clock, which on a busy
/// host stays at the machine's CPUs whatever the server does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum BusyShare {
    /// The server's CPU utilisation × the mean frequency.
    Server,
    /// The probe's machine-wide `load_x_freq`.
    Machine,
}

impl BusyShare {
    /// `Server` when some cell has the server's CPU and a frequency.
    fn of<'a>(mut cells: impl Iterator<Item = &'a Cell>) -> BusyShare {
        if cells.any(|c| Self::server_mhz(c).is_some()) {
            BusyShare::Server
        } else {
            BusyShare::Machine
        }
    }

    fn server_mhz(c: &Cell) -> Option<f64> {
        Some(c.server.cpu_util? * c.server.freq_mhz?)
    }

    /// Busy MHz: CPUs busy × MHz.
    fn busy_mhz(self, c: &Cell) -> Option<f64> {
        match self {
            BusyShare::Server => Self::server_mhz(c),
            BusyShare::Machine => c.server.load_x_freq,
        }
    }

    /// For a tooltip.
    fn short(self) -> &'static str {
        match self {
            BusyShare::Server => "the server's",
            BusyShare::Machine => "the whole machine's",
        }
    }
}
