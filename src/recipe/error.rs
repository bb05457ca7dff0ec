//! Spec errors that name the file, the line, the field and the fix.

use std::fmt;
use std::path::PathBuf;

/// An experiment file error: where it is and what to write instead.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The experiment file.
    pub file: PathBuf,
    /// 1-based line, when the field could be located.
    pub line: Option<usize>,
    /// Dotted field path, e.g. `sweep.connections` or `system[2].label`.
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// What to write instead.
    pub fix: Option<String>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)?;
        } else {
            write!(f, ": field `{}`: {}", self.field, self.message)?;
        }
        if let Some(fix) = &self.fix {
            write!(f, "\n  fix: {fix}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}
