//! (N, X) pairs from CSV text, the input of `scalelab model`.
//!
//! Accepts what spreadsheets, wrk wrappers and R's `write.csv` produce:
//! `,` `;` tab or space separated, an optional header, `#` comments, quoted
//! fields. With a header, the concurrency column is the first whose name
//! has a word like `n`, `concurrency`, `clients`, `threads`, `connections`,
//! `users`, `load`, `processors`, `cpus` or `workers`, and the throughput
//! column the first with `x`, `throughput`, `tps`, `rps`, `qps`, `ops` or
//! `rate`; otherwise the first two columns are used.
use std::fmt;

/// A row that could not be read, with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// The row's 1-based line number in the file.
    pub line: usize,
    /// What is wrong with it and what a valid row looks like.
    pub message: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for CsvError {}

const N_WORDS: &[&str] = &[
    "n",
    "concurrency",
    "clients",
    "client",
    "threads",
    "thread",
    "connections",
    "conns",
    "users",
    "load",
    "processors",
    "cpus",
    "cpu",
    "workers",
    "procs",
];
const X_WORDS: &[&str] = &["x", "throughput", "tps", "rps", "qps", "ops", "rate"];

/// Parses (N, X) pairs; N and X must be positive and finite.
pub fn parse_points(text: &str) -> Result<Vec<(f64, f64)>, CsvError> {
    let rows = rows(text);
    let Some((_, first)) = rows.first() else {
        return Err(CsvError {
            line: 0,
            message: "no data: expected rows of concurrency N and throughput X, such as `8,1520.5`"
                .into(),
        });
    };
    let header = first.iter().any(|f| number(f).is_none());
    let (n_col, x_col) = if header { columns(first) } else { (0, 1) };
    let data = if header { &rows[1..] } else { &rows[..] };
    if data.is_empty() {
        return Err(CsvError {
            line: 0,
            message: "only a header, no data rows".into(),
        });
    }
    let name = |c: usize| -> String {
        match first.get(c) {
            Some(h) if header => format!("column {} (`{h}`)", c + 1),
            _ => format!("column {}", c + 1),
        }
    };
    data.iter()
        .map(|(line, fields)| {
            let n = field(fields, n_col, *line, &name(n_col))?;
            let x = field(fields, x_col, *line, &name(x_col))?;
            check(*line, n, x)
        })
        .collect()
}

/// The columns every `scalelab export --format csv` starts with; the sweep
/// axes follow them, up to [`EXPORT_AXES_END`].
const EXPORT_FIRST: [&str; 3] = ["run_id", "system", "point_index"];
/// The column after the export's sweep axes.
const EXPORT_AXES_END: &str = "trial";

/// One curve of a file: its label (`system=postgres, load.script=select-only`,
/// empty for a plain two-column file) and its (N, X) pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The values of the columns that split the file, `column=value`
    /// joined by `, `; empty when nothing splits it.
    pub label: String,
    /// (N, X) pairs in file order.
    pub points: Vec<(f64, f64)>,
}

/// The curves of a file. A scalelab export CSV (it starts with `run_id,
/// system, point_index`) is split by system and by every sweep axis other
/// than N that varies, so that a fit never mixes two systems or two
/// workloads (pgbench's select-only and tpcb-like); N is the first axis
/// named like a concurrency, X the `throughput_*` column, and failed
/// trials (no throughput) are left out. Any other file is one curve
/// ([`parse_points`]).
pub fn parse_curves(text: &str) -> Result<Vec<Curve>, CsvError> {
    let rows = rows(text);
    let is_export = rows
        .first()
        .is_some_and(|(_, h)| h.len() > 3 && h[..3] == EXPORT_FIRST);
    if !is_export {
        return Ok(vec![Curve {
            label: String::new(),
            points: parse_points(text)?,
        }]);
    }
    export_curves(&rows[0].1, &rows[1..])
}

