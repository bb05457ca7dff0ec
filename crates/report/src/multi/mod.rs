//! N runs drawn: the text `compare` prints, the HTML page of N runs,
//! and the drift between runs, from what [`crate::judging::multi`] merged
//! and judged.

pub mod drift;
pub mod page;
mod relative;
pub mod text;

#[cfg(test)]
mod tests;
