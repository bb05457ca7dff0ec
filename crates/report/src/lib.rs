//! scalelab-report: the renderers. Terminal tables, JSON, CSV, SVG and
//! HTML, one file per format, and the text and pages of `check`,
//! `history` and N runs.
//!
//! Every format draws what the judging layer (`scalelab_results::judging`)
//! decided and changes none of it, as hyperfine's exporters format what
//! its `benchmark/` computed: a run's `Aggregate`
//! (`judging::analyse::aggregate`), a `Check`, a `History` or a `Merged`
//! set of runs. The judging layer is another crate, below this one, so the
//! compiler refuses an import of a renderer from it. What each chart and
//! column means, and the export field names, are in `docs/report.md`.
//!
//! Entry points: [`terminal::render`], [`html::render`], [`json::export`]
//! and [`csv::export`].

#![forbid(unsafe_code)]

use scalelab_core::{analysis, model, sys, units};
use scalelab_record as record;
use scalelab_results::{judging, store};

#[cfg(test)]
use scalelab_core::{placement, shutdown};
#[cfg(test)]
use scalelab_lab::{load, probe, server};
#[cfg(test)]
use scalelab_wire as wire;

#[cfg(test)]
mod caveat_tests;
pub(crate) mod charts;
pub mod check;
pub mod csv;
mod csv_schema;
pub(crate) mod energy;
#[cfg(test)]
mod fake_kind_tests;
pub(crate) mod flame_svg;
pub(crate) mod flames;
pub use flames::{files_across_runs, FlameFile};
pub mod history;
pub(crate) mod hosts;
pub mod html;
mod html_tables;
pub mod json;
pub(crate) mod limiter_view;
pub mod multi;
mod offcpu_flames;
pub mod plan;
mod steady_view;
pub(crate) mod svg;
pub mod terminal;
mod text_table;
