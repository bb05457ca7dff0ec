//! How a kind's trial facts are stored: flattened into the trial's
//! context under the kind's key, and read back through the reader its
//! `LoadKind::facts` registers.

use super::{StoredFacts, TrialExtras, TrialFacts};
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
}

impl std::fmt::Debug for FactsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FactsReader")
            .field("key", &self.key)
            .finish()
    }
}

impl FactsReader {
    /// The reader of facts of type `T`.
    pub const fn of<T: StoredFacts + TrialFacts>() -> FactsReader {
        FactsReader {
            key: T::KEY,
            read: read_as::<T>,
        }
    }
}
fn read_as<T: StoredFacts + TrialFacts>(
    v: serde_json::Value,
) -> Result<Box<dyn TrialFacts>, serde_json::Error> {
    Ok(Box::new(serde_json::from_value::<T>(v)?))
}
/// Written as a map of at most one entry, `{key: facts}`, which the
/// context flattens into itself; extras not yet resolved are written back
/// as they were read, so nothing stored is lost.
impl Serialize for TrialExtras {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some((key, value)) = self.stored() else {
            return self.unread.serialize(s);
        };
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(key, &value)?;
        map.end()
    }
}

/// Read as the map it is stored in (the context's other keys, when it is
/// flattened into one), unread: which key holds which kind's facts is the
/// registry's to say, handed to [`TrialExtras::resolved`].
impl<'de> Deserialize<'de> for TrialExtras {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let unread = serde_json::Map::deserialize(d)?;
        Ok(TrialExtras {
            facts: None,
            unread,
        })
    }
}

impl TrialExtras {
    /// The extras read back with `readers`, the registry's (the load
    /// kinds' `facts`): the first key a reader reads gives the facts, and
    /// other keys are dropped. Facts of another shape under a kind's key
    /// are an error (the context then leaves them out,
    /// `TrialContext::from_stored`). Extras already read are kept.
    pub fn resolved(self, readers: &[FactsReader]) -> Result<TrialExtras, serde_json::Error> {
        if self.facts.is_some() {
            return Ok(self);
        }
        for (key, value) in self.unread {
            if let Some(reader) = readers.iter().find(|r| r.key == key) {
                return Ok(TrialExtras {
                    facts: Some((reader.read)(value)?),
                    unread: serde_json::Map::new(),
                });
            }
        }
        Ok(TrialExtras::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind's facts, as a kind's own module declares them.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Frames {
        sent: u64,
    }

    impl StoredFacts for Frames {
        const KEY: &'static str = "frames";
    }

    impl TrialFacts for Frames {}

    fn read(json: serde_json::Value, readers: &[FactsReader]) -> serde_json::Result<TrialExtras> {
        serde_json::from_value::<TrialExtras>(json)?.resolved(readers)
    }

    #[test]
    fn facts_are_read_only_by_the_readers_handed_in() {
        let stored = serde_json::json!({"other": 1, "frames": {"sent": 7}});
        let readers = [FactsReader::of::<Frames>()];
        let read_back = read(stored.clone(), &readers).unwrap();
        assert_eq!(read_back.get::<Frames>(), Some(&Frames { sent: 7 }));
        // Written as its kind's one entry: the other key is dropped.
        let written = serde_json::to_value(&read_back).unwrap();
        assert_eq!(written, serde_json::json!({"frames": {"sent": 7}}));
        // Without the reader no facts are made up, and an unread value is
        // written back as it was read, so nothing stored is lost.
        let unread: TrialExtras = serde_json::from_value(stored.clone()).unwrap();
        assert!(unread.is_none());
        assert_eq!(serde_json::to_value(&unread).unwrap(), stored);
        assert!(read(stored, &[]).unwrap().is_none());
        // Facts of another shape under the kind's key are an error.
        let bad = serde_json::json!({"frames": {"sent": "many"}});
        assert!(read(bad, &readers).is_err());
    }
}
