//! What the store and the report are told of the kinds: the readers of
//! their stored facts, each load kind's rate unit and each server kind's
//! parallelism settings. The crate that holds the registries builds it
//! (the lab's `catalog()`) and hands it to the store when it opens one, so
//! the store and the report never look a kind up in a registry of their
//! own, and a new kind is read back by its registry lines alone.

use crate::facts::FactsReader;
use crate::server::ServerFactsReader;
use crate::units::RateUnit;

/// The kinds, as the layers above the lab see them.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// The load kinds' facts readers, in registry order.
    pub facts: Vec<FactsReader>,
    /// The server kinds' facts readers, in registry order.
    pub servers: Vec<ServerFactsReader>,
    /// Each load kind's name and the unit its rate counts.
    pub units: Vec<(&'static str, RateUnit)>,
    /// Each server kind's name and the settings that count its parallel
    /// workers.
    pub parallelism: Vec<(&'static str, &'static [&'static str])>,
}

impl Catalog {
    /// The unit load kind `name` declares; `None` for a name no kind has.
    pub fn rate_unit_of(&self, load_kind: &str) -> Option<RateUnit> {
        self.units
            .iter()
            .find_map(|(k, u)| (*k == load_kind).then_some(*u))
    }

    /// The settings server kind `name` counts parallel workers by; `None`
    /// for a name no kind has.
    pub fn parallelism_of(&self, server_kind: &str) -> Option<&'static [&'static str]> {
        self.parallelism
            .iter()
            .find_map(|(k, p)| (*k == server_kind).then_some(*p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_found_by_its_name_and_no_other() {
        let c = Catalog {
            units: vec![("pg", RateUnit::Transactions)],
            parallelism: vec![("nginx", &["worker_processes"])],
            ..Catalog::default()
        };
        assert_eq!(c.rate_unit_of("pg"), Some(RateUnit::Transactions));
        assert_eq!(c.rate_unit_of("carrier-pigeon"), None);
        assert_eq!(c.parallelism_of("nginx"), Some(&["worker_processes"][..]));
        assert_eq!(c.parallelism_of("pg"), None);
    }
}
