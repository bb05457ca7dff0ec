//! Custom scripts (pgbench `-f FILE`): SQL statements separated by
//! semicolons, over as many lines as they need, with `--` comments, and
//! pgbench's `\set NAME random(LO, HI)` (integers, or `N * :scale`) whose
//! `:NAME` the statements use (sent as parameters, `$1`, `$2`, ...). Each
//! run of the file is one transaction, as in pgbench, its variables drawn
//! anew. Other meta-commands (`\sleep`, `\if`, ...), other `\set`
//! expressions and undefined variables are refused with the file and line,
//! rather than sent to the server as SQL.

use super::script::{
    Bound, RandomVar, Script, Statement, Var, MAX_PARAMS, MAX_SET_VARS, STATEMENT_NAMES,
};
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
         SQL statements separated by semicolons, and `\\set NAME random(LO, HI)`"
    )]
    MetaCommand {
        /// The file's path.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The meta-command, such as `\set`.
        command: String,
    },
    /// A `:name` variable no `\set` above defined.
    #[error(
        "{file}:{line}: the variable `:{name}` is not defined; define it above with \
         `\\set {name} random(LO, HI)`"
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
    /// A `\set` this driver cannot evaluate.
    #[error(
        "{file}:{line}: `{text}` is not supported; write `\\set NAME random(LO, HI)` with \
         integer bounds, or `N * :scale`"
    )]
    Set {
        /// The file's path.
        file: String,
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// More variables, or parameters in one statement, than allowed.
    #[error("{file}:{line}: more than {max} {what}; a script here may use at most {max}")]
    TooManyVars {
        /// The file's path.
        file: String,
        /// 1-based line number.
        line: usize,
        /// `\set variables` or `variables in one statement`.
        what: &'static str,
        /// The limit.
        max: usize,
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
    let (statements, randoms) = (splitter.statements, splitter.randoms);
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
    Ok(Script::custom(file.into(), statements, randoms))
}

/// Splits lines into statements at semicolons outside quotes.
#[derive(Default)]
struct Splitter {
    statements: Vec<Statement>,
    randoms: Vec<RandomVar>,
    current: String,
    /// The variables the current statement uses, in `$n` order.
    params: Vec<Var>,
    /// The quote character open across lines, if any.
    quote: Option<char>,
    /// The line that opened it.
    quote_opened: Option<usize>,
}

impl Splitter {
    fn line(&mut self, line: &str, number: usize, file: &str) -> Result<(), ScriptError> {
        let trimmed = line.trim_start();
        if self.quote.is_none() && self.current.trim().is_empty() && trimmed.starts_with('\\') {
            return self.meta_command(trimmed, number, file);
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
                        i += name.chars().count() + 1;
                        self.use_variable(&name, number, file)?;
                        continue;
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
            self.statements.push(Statement {
                sql: Cow::Owned(sql.to_string()),
                params: Cow::Owned(std::mem::take(&mut self.params)),
            });
        }
        self.current.clear();
        self.params.clear();
    }

    /// `\set NAME random(LO, HI)`; any other meta-command is refused.
    fn meta_command(&mut self, text: &str, line: usize, file: &str) -> Result<(), ScriptError> {
        let mut words = text.split_whitespace();
        let command = words.next().unwrap_or("\\");
        if command != "\\set" {
            return Err(ScriptError::MetaCommand {
                file: file.into(),
                line,
                command: command.into(),
            });
        }
        let bad = || ScriptError::Set {
            file: file.into(),
            line,
            text: text.trim().into(),
        };
        let name = words.next().filter(|n| is_name(n)).ok_or_else(bad)?;
        let expr: String = words.collect::<String>();
        let (lo, hi) = parse_random(&expr).ok_or_else(bad)?;
        if self.randoms.len() == MAX_SET_VARS {
            return Err(ScriptError::TooManyVars {
                file: file.into(),
                line,
                what: "\\set variables",
                max: MAX_SET_VARS,
            });
        }
        self.randoms.retain(|r| r.name != name);
        self.randoms.push(RandomVar {
            name: name.into(),
            lo,
            hi,
        });
        Ok(())
    }

    /// `:name` in a statement: its `$n` placeholder, the same for every
    /// use within the statement.
    fn use_variable(&mut self, name: &str, line: usize, file: &str) -> Result<(), ScriptError> {
        let index = self
            .randoms
            .iter()
            .position(|r| r.name == name)
            .ok_or_else(|| ScriptError::Variable {
                file: file.into(),
                line,
                name: name.into(),
            })?;
        let var = Var::Set(index as u8);
        let slot = match self.params.iter().position(|v| *v == var) {
            Some(slot) => slot,
            None if self.params.len() == MAX_PARAMS => {
                return Err(ScriptError::TooManyVars {
                    file: file.into(),
                    line,
                    what: "variables in one statement",
                    max: MAX_PARAMS,
                })
            }
            None => {
                self.params.push(var);
                self.params.len() - 1
            }
        };
        self.current.push_str(&format!("${}", slot + 1));
        Ok(())
    }
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `random(LO,HI)` (spaces removed), each bound an integer, `N*:scale`,
/// `:scale*N` or `:scale`.
fn parse_random(expr: &str) -> Option<(Bound, Bound)> {
    let inner = expr.strip_prefix("random(")?.strip_suffix(')')?;
    let (lo, hi) = inner.split_once(',')?;
    Some((parse_bound(lo)?, parse_bound(hi)?))
}

fn parse_bound(text: &str) -> Option<Bound> {
    let factors: Vec<&str> = text.split('*').collect();
    let per_scale = factors.contains(&":scale");
    let numbers: Vec<&str> = factors.into_iter().filter(|f| *f != ":scale").collect();
    let value = match numbers.as_slice() {
        [] if per_scale => 1,
        [n] => n.parse().ok()?,
        _ => return None,
    };
    Some(Bound { value, per_scale })
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
    fn set_variables_become_parameters_drawn_per_transaction() {
        use rand::SeedableRng;
        let text = "\\set aid random(1, 100000 * :scale)\n\\set d random(-5, 5)\n\
                    UPDATE a SET b = b + :d WHERE aid = :aid;\n\
                    SELECT :aid, :aid::text, 1::int;\n";
        let s = parse(text, "p.sql").unwrap();
        assert_eq!(
            sql(&s),
            [
                "UPDATE a SET b = b + $1 WHERE aid = $2",
                "SELECT $1, $1::text, 1::int"
            ]
        );
        let params: Vec<&[Var]> = s.statements().iter().map(|st| &*st.params).collect();
        assert_eq!(
            params,
            [&[Var::Set(1), Var::Set(0)][..], &[Var::Set(0)][..]]
        );
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for _ in 0..20_000 {
            let v = s.draw(&mut rng, 3);
            assert!((1..=300_000).contains(&v.set[0]), "{v:?}");
            (lo, hi) = (lo.min(v.set[1]), hi.max(v.set[1]));
            let (p, n) = v.params(&s.statements()[0]);
            assert_eq!(&p[..n], &[v.set[1], v.set[0]]);
        }
        assert_eq!((lo, hi), (-5, 5));
    }

    #[test]
    fn what_cannot_run_is_refused_naming_the_file_and_line() {
        let e = parse("SELECT 1;\n\\sleep 1 ms\n", "x.sql").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.sql:2: the meta-command `\\sleep` is not supported; a script here is SQL \
             statements separated by semicolons, and `\\set NAME random(LO, HI)`"
        );
        let e = parse(
            "SELECT 1;\nSELECT abalance\n FROM a WHERE aid = :aid;",
            "y.sql",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("y.sql:3: the variable `:aid` is not defined"),
            "{e}"
        );
        for bad in [
            "\\set aid random_zipfian(1, 10, 1.5)",
            "\\set aid 5 + 1",
            "\\set 9x random(1, 2)",
            "\\set aid random(1, 2 * 3)",
        ] {
            let e = parse(bad, "s.sql").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("s.sql:1: `{bad}` is not supported")),
                "{e}"
            );
        }
        let many: String = (0..=MAX_SET_VARS)
            .map(|i| format!("\\set v{i} random(1, 2)\n"))
            .collect();
        let e = parse(&many, "v.sql").unwrap_err().to_string();
        assert!(e.starts_with("v.sql:9: more than 8 \\set variables"), "{e}");
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
