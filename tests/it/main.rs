//! The one integration-test binary (as ripgrep does): real servers, the
//! real `scalelab` binary, fixtures under tests/fixtures/.

mod analysis;
mod dns;
mod http_driver;
mod nginx;
mod postgres;
mod probe;
mod report;
mod runner;
mod spec_errors;
mod support;
