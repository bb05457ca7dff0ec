//! The one integration-test binary (as ripgrep does): real servers, the
//! real `scalelab` binary, fixtures under tests/fixtures/.

mod agentless;
mod agentless_db;
mod agentless_stalls;
mod analysis;
mod bisect;
mod dns;
mod docs;
mod doctor;
mod energy;
mod exit_codes;
mod external_listener;
mod floor;
mod history;
mod html_valid;
mod http_driver;
mod installed;
mod layers;
mod lifecycle;
mod limiter;
mod limiter_observers;
mod load_policy;
mod multi_report;
mod multihost;
mod multihost_systems;
mod mysql;
mod nginx;
mod nic_fingerprint;
mod one_engine;
mod one_truth;
mod order;
mod postgres;
mod probe;
mod profile;
mod report;
mod resume;
mod router;
mod runner;
mod seed_figures;
mod spec_errors;
mod steady;
mod store_compat;
mod store_location;
mod support;
mod tls;
mod tune;
mod window;
mod xdp;

/// The waits and gathered replies of a coalesced run, from its note
/// ("coalesced: W waits gathered R replies ..."); fails the test without it.
pub fn gathered(notes: &[String]) -> (u64, u64) {
    let note = notes
        .iter()
        .find_map(|n| n.strip_prefix("coalesced: "))
        .unwrap_or_else(|| panic!("no coalescing note in {notes:?}"));
    let words: Vec<&str> = note.split_whitespace().collect();
    match (words.first(), words.get(3)) {
        (Some(w), Some(r)) => (w.parse().unwrap(), r.parse().unwrap()),
        _ => panic!("unreadable coalescing note: {note}"),
    }
}
