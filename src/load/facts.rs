//! What a load kind records with each trial beyond the shared measurement
//! (DNS's datagram counts and ramp, forward's search), and the judgements
//! only that kind can make from them: whether the trial describes the
//! client, when its point is not comparable, its notes and its chart marks.
//!
//! The shared layers (runner, store, report) hold one [`TrialExtras`] and
//! ask it; only the kind's own module knows its facts' type. A kind
//! declares how its facts are read back from the store with
//! [`FactsReader`] in its `LoadKind::facts`, so a new kind with facts of
//! its own is still its module plus one registry line.

use super::errors::ErrorCounts;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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
    /// The link speed the server forwards over, in Gbit/s, when its kind
    /// records one (`target::ServerFacts::link_gbit`).
    pub link_gbit: Option<f64>,
    /// How the report writes a number in a label (`10`, `2.5`).
    pub number: fn(f64) -> String,
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
    /// A rate ramp's second-by-second view, for the ramp chart.
    fn ramp(&self) -> Option<&Ramp> {
        None
    }
    /// Whether the rate sums two directions (`Some(false)`: one direction);
    /// `None`: the kind's rate has no direction.
    fn bidirectional(&self) -> Option<bool> {
        None
    }
}

/// How a kind's facts are read back from a stored context: the key they
/// are stored under and the reader of their JSON (`LoadKind::facts`).
#[derive(Clone, Copy)]
pub struct FactsReader {
    /// The context's key (`datagrams`, `forward`).
    pub key: &'static str,
    /// Reads the value stored under `key`.
    pub read: fn(serde_json::Value) -> Result<Box<dyn TrialFacts>, serde_json::Error>,
    /// The kind's clause in the verdicts' legend ([`StoredFacts::legend`]).
    pub legend: fn() -> Option<String>,
}

impl FactsReader {
    /// The reader of facts of type `T`.
    pub const fn of<T: StoredFacts + TrialFacts>() -> FactsReader {
        FactsReader {
            key: T::KEY,
            read: read_as::<T>,
            legend: T::legend,
        }
    }
}

/// Every registered kind's clause in the verdicts' legend, in registry
/// order ([`StoredFacts::legend`]).
pub fn legend_clauses() -> String {
    super::KINDS
        .iter()
        .filter_map(|k| k.facts)
        .filter_map(|r| (r.legend)())
        .collect()
}

fn read_as<T: StoredFacts + TrialFacts>(
    v: serde_json::Value,
) -> Result<Box<dyn TrialFacts>, serde_json::Error> {
    Ok(Box::new(serde_json::from_value::<T>(v)?))
}

/// The one slot for a kind's trial facts, held by the load result and
/// the stored context; empty for kinds that record none (http, pg, mysql)
/// and for failed trials. Stored flattened into the context under the
/// kind's key, as the slots it replaced were (`datagrams`, `forward`).
#[derive(Default)]
pub struct TrialExtras(Option<Box<dyn TrialFacts>>);

impl TrialExtras {
    /// Extras holding `facts`.
    pub fn new(facts: impl TrialFacts) -> TrialExtras {
        TrialExtras(Some(Box::new(facts)))
    }

