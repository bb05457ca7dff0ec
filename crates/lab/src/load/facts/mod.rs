//! The load kinds' trial facts as the registry knows them. The facts'
//! types and traits are the record's (`scalelab_record::facts`,
//! re-exported here, so a kind's code reads as before); what only the
//! registry can say is here: which reader reads which stored key
//! ([`readers`], handed to `TrialExtras::resolved` by the store).

#[cfg(test)]
mod guard;

#[cfg(test)]
pub(crate) use guard::rust_files;
pub use scalelab_record::facts::*;

/// The registered kinds' facts readers, in registry order: what the store
/// hands `TrialExtras::resolved` to read a stored context back.
pub fn readers() -> Vec<FactsReader> {
    super::KINDS.iter().filter_map(|k| k.facts).collect()
}
