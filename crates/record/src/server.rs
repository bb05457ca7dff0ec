//! What a server kind records about itself with every trial beyond its
//! version and config: the data it was loaded with ([`DatasetInfo`]) and
//! its own facts ([`ServerFacts`], the lab's `Server::describe`), held as a
//! trait object the shared layers ask, as [`crate::facts::TrialExtras`]
//! holds a load kind's. Stored as the context's `server_settings` in the
//! shape the kinds always wrote (the facts' own JSON, with no key), and
//! read back through the readers the store is handed
//! ([`ServerFacts::resolved`]); a shape no reader takes is kept and shown
//! as it was, asked nothing.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::any::Any;

/// Facts about the data a server was loaded with (recorded with the trial).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    /// What was loaded, for people: `pgbench scale 4`.
    pub description: String,
    /// Its size on the server, in bytes.
    pub bytes: u64,
}

/// One server kind's facts about itself: the questions the shared layers
/// ask, each "nothing of my own" by default. Implemented only inside the
/// lab's `server/`.
pub trait ServerDescription: std::fmt::Debug + Send + Sync + Any {
    /// The facts as stored.
    fn to_json(&self) -> serde_json::Value;
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn ServerDescription>;
    /// Figures of the server's own that a load kind's chart marks draw
    /// against (a router's link speed), each under a name the two kinds
    /// agree on; the store, the judging layer and the report carry them
    /// and read none. Empty by default.
    fn chart_figures(&self) -> Vec<ServerFigure> {
        Vec::new()
    }
}

/// One figure a server kind gives a load kind's chart
/// ([`ServerDescription::chart_figures`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerFigure {
    /// The name the server kind and the load kind agree on (the router
    /// lab's is `model::topology::LINK_GBIT`).
    pub name: &'static str,
    /// Its value, in the unit the name says.
    pub value: f64,
}

/// A server kind's facts, as one trial's context holds them.
#[derive(Debug)]
pub struct ServerFacts {
    described: Option<Box<dyn ServerDescription>>,
    /// The facts as stored (the JSON of `described`, or a shape no reader
    /// took).
    stored: serde_json::Value,
}

impl ServerFacts {
    /// Facts holding `described`.
    pub fn new(described: impl ServerDescription) -> ServerFacts {
        ServerFacts {
            stored: described.to_json(),
            described: Some(Box::new(described)),
        }
    }

    /// The facts as the kind's own type, for that kind's module.
    pub fn get<T: ServerDescription>(&self) -> Option<&T> {
        let facts: &dyn Any = self.described.as_deref()?;
        facts.downcast_ref()
    }

    /// Whether a reader took the stored shape (or the facts were made
    /// here); `false`: kept as it was, asked nothing.
    pub fn is_read(&self) -> bool {
        self.described.is_some()
    }

    /// The figures the kind gives a chart
    /// ([`ServerDescription::chart_figures`]); none when no reader took
    /// the stored shape.
    pub fn chart_figures(&self) -> Vec<ServerFigure> {
        self.described
            .as_ref()
            .map_or_else(Vec::new, |d| d.chart_figures())
    }

    /// The facts read back by the first of `readers` that takes their
    /// stored shape; unchanged when none does (or they are read already).
    pub fn resolved(self, readers: &[ServerFactsReader]) -> ServerFacts {
        if self.described.is_some() {
            return self;
        }
        let described = readers.iter().find_map(|r| (r.read)(&self.stored));
        ServerFacts { described, ..self }
    }
}

/// Reads one kind's stored facts back: `None` when the JSON is not its
/// shape. A server kind's registry entry holds it.
#[derive(Clone, Copy)]
pub struct ServerFactsReader {
    /// Reads the stored JSON as the kind's facts, if it is their shape.
    pub read: fn(&serde_json::Value) -> Option<Box<dyn ServerDescription>>,
}

impl ServerFactsReader {
    /// The reader of facts of type `T`.
    pub const fn of<T: ServerDescription + DeserializeOwned>() -> ServerFactsReader {
        ServerFactsReader { read: read_as::<T> }
    }
}

impl std::fmt::Debug for ServerFactsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerFactsReader")
    }
}

fn read_as<T: ServerDescription + DeserializeOwned>(
    v: &serde_json::Value,
) -> Option<Box<dyn ServerDescription>> {
    let facts: T = serde_json::from_value(v.clone()).ok()?;
    Some(Box::new(facts))
}

impl Clone for ServerFacts {
    fn clone(&self) -> ServerFacts {
        ServerFacts {
            described: self.described.as_ref().map(|d| d.clone_box()),
            stored: self.stored.clone(),
        }
    }
}

/// Equal when stored the same.
impl PartialEq for ServerFacts {
    fn eq(&self, other: &ServerFacts) -> bool {
        self.stored == other.stored
    }
}

impl Serialize for ServerFacts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.stored.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ServerFacts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ServerFacts, D::Error> {
        Ok(ServerFacts {
            described: None,
            stored: serde_json::Value::deserialize(d)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind's facts, as a kind's own module declares them.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Link {
        gbit: Option<f64>,
    }

    impl ServerDescription for Link {
        fn to_json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap()
        }
        fn clone_box(&self) -> Box<dyn ServerDescription> {
            Box::new(self.clone())
        }
        fn chart_figures(&self) -> Vec<ServerFigure> {
            self.gbit
                .map(|value| ServerFigure {
                    name: "gbit",
                    value,
                })
                .into_iter()
                .collect()
        }
    }

    const READERS: [ServerFactsReader; 1] = [ServerFactsReader::of::<Link>()];

    #[test]
    fn stored_facts_are_asked_only_once_a_reader_took_them() {
        let made = ServerFacts::new(Link { gbit: Some(10.0) });
        let text = serde_json::to_string(&made).unwrap();
        assert_eq!(text, r#"{"gbit":10.0}"#, "the facts' own JSON, no key");
        let back: ServerFacts = serde_json::from_str(&text).unwrap();
        assert_eq!((back.is_read(), back.chart_figures()), (false, vec![]));
        let back = back.resolved(&READERS);
        let gbit = ServerFigure {
            name: "gbit",
            value: 10.0,
        };
        assert_eq!(back.chart_figures(), [gbit]);
        assert_eq!(back.get::<Link>(), Some(&Link { gbit: Some(10.0) }));
        assert_eq!(back, made);
    }

    #[test]
    fn a_shape_no_reader_takes_is_kept_as_it_was() {
        let other = r#"{"gbit":10.0,"retired_setting":true}"#;
        let back: ServerFacts = serde_json::from_str(other).unwrap();
        let back = back.resolved(&READERS);
        assert!(!back.is_read());
        assert_eq!(back.chart_figures(), [], "nothing is read from it");
        assert_eq!(serde_json::to_string(&back.clone()).unwrap(), other);
    }
}