    /// No kind recorded facts.
    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }

    /// The facts as the kind's own type, for that kind's module (and its
    /// ad-hoc command).
    pub fn get<T: TrialFacts>(&self) -> Option<&T> {
        let facts: &dyn Any = self.0.as_deref()?;
        facts.downcast_ref()
    }

    /// The facts as stored, under their key.
    pub fn stored(&self) -> Option<(&'static str, serde_json::Value)> {
        self.0.as_ref().map(|f| (f.key(), f.to_json()))
    }

    /// Whether the trial describes the client ([`TrialFacts::client_bound`]).
    pub fn client_bound(&self) -> KindRule {
        self.0
            .as_ref()
            .map_or(KindRule::Shared, |f| f.client_bound())
    }

    /// The first rule of its kind that decides the cell of `cell`
    /// ([`TrialFacts::not_comparable`]); `Shared` when none does.
    pub fn not_comparable(cell: &[&TrialExtras], errors: &ErrorCounts, requests: u64) -> KindRule {
        cell.iter()
            .filter_map(|e| e.0.as_ref())
            .map(|f| f.not_comparable(cell, errors, requests))
            .find(|r| *r != KindRule::Shared)
            .unwrap_or(KindRule::Shared)
    }

    /// The kind's notes ([`TrialFacts::notes`]).
    pub fn notes(&self) -> Vec<String> {
        self.0.as_ref().map(|f| f.notes()).unwrap_or_default()
    }

    /// The kind's chart marks ([`TrialFacts::chart_marks`]).
    pub fn chart_marks(&self, chart: &ChartInputs) -> Vec<ChartMark> {
        self.0
            .as_ref()
            .map(|f| f.chart_marks(chart))
            .unwrap_or_default()
    }

    /// The kind's own headline throughput ([`TrialFacts::throughput`]).
    pub fn throughput(&self) -> Option<f64> {
        self.0.as_ref()?.throughput()
    }

    /// A rate ramp's view ([`TrialFacts::ramp`]).
    pub fn ramp(&self) -> Option<&Ramp> {
        self.0.as_ref()?.ramp()
    }

    /// Whether the rate sums two directions ([`TrialFacts::bidirectional`]).
    pub fn bidirectional(&self) -> Option<bool> {
        self.0.as_ref()?.bidirectional()
    }
}

impl Clone for TrialExtras {
    fn clone(&self) -> Self {
        TrialExtras(self.0.as_ref().map(|f| f.clone_box()))
    }
}

impl PartialEq for TrialExtras {
    fn eq(&self, other: &Self) -> bool {
        self.stored() == other.stored()
    }
}

impl std::fmt::Debug for TrialExtras {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(facts) => facts.fmt(f),
            None => f.write_str("TrialExtras(None)"),
        }
    }
}

/// Written as a map of at most one entry, `{key: facts}`, which the
/// context flattens into itself.
impl Serialize for TrialExtras {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let stored = self.stored();
        let mut map = s.serialize_map(Some(usize::from(stored.is_some())))?;
        if let Some((key, value)) = stored {
            map.serialize_entry(key, &value)?;
        }
        map.end()
    }
}

/// Read from the keys of a map: the first key a registered kind reads
/// ([`super::KINDS`]' `facts`) gives the facts; other keys are left alone.
/// Facts of another shape under a kind's key are an error (the context
/// then leaves that field out, `TrialContext::from_stored`).
impl<'de> Deserialize<'de> for TrialExtras {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ExtrasVisitor)
    }
}

struct ExtrasVisitor;

