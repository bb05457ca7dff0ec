//! Maps a dotted field path back to its line in the TOML text, so
//! validation errors found after parsing still point at the right line.

use super::SpecError;
use std::path::Path;
use toml_edit::{ImDocument, Item};

/// A parsed document that can answer "which line is this field on?".
pub struct Locator {
    doc: Option<ImDocument<String>>,
    text: String,
}

impl Locator {
    /// Indexes `text` (the experiment file) for line lookups.
    pub fn new(text: &str) -> Self {
        Locator {
            doc: ImDocument::parse(text.to_string()).ok(),
            text: text.to_string(),
        }
    }

    /// 1-based line of the byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    /// The line of `path` (segments like `["system", "1", "label"]`; numeric
    /// segments index arrays of tables or arrays). Falls back to the nearest
    /// ancestor that has a position.
    pub fn line(&self, path: &[&str]) -> Option<usize> {
        let doc = self.doc.as_ref()?;
        let mut item: &Item = doc.as_item();
        let mut best = None;
        for seg in path {
            let next = match (seg.parse::<usize>(), item) {
                (Ok(i), Item::ArrayOfTables(a)) => a.get(i).map(|t| (Some(t), None)),
                (Ok(i), Item::Value(toml_edit::Value::Array(a))) => {
                    a.get(i).map(|v| (None, Some(v)))
                }
                _ => item.get(seg).map(|_| (None, None)),
            };
            match next {
                Some((Some(table), _)) => {
                    best = table.span().map(|s| self.line_of(s.start)).or(best);
                    item = &item[seg.parse::<usize>().unwrap_or(0)];
                }
                Some((None, Some(value))) => {
                    return value.span().map(|s| self.line_of(s.start)).or(best);
                }
                Some((None, None)) => {
                    item = &item[*seg];
                    best = self.item_line(item, seg).or(best);
                }
                None => break,
            }
        }
        best
    }

    fn item_line(&self, item: &Item, key: &str) -> Option<usize> {
        match item.span() {
            Some(s) => Some(self.line_of(s.start)),
            // Tables have no value span; find their header or dotted key.
            None => self
                .text
                .lines()
                .position(|l| l.trim_start().starts_with(&format!("[{key}")))
                .map(|i| i + 1),
        }
    }
}

/// Where every error without a better fix points.
pub(super) const FORMAT_DOC: &str = "see docs/experiment-format.md for the format";

/// Where an experiment's text came from, to name file and line in errors.
pub(super) struct Ctx<'a> {
    pub(super) path: &'a Path,
    pub(super) loc: Locator,
}

impl<'a> Ctx<'a> {
    /// The context of the text `loc` indexes, read from `path`.
    pub(super) fn new(path: &'a Path, loc: Locator) -> Self {
        Ctx { path, loc }
    }

    /// An error at `field` (its segments), with its line when it has one.
    pub(super) fn err(
        &self,
        field: &[&str],
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> SpecError {
        SpecError {
            file: self.path.to_path_buf(),
            line: self.loc.line(field),
            field: dotted(field),
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

/// `system[2].server.x` from its segments (indices are 0-based, printed 1-based).
pub(super) fn dotted(field: &[&str]) -> String {
    let mut out = String::new();
    for seg in field {
        if seg.parse::<usize>().is_ok() {
            out.push_str(&format!("[{}]", seg.parse::<usize>().unwrap_or(0) + 1));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(seg);
        }
    }
    out
}

/// A field path as the `&str` segments [`Ctx::err`] takes.
pub(super) fn refs(path: &[String]) -> Vec<&str> {
    path.iter().map(String::as_str).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lines_of_nested_fields() {
        let text = "name = \"x\"\n\n[sweep]\nconnections = [1, 0]\n\n[[system]]\nlabel = \"a\"\n[[system]]\nlabel = \"b\"\nserver = { workers = 2 }\n";
        let l = Locator::new(text);
        assert_eq!(l.line(&["name"]), Some(1));
        assert_eq!(l.line(&["sweep", "connections"]), Some(4));
        assert_eq!(l.line(&["sweep", "connections", "1"]), Some(4));
        assert_eq!(l.line(&["system", "1", "label"]), Some(9));
        assert_eq!(l.line(&["system", "1", "server", "workers"]), Some(10));
        assert_eq!(l.line(&["system", "1", "missing"]), Some(8));
    }
}
