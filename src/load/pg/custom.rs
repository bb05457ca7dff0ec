//! Custom scripts (pgbench `-f FILE`): SQL statements separated by
//! semicolons, over as many lines as they need, with `--` comments. Each
//! run of the file is one transaction, as in pgbench. pgbench's
//! meta-commands (`\set`, `\sleep`, ...) and `:variable` references are
//! refused with the file and line, rather than sent to the server as SQL.

use super::script::{Script, Statement, STATEMENT_NAMES};
use std::borrow::Cow;
use std::path::Path;

/// Why a script file cannot be run; each names the file (and line).
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read the script file {file}: {source}")]
    Read {
        /// The file's path.
        file: String,
        /// What reading it said.
        source: std::io::Error,
    },
    /// A pgbench meta-command this driver does not run.
    #[error(
        "{file}:{line}: the meta-command `{command}` is not supported; a script here is \
         plain SQL statements separated by semicolons"
    )]
    MetaCommand {
        /// The file's path.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The meta-command, such as `\set`.
        command: String,
    },
    /// A `:name` variable reference (only `\set` could define one).
    #[error(
        "{file}:{line}: the variable `:{name}` is not supported (scripts here have no \
         variables); write the value into the statement"
    )]
    Variable {
        /// The file's path.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The variable's name.
        name: String,
    },
    /// A string or quoted name never closed.
    #[error("{file}:{line}: a quote opened here is never closed")]
    Unclosed {
        /// The file's path.
        file: String,
        /// 1-based line of the opening quote.
        line: usize,
    },
    /// No statement at all.
    #[error("{file} holds no SQL statement; write one per `;`, such as `SELECT 1;`")]
    Empty {
        /// The file's path.
        file: String,
    },
    /// More statements than one transaction may hold here.
    #[error(
        "{file} holds {count} statements; a script may hold at most {max} (split it, or \
         join statements)"
    )]
    TooMany {
        /// The file's path.
        file: String,
        /// Statements found.
        count: usize,
        /// The limit.
        max: usize,
    },
}

/// Reads and parses the script file at `path`.
pub fn read(path: &Path) -> Result<Script, ScriptError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
        file: file.clone(),
        source,
    })?;
    parse(&text, &file)
}

/// Parses a script's `text`; `file` names it in errors and is its title.
pub fn parse(text: &str, file: &str) -> Result<Script, ScriptError> {
    let mut splitter = Splitter::default();
    for (i, line) in text.lines().enumerate() {
        splitter.line(line, i + 1, file)?;
    }
    if let Some(line) = splitter.quote_opened {
        return Err(ScriptError::Unclosed {
            file: file.into(),
            line,
        });
    }
    splitter.end_statement();
    let statements = splitter.statements;
    if statements.is_empty() {
        return Err(ScriptError::Empty { file: file.into() });
    }
    if statements.len() > STATEMENT_NAMES.len() {
        return Err(ScriptError::TooMany {
            file: file.into(),
            count: statements.len(),
            max: STATEMENT_NAMES.len(),
        });
    }
    let statements = statements
        .into_iter()
        .map(|sql| Statement {
            sql: Cow::Owned(sql),
            params: Cow::Borrowed(&[]),
        })
        .collect();
    Ok(Script::custom(file.into(), statements))
}

/// Splits lines into statements at semicolons outside quotes.
#[derive(Default)]
struct Splitter {
    statements: Vec<String>,
    current: String,
    /// The quote character open across lines, if any.
    quote: Option<char>,
    /// The line that opened it.
    quote_opened: Option<usize>,
}

impl Splitter {
    fn line(&mut self, line: &str, number: usize, file: &str) -> Result<(), ScriptError> {
        let trimmed = line.trim_start();
        if self.quote.is_none() && self.current.trim().is_empty() && trimmed.starts_with('\\') {
            let command = trimmed.split_whitespace().next().unwrap_or("\\");
            return Err(ScriptError::MetaCommand {
                file: file.into(),
                line: number,
                command: command.into(),
            });
        }
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match self.quote {
                Some(q) => {
                    if c == q {
                        self.quote = None;
                        self.quote_opened = None;
                    }
                    self.current.push(c);
                }
                None if c == '\'' || c == '"' => {
                    self.quote = Some(c);
                    self.quote_opened = Some(number);
                    self.current.push(c);
                }
                None if c == '-' && chars.get(i + 1) == Some(&'-') => break,
                None if c == ';' => self.end_statement(),
                None if c == ':' => {
                    if let Some(name) = variable_at(&chars, i) {
                        return Err(ScriptError::Variable {
                            file: file.into(),
                            line: number,
                            name,
                        });
                    }
                    // A `::` cast: keep both colons.
                    self.current.push(c);
                    if chars.get(i + 1) == Some(&':') {
                        self.current.push(':');
                        i += 1;
                    }
                }
                None => self.current.push(c),
            }
            i += 1;
        }
        self.current.push('\n');
        Ok(())
    }

    fn end_statement(&mut self) {
        let sql = self.current.trim();
        if !sql.is_empty() {
            self.statements.push(sql.to_string());
        }
        self.current.clear();
    }
}

/// The variable name after a single `:` at `i` (`:aid`), if one starts
/// there; `None` for a `::` cast or a lone colon.
fn variable_at(chars: &[char], i: usize) -> Option<String> {
    if i > 0 && chars[i - 1] == ':' {
        return None;
    }
    let name: String = chars[i + 1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .collect();
    let starts_like_a_name = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    starts_like_a_name.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(script: &Script) -> Vec<&str> {
        script.statements().iter().map(|s| &*s.sql).collect()
    }

    #[test]
    fn statements_split_at_semicolons_outside_quotes_over_lines() {
        let text = "-- a comment\nBEGIN;\nUPDATE t SET n = n + 1 -- trailing\n  WHERE id = 1;\n\
                    INSERT INTO log (v) VALUES ('a;b'), ('it''s'); SELECT 1::int;\nEND\n";
        let s = parse(text, "t.sql").unwrap();
        assert_eq!(
            sql(&s),
            [
                "BEGIN",
                "UPDATE t SET n = n + 1 \n  WHERE id = 1",
                "INSERT INTO log (v) VALUES ('a;b'), ('it''s')",
                "SELECT 1::int",
                "END"
            ]
        );
        assert_eq!((s.title.as_str(), s.builtin), ("t.sql", None));
        assert!(s.statements().iter().all(|st| st.params.is_empty()));
    }

    #[test]
    fn what_cannot_run_is_refused_naming_the_file_and_line() {
        let e = parse("SELECT 1;\n\\set aid random(1, 10)\n", "x.sql").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.sql:2: the meta-command `\\set` is not supported; a script here is plain SQL \
             statements separated by semicolons"
        );
        let e = parse(
            "SELECT 1;\nSELECT abalance\n FROM a WHERE aid = :aid;",
            "y.sql",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("y.sql:3: the variable `:aid` is not supported"),
            "{e}"
        );
        let e = parse("SELECT 'open;\n", "z.sql").unwrap_err().to_string();
        assert_eq!(e, "z.sql:1: a quote opened here is never closed");
        let e = parse("-- only a comment\n;\n", "e.sql")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("e.sql holds no SQL statement"), "{e}");
        let many = "SELECT 1;\n".repeat(STATEMENT_NAMES.len() + 1);
        let e = parse(&many, "m.sql").unwrap_err().to_string();
        assert!(e.starts_with("m.sql holds 33 statements"), "{e}");
        let e = read(Path::new("/nonexistent/s.sql"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot read the script file /nonexistent/s.sql"),
            "{e}"
        );
    }
}
