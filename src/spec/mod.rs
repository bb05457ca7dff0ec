//! The experiment file: parsing, validation, sweep expansion.
