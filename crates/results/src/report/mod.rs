//! The renderers: terminal, JSON, CSV, SVG and HTML, one file per format,
//! and the text and pages of `check`, `history` and N runs.
//!
//! Every format draws what [`crate::judging`] decided and changes none of
//! it, as hyperfine's exporters format what its `benchmark/` computed: a
//! run's `Aggregate` ([`crate::judging::analyse::aggregate`]), a `Check`, a
//! `History` or a `Merged` set of runs. What each chart and column means,
//! and the export field names, are in `docs/report.md`.
//!
//! Entry points: [`terminal::render`], [`html::render`], [`json::export`]
//! and [`csv::export`].

pub(crate) mod charts;
pub mod check;
pub mod csv;
mod csv_schema;
pub(crate) mod energy;
#[cfg(test)]
mod fake_kind_tests;
pub(crate) mod flame_svg;
pub(crate) mod flames;
pub mod history;
pub(crate) mod hosts;
pub mod html;
mod html_tables;
pub mod json;
pub(crate) mod limiter_view;
pub mod multi;
mod offcpu_flames;
mod steady_view;
pub(crate) mod svg;
pub mod terminal;
mod text_table;
