//! How a kind's trial facts are stored: flattened into the trial's
//! context under the kind's key, and read back through the reader its
//! `LoadKind::facts` registers.

use super::{StoredFacts, TrialExtras, TrialFacts};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
fn read_as<T: StoredFacts + TrialFacts>(
    v: serde_json::Value,
) -> Result<Box<dyn TrialFacts>, serde_json::Error> {
    Ok(Box::new(serde_json::from_value::<T>(v)?))
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
/// ([`crate::load::KINDS`]' `facts`) gives the facts; other keys are left alone.
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
            let reader = crate::load::KINDS
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