impl<'de> Visitor<'de> for ExtrasVisitor {
    type Value = TrialExtras;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map holding a load kind's trial facts")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TrialExtras, A::Error> {
        let mut found = TrialExtras::default();
        while let Some(key) = map.next_key::<String>()? {
            let reader = super::KINDS
                .iter()
                .filter_map(|k| k.facts)
                .find(|r| r.key == key);
            match reader.filter(|_| found.is_none()) {
                Some(reader) => {
                    let value: serde_json::Value = map.next_value()?;
                    let facts = (reader.read)(value).map_err(serde::de::Error::custom)?;
                    found = TrialExtras(Some(facts));
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// A linear rate ramp, second by second, summarised as resperf does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ramp {
    /// Every second of the ramp, in order.
    pub seconds: Vec<RampSecond>,
    /// The highest answer rate of any second (resperf "maximum throughput").
    pub max_throughput: f64,
    /// Share of the queries sent in that second that were lost, 0 to 1.
    pub loss_at_max: f64,
    /// The second (from the ramp's start) of `max_throughput`.
    pub max_at_second: u32,
    /// The first second whose offered rate reached half the maximum
    /// throughput: latency at 50% load.
    pub at_half_max: Option<RampSecond>,
    /// Queries lost in seconds whose offered rate exceeded the maximum
    /// throughput: the ramp drove the server past what it can answer on
    /// purpose. These, like every loss of a ramp, are the measurement, not
    /// errors: all of a ramp's losses are left out of the trial's error
    /// counts (and so of the verdicts' "not comparable" test);
    /// `Datagrams::lost` still counts them.
    #[serde(default)]
    pub lost_past_max: u64,
    /// The ramp lost nothing and the generator kept its schedule: it ended
    /// below the server's limit, so `max_throughput` is only the ramp's
    /// last rate, not the server's maximum (`load::dns::ramp::below_limit`).
    #[serde(default)]
    pub below_limit: bool,
    /// What the reader of this ramp must know: that it stopped early, or
    /// that the generator fell behind (or dropped answers) past the
    /// maximum, which therefore stands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One second of a ramp: offered and answered rates, losses among the
/// queries sent that second, and their latency.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RampSecond {
    /// Seconds since the ramp started.
    pub second: u32,
    /// Queries sent in this second.
    pub offered: u64,
    /// Answers to them.
    pub answered: u64,
    /// Queries of this second that got no answer within the timeout.
    pub lost: u64,
    /// Median latency of this second's answers, in microseconds.
    pub p50_us: u64,
    /// 99th-percentile latency of this second's answers, in microseconds.
    pub p99_us: u64,
}

/// Every `.rs` file under `dir`, for the tests that read the source.
#[cfg(test)]
pub(crate) fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code of a Rust file without its comments and string literals
    /// (plain and raw).
    fn code_of(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            let in_word = out.ends_with(|p: char| p.is_alphanumeric() || p == '_');
            if let Some(quote) = ["'\"'", "'\\\"'"].iter().find(|q| rest.starts_with(*q)) {
                rest = &rest[quote.len()..];
            } else if rest.starts_with("//") {
                rest = rest.find('\n').map_or("", |i| &rest[i..]);
            } else if let Some(hashes) = raw_string_start(rest).filter(|_| !in_word) {
                let body = &rest[hashes.len() + 2..];
                let end = format!("\"{hashes}");
                rest = body.find(&end).map_or("", |i| &body[i + end.len()..]);
                out.push_str("\"\"");
            } else if c == '"' {
                let mut escaped = false;
                let end = rest[1..].char_indices().find(|(_, ch)| {
                    let closes = *ch == '"' && !escaped;
                    escaped = *ch == '\\' && !escaped;
                    closes
                });
                rest = end.map_or("", |(i, _)| &rest[i + 2..]);
                out.push_str("\"\"");
            } else {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
        out
    }

    /// The `#`s of a raw string starting `rest` (`r"`, `r#"`).
    fn raw_string_start(rest: &str) -> Option<&str> {
        let after = rest.strip_prefix('r')?;
        let hashes = &after[..after.len() - after.trim_start_matches('#').len()];
        after[hashes.len()..].starts_with('"').then_some(hashes)
    }

    fn words(code: &str) -> impl Iterator<Item = &str> {
        code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
    }

    #[test]
    fn no_file_outside_the_kinds_names_a_load_kinds_facts() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let facts = [
            "datagrams",
            "Datagrams",
            "ForwardReport",
            "FrameSize",
            "fell_behind",
        ];
        let mut naming = Vec::new();
        for path in rust_files(&src) {
            let rel = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // The kinds themselves, and a kind's own ad-hoc command
            // (`cli/load_<kind>.rs`, CONTRIBUTING's "Add a load kind" step 7).
            let kinds = rel.starts_with("load/") || rel.starts_with("target/");
            if kinds || rel.starts_with("cli/load_") {
                continue;
            }
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            let found = words(&code).find(|w| facts.contains(w)).map(str::to_string);
            naming.extend(found.map(|word| format!("{rel}: {word}")));
        }
        assert!(
            naming.is_empty(),
            "a load kind's facts named outside it: {naming:?}"
        );
        let code = code_of("a.datagrams // fell_behind\n\"Frame\\\"Size\" r#\"x\"y\"#;");
        assert_eq!(code, "a.datagrams \n\"\" \"\";");
        assert!(words(&code).any(|w| facts.contains(&w)));
    }
}
