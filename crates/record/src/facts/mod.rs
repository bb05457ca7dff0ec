//! What a load kind records with each trial beyond the shared measurement
//! (DNS's datagram counts and ramp, forward's search), and the judgements
//! only that kind can make from them: whether the trial describes the
//! client, when its point is not comparable, its notes, its chart marks,
//! its own charts ([`KindChart`]) and what it says of its rate.
//!
//! The shared layers (runner, store, report) hold one [`TrialExtras`] and
//! ask it; only the kind's own module knows its facts' type. A kind
//! declares how its facts are read back from the store with
//! [`FactsReader`] in its `LoadKind::facts`, so a new kind with facts of
//! its own is still its module plus one registry line.

mod kind_chart;
mod stored;

pub use kind_chart::{KindChart, KindChartCell, KindCurve, KindGuide, KindPoint, KindSection};
pub use stored::FactsReader;

use crate::errors::ErrorCounts;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
/// A load kind's answer to a question the shared layers ask of a trial or
/// a cell (one system at one point).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KindRule {
    /// The kind has no rule of its own here: the shared one applies.
    Shared,
    /// The kind decided: `Some(reason)` yes, and why; `None` no.
    Decided(Option<String>),
}

/// What a chart of one group of cells shows, for a kind to add its marks.
pub struct ChartInputs<'a> {
    /// The swept axis on x (`load.frame_size`, `connections`).
    pub axis: &'a str,
    /// The x values of the group's points, ascending, without repeats.
    pub xs: &'a [f64],
    /// The server kind's figures for the chart
    /// ([`crate::server::ServerDescription::chart_figures`]), which the
    /// load kind reads by the name the two agree on
    /// ([`ChartInputs::server_figure`]).
    pub server_figures: &'a [crate::server::ServerFigure],
    /// How the report writes a number in a label (`10`, `2.5`).
    pub number: fn(f64) -> String,
}

impl ChartInputs<'_> {
    /// The server kind's figure called `name`, if it gave one.
    pub fn server_figure(&self, name: &str) -> Option<f64> {
        self.server_figures
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.value)
    }
}

/// What a kind draws on the throughput chart beside the data.
#[derive(Clone, Debug, PartialEq)]
pub enum ChartMark {
    /// A guide curve through `(x, throughput)` points (a line rate).
    Curve {
        /// The curve's points, in x order.
        points: Vec<(f64, f64)>,
        /// Its label.
        label: String,
        /// What the chart's caption says it is (after "grey dotted: ").
        caption: String,
    },
    /// A vertical mark at `x`.
    At {
        /// Where on the x axis.
        x: f64,
        /// Its label.
        label: String,
        /// The sentence the chart's caption adds for it.
        caption: String,
    },
}

/// What a kind says of its rate on the throughput figures, beside the
/// unit the report writes (`frames/s`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateNote {
    /// What follows the unit on the throughput axis, after a comma
    /// (`both directions summed`).
    pub axis: String,
    /// The sentence the throughput captions add, with its leading space
    /// (` Frames/s is one direction, A→B.`).
    pub caption: String,
}

/// How a kind's facts are stored: under `KEY` in a trial's context, as
/// their own serde form. Implementing it gives [`FactsStore`].
pub trait StoredFacts:
    Clone + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The context's key (`datagrams`, `forward`).
    const KEY: &'static str;
    /// What the verdicts' legend says of the kind's own not-comparable
    /// rule, after the shared one's "errors above 0.1% of requests"
    /// (`, SERVFAIL above 1% of a ramp's answers`); `None`: no rule.
    fn legend() -> Option<String> {
        None
    }
}