fn export_curves(header: &[String], rows: &[(usize, Vec<String>)]) -> Result<Vec<Curve>, CsvError> {
    let end = header
        .iter()
        .position(|h| h == EXPORT_AXES_END)
        .unwrap_or(header.len());
    let axes: Vec<usize> = (EXPORT_FIRST.len()..end).collect();
    let names = |cols: &[usize]| {
        cols.iter()
            .map(|&c| format!("`{}`", header[c]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let n_col = axes
        .iter()
        .copied()
        .find(|&c| {
            // The axis's own last word: `server.threads`, `server_cpus`.
            let own = header[c].rsplit(['.', '_']).next().unwrap_or("");
            N_WORDS.contains(&own.to_ascii_lowercase().as_str())
        })
        .ok_or_else(|| CsvError {
            line: 1,
            message: format!(
                "no sweep axis counts concurrency (the axes are {}): the USL needs N, such as `connections` or `server.threads`",
                if axes.is_empty() { "none".to_string() } else { names(&axes) }
            ),
        })?;
    let x_col = header
        .iter()
        .position(|h| h.starts_with("throughput_"))
        .ok_or_else(|| CsvError {
            line: 1,
            message: "no `throughput_*` column: is this a `scalelab export --format csv` file?"
                .into(),
        })?;
    // The system and every other axis that varies split the file.
    let split_by: Vec<usize> = std::iter::once(1)
        .chain(axes.iter().copied().filter(|&c| c != n_col))
        .filter(|&c| {
            let first = rows.first().and_then(|r| r.1.get(c));
            rows.iter().any(|r| r.1.get(c) != first)
        })
        .collect();
    let mut curves: Vec<Curve> = Vec::new();
    for (line, fields) in rows {
        let x_text = fields.get(x_col).map(String::as_str).unwrap_or("");
        if x_text.is_empty() {
            continue; // a failed trial has no throughput
        }
        let n = field(fields, n_col, *line, &format!("`{}`", header[n_col]))?;
        let x = field(fields, x_col, *line, &format!("`{}`", header[x_col]))?;
        let point = check(*line, n, x)?;
        let label = split_by
            .iter()
            .map(|&c| format!("{}={}", header[c], fields.get(c).map_or("", String::as_str)))
            .collect::<Vec<_>>()
            .join(", ");
        match curves.iter_mut().find(|c| c.label == label) {
            Some(c) => c.points.push(point),
            None => curves.push(Curve {
                label,
                points: vec![point],
            }),
        }
    }
    if curves.is_empty() {
        return Err(CsvError {
            line: 0,
            message: "no successful trial: every row's throughput is empty".into(),
        });
    }
    Ok(curves)
}

fn check(line: usize, n: f64, x: f64) -> Result<(f64, f64), CsvError> {
    if n <= 0.0 {
        return Err(CsvError {
            line,
            message: format!("concurrency N = {n} must be positive"),
        });
    }
    if x <= 0.0 {
        return Err(CsvError {
            line,
            message: format!("throughput X = {x} must be positive; leave failed measurements out"),
        });
    }
    Ok((n, x))
}

fn field(fields: &[String], col: usize, line: usize, name: &str) -> Result<f64, CsvError> {
    let text = fields.get(col).ok_or_else(|| CsvError {
        line,
        message: format!(
            "has {} column(s), but {name} is needed; each row needs N and X",
            fields.len()
        ),
    })?;
    number(text).ok_or_else(|| CsvError {
        line,
        message: format!("`{text}` in {name} is not a finite number"),
    })
}

/// The file's rows with their 1-based line numbers, blank lines and `#`
/// comments left out, each split into fields.
fn rows(text: &str) -> Vec<(usize, Vec<String>)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i, split(l)))
        .collect()
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The N and X columns named by the header, else the first two.
fn columns(header: &[String]) -> (usize, usize) {
    let find = |words: &[&str], skip: Option<usize>| {
        header.iter().enumerate().position(|(i, h)| {
            Some(i) != skip
                && h.split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|w| words.contains(&w.to_ascii_lowercase().as_str()))
        })
    };
    match find(N_WORDS, None) {
        Some(n) => match find(X_WORDS, Some(n)) {
            Some(x) => (n, x),
            None => (n, if n == 0 { 1 } else { 0 }),
        },
        None => match find(X_WORDS, None) {
            Some(x) if x != 0 => (0, x),
            Some(_) => (1, 0),
            None => (0, 1),
        },
    }
}

