//! Reports: terminal, JSON, CSV, SVG and HTML, one file per format.