/// What [`TrialExtras`] needs of any facts to store, copy and compare
/// them; every [`StoredFacts`] type has it.
pub trait FactsStore: std::fmt::Debug + Send + Sync + Any {
    /// The key they are stored under ([`StoredFacts::KEY`]).
    fn key(&self) -> &'static str;
    /// The facts as stored.
    fn to_json(&self) -> serde_json::Value;
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn TrialFacts>;
    /// Its kind's clause in the verdicts' legend ([`StoredFacts::legend`]).
    fn legend(&self) -> Option<String>;
}

impl<T: StoredFacts + TrialFacts> FactsStore for T {
    fn key(&self) -> &'static str {
        T::KEY
    }
    fn to_json(&self) -> serde_json::Value {
        // Plain data types: serialising them to a JSON value cannot fail.
        serde_json::to_value(self).unwrap_or_default()
    }
    fn clone_box(&self) -> Box<dyn TrialFacts> {
        Box::new(self.clone())
    }
    fn legend(&self) -> Option<String> {
        <T as StoredFacts>::legend()
    }
}

/// One kind's facts about one trial: the questions the shared layers ask.
/// Implemented only inside `load/`; each answer is "nothing of my own" by
/// default.
pub trait TrialFacts: FactsStore {
    /// Whether the trial describes the client rather than the server.
    fn client_bound(&self) -> KindRule {
        KindRule::Shared
    }
    /// Whether the cell of `cell` (every successful trial's extras, this
    /// one among them) is not comparable; `errors` and `requests` are
    /// summed over the cell's trials.
    fn not_comparable(
        &self,
        _cell: &[&TrialExtras],
        _errors: &ErrorCounts,
        _requests: u64,
    ) -> KindRule {
        KindRule::Shared
    }
    /// What a reader of the trial must know.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The marks the kind draws on a throughput chart of `chart`.
    fn chart_marks(&self, _chart: &ChartInputs) -> Vec<ChartMark> {
        Vec::new()
    }
    /// The trial's headline throughput when it is not completed requests
    /// over wall time (a ramp's maximum).
    fn throughput(&self) -> Option<f64> {
        None
    }
    /// The kind's own charts of `system`, drawn from `cells` (the
    /// system's cells in one group, in x order, this trial's among them):
    /// typed data the report draws ([`KindChart`]).
    fn charts(&self, _system: &str, _cells: &[KindChartCell]) -> Vec<KindChart> {
        Vec::new()
    }
    /// What the throughput figures say of the kind's rate beside its
    /// unit (a forwarding rate's directions); `None`: nothing.
    fn rate_note(&self) -> Option<RateNote> {
        None
    }
    /// Whether the trial's rate rises over its window by design (a rate
    /// ramp), so a trend there is the measurement, not an unsteady server.
    fn rises_by_design(&self) -> bool {
        false
    }
}
/// The one slot for a kind's trial facts, held by the load result and
/// the stored context; empty for kinds that record none (http, pg, mysql)
/// and for failed trials. Stored flattened into the context under the
/// kind's key, as the slots it replaced were (`datagrams`, `forward`).
#[derive(Default)]
pub struct TrialExtras {
    facts: Option<Box<dyn TrialFacts>>,
    /// What a stored context held beside its shared fields, read back
    /// but not yet handed to the registry's readers
    /// ([`TrialExtras::resolved`]); empty once resolved.
    unread: serde_json::Map<String, serde_json::Value>,
}

impl TrialExtras {
    /// Extras holding `facts`.
    pub fn new(facts: impl TrialFacts) -> TrialExtras {
        TrialExtras {
            facts: Some(Box::new(facts)),
            unread: serde_json::Map::new(),
        }
    }

    /// No kind recorded facts (or they are not yet read,
    /// [`TrialExtras::resolved`]).
    pub fn is_none(&self) -> bool {
        self.facts.is_none()
    }

    /// The facts as the kind's own type, for that kind's module (and its
    /// ad-hoc command).
    pub fn get<T: TrialFacts>(&self) -> Option<&T> {
        let facts: &dyn Any = self.facts.as_deref()?;
        facts.downcast_ref()
    }