fn split(line: &str) -> Vec<String> {
    let fields: Vec<&str> = match [',', ';', '\t'].into_iter().find(|&c| line.contains(c)) {
        Some(sep) => line.split(sep).collect(),
        None => line.split_whitespace().collect(),
    };
    fields
        .into_iter()
        .map(|f| f.trim().trim_matches('"').trim().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headerless_pairs() {
        let p = parse_points("1,64.9\n18,995.9\n\n36, 1652.4\n").unwrap();
        assert_eq!(p, vec![(1.0, 64.9), (18.0, 995.9), (36.0, 1652.4)]);
    }

    #[test]
    fn header_names_pick_the_columns() {
        let text = "# pgbench sweep\ndate,tps,clients\nmon,1000,1\ntue,1900,2\n";
        assert_eq!(
            parse_points(text).unwrap(),
            vec![(1.0, 1000.0), (2.0, 1900.0)]
        );
        let r = "\"processors\",\"throughput\"\n\"1\",20\n4,78\n";
        assert_eq!(parse_points(r).unwrap(), vec![(1.0, 20.0), (4.0, 78.0)]);
        let units = "Throughput (rps)\tN\n500\t1\n";
        assert_eq!(parse_points(units).unwrap(), vec![(1.0, 500.0)]);
    }

    #[test]
    fn unknown_header_uses_the_first_two_columns() {
        assert_eq!(parse_points("a;b\n2;30\n").unwrap(), vec![(2.0, 30.0)]);
        assert_eq!(parse_points("a b\n2  30\n").unwrap(), vec![(2.0, 30.0)]);
    }

    #[test]
    fn bad_rows_name_their_line_and_column() {
        let e = parse_points("n,x\n1,10\n2,abc\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("`abc` in column 2 (`x`)"), "{e}");
        let e = parse_points("1,10\n2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("1 column(s)"), "{e}");
        let e = parse_points("1,10\n2,nan\n").unwrap_err();
        assert!(e.message.contains("not a finite number"), "{e}");
    }

    #[test]
    fn non_positive_values_are_rejected_with_the_line() {
        let e = parse_points("1,10\n2,0\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("must be positive"), "{e}");
        let e = parse_points("0,10\n").unwrap_err();
        assert!(e.to_string().starts_with("line 1: concurrency"), "{e}");
    }

    #[test]
    fn an_export_is_split_by_system_and_every_other_axis() {
        let text = "run_id,system,point_index,load.script,connections,trial,status,throughput_transactions_per_s\n\
            1,pg,0,select-only,1,1,ok,7000\n\
            1,pg,1,select-only,2,1,ok,13000\n\
            1,pg,2,tpcb-like,1,1,ok,800\n\
            1,pg,3,tpcb-like,2,1,failed,\n\
            1,pg,3,tpcb-like,2,2,ok,1500\n";
        let curves = parse_curves(text).unwrap();
        let labels: Vec<&str> = curves.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["load.script=select-only", "load.script=tpcb-like"]);
        assert_eq!(curves[1].points, vec![(1.0, 800.0), (2.0, 1500.0)]);
        let two = text
            .replace("1,pg,2,", "1,mysql,2,")
            .replace("1,pg,3,", "1,mysql,3,");
        let labels: Vec<String> = parse_curves(&two)
            .unwrap()
            .into_iter()
            .map(|c| c.label)
            .collect();
        assert_eq!(labels[1], "system=mysql, load.script=tpcb-like");
        let no_n =
            "run_id,system,point_index,rate,trial,throughput_requests_per_s\n1,a,0,100,1,50\n";
        let e = parse_curves(no_n).unwrap_err();
        assert!(e.message.contains("the axes are `rate`"), "{e}");
        // A plain file is one curve.
        assert_eq!(parse_curves("1,10\n2,19\n").unwrap()[0].label, "");
    }

    #[test]
    fn empty_input_and_header_only() {
        assert!(parse_points("").unwrap_err().message.contains("no data"));
        assert!(parse_points("# nothing\n\n").is_err());
        assert!(parse_points("n,x\n")
            .unwrap_err()
            .message
            .contains("only a header"));
    }
}
