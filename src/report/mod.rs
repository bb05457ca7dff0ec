//! Reports: terminal, JSON, CSV, SVG and HTML, one file per format.
//!
//! Every format renders the same [`rows::Aggregate`], built once per run by
//! [`rows::aggregate`]: per-(system, point) summaries, comparisons against
//! the baseline, USL fits, curve shapes and the ranking. What each chart and
//! column means, and the export field names, are in `docs/report.md`.

pub mod fits;
pub mod format;
pub mod layout;
pub mod probe_view;
pub mod rows;
pub mod svg;
