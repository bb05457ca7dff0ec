//! Reports: terminal, JSON, CSV, SVG and HTML, one file per format.
//!
//! Every format renders the same `Aggregate`, built once per run by
//! [`analyse::aggregate`]: per-(system, point) summaries, comparisons against
//! the baseline, USL fits, curve shapes and the ranking. What each chart and
//! column means, and the export field names, are in `docs/report.md`.
//!
//! Entry points: [`terminal::render`], [`html::render`], [`json::export`]
//! and [`csv::export`].

pub mod analyse;
pub(crate) mod caveat;
pub(crate) mod charts;
pub mod check;
pub mod comparable;
pub(crate) mod context_facts;
pub mod csv;
mod csv_schema;
pub mod energy;
pub mod energy_cell;
#[cfg(test)]
mod fake_kind_tests;
pub(crate) mod figures;
pub(crate) mod fits;
pub(crate) mod flame_svg;
pub(crate) mod flames;
pub mod format;
pub mod history;
pub(crate) mod hosts;
pub mod html;
mod html_tables;
pub mod json;
pub mod judge;
pub(crate) mod layout;
pub(crate) mod limiter;
pub mod multi;
mod offcpu_flames;
pub mod order_effect;
pub(crate) mod probe_view;
pub(crate) mod rows;
pub mod runs;
#[cfg(test)]
mod same_mark_tests;
mod steady_view;
pub(crate) mod svg;
pub mod terminal;
#[cfg(test)]
pub(crate) mod test_support;
mod text_table;
pub mod verdict;
