//! The one integration-test binary (as ripgrep does): real servers, the
//! real `scalelab` binary, fixtures under tests/fixtures/.

mod analysis;
mod dns;
mod doctor;
mod exit_codes;
mod html_valid;
mod http_driver;
mod lifecycle;
mod multihost;
mod mysql;
mod nginx;
mod postgres;
mod probe;
mod profile;
mod report;
mod resume;
mod router;
mod runner;
mod spec_errors;
mod store_compat;
mod support;
