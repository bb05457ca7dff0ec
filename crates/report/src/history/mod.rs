//! A recipe's history drawn: the terminal's text and the HTML page of
//! [`crate::judging::history::History`].

mod across;
pub mod curves;
pub mod page;
pub mod text;

#[cfg(test)]
mod tests;
