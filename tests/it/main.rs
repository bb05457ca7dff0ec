//! The one integration-test binary (as ripgrep does): real servers, the
//! real `scalelab` binary, fixtures under tests/fixtures/.

mod analysis;
mod exit_codes;
mod http_driver;
mod nginx;
mod postgres;
mod probe;
mod report;
mod resume;
mod runner;
mod spec_errors;
mod support;
