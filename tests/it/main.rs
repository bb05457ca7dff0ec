//! The one integration-test binary (as ripgrep does): real servers, the
//! real `scalelab` binary, fixtures under tests/fixtures/.

mod analysis;
mod nginx;
mod postgres;
mod runner;
mod spec_errors;
mod support;