    /// The facts as stored, under their key.
    pub fn stored(&self) -> Option<(&'static str, serde_json::Value)> {
        self.facts.as_ref().map(|f| (f.key(), f.to_json()))
    }

    /// Whether the trial describes the client ([`TrialFacts::client_bound`]).
    pub fn client_bound(&self) -> KindRule {
        self.facts
            .as_ref()
            .map_or(KindRule::Shared, |f| f.client_bound())
    }

    /// The first rule of its kind that decides the cell of `cell`
    /// ([`TrialFacts::not_comparable`]); `Shared` when none does.
    pub fn not_comparable(cell: &[&TrialExtras], errors: &ErrorCounts, requests: u64) -> KindRule {
        cell.iter()
            .filter_map(|e| e.facts.as_ref())
            .map(|f| f.not_comparable(cell, errors, requests))
            .find(|r| *r != KindRule::Shared)
            .unwrap_or(KindRule::Shared)
    }

    /// Its kind's clause in the verdicts' legend ([`StoredFacts::legend`]).
    pub fn legend(&self) -> Option<String> {
        self.facts.as_ref().and_then(|f| f.legend())
    }

    /// The legend's clauses of the kinds among `extras`, each once, in the
    /// order first met: what the verdicts' legend adds to the shared
    /// not-comparable rule for the trials it is shown with.
    pub fn legend_clauses<'a>(extras: impl IntoIterator<Item = &'a TrialExtras>) -> String {
        let mut clauses: Vec<String> = Vec::new();
        for clause in extras.into_iter().filter_map(TrialExtras::legend) {
            if !clauses.contains(&clause) {
                clauses.push(clause);
            }
        }
        clauses.concat()
    }

    /// The kind's notes ([`TrialFacts::notes`]).
    pub fn notes(&self) -> Vec<String> {
        self.facts.as_ref().map(|f| f.notes()).unwrap_or_default()
    }

    /// The kind's chart marks ([`TrialFacts::chart_marks`]).
    pub fn chart_marks(&self, chart: &ChartInputs) -> Vec<ChartMark> {
        self.facts
            .as_ref()
            .map(|f| f.chart_marks(chart))
            .unwrap_or_default()
    }

    /// The kind's own headline throughput ([`TrialFacts::throughput`]).
    pub fn throughput(&self) -> Option<f64> {
        self.facts.as_ref()?.throughput()
    }

    /// The kind's own charts of `system` ([`TrialFacts::charts`]), asked
    /// of the first of `cells` whose facts are recorded; none when no
    /// cell's are.
    pub fn charts(system: &str, cells: &[KindChartCell]) -> Vec<KindChart> {
        cells
            .iter()
            .find_map(|c| c.extras.facts.as_ref())
            .map(|f| f.charts(system, cells))
            .unwrap_or_default()
    }

    /// What the kind says of its rate ([`TrialFacts::rate_note`]).
    pub fn rate_note(&self) -> Option<RateNote> {
        self.facts.as_ref()?.rate_note()
    }

    /// Whether the rate rises by design ([`TrialFacts::rises_by_design`]).
    pub fn rises_by_design(&self) -> bool {
        self.facts.as_ref().is_some_and(|f| f.rises_by_design())
    }
}

impl Clone for TrialExtras {
    fn clone(&self) -> Self {
        TrialExtras {
            facts: self.facts.as_ref().map(|f| f.clone_box()),
            unread: self.unread.clone(),
        }
    }
}

impl PartialEq for TrialExtras {
    fn eq(&self, other: &Self) -> bool {
        self.stored() == other.stored() && self.unread == other.unread
    }
}

impl std::fmt::Debug for TrialExtras {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.facts {
            Some(facts) => facts.fmt(f),
            None if self.unread.is_empty() => f.write_str("TrialExtras(None)"),
            None => write!(f, "TrialExtras(unread {:?})", self.unread.keys()),
        }
    }
}
