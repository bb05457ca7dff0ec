//! Plain-text tables for the terminal: aligned columns, optional ANSI
//! styles, and columns dropped by priority when the terminal is narrow.

/// An ANSI style for one table cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    #[default]
    Plain,
    Bold,
    Dim,
    Green,
    Red,
    Yellow,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Plain => "",
            Style::Bold => "\x1b[1m",
            Style::Dim => "\x1b[2m",
            Style::Green => "\x1b[32m",
            Style::Red => "\x1b[31m",
            Style::Yellow => "\x1b[33m",
        }
    }

    /// `text` wrapped in this style's codes when `color`, else as is.
    pub fn paint(self, text: &str, color: bool) -> String {
        if color && self != Style::Plain {
            format!("{}{text}\x1b[0m", self.code())
        } else {
            text.to_string()
        }
    }
}

#[derive(Clone, Debug)]
pub struct Column {
    pub header: String,
    pub right: bool,
    /// Columns with the lowest priority are dropped first when too wide;
    /// 255 is never dropped.
    pub priority: u8,
}

impl Column {
    pub fn left(header: &str, priority: u8) -> Column {
        Column {
            header: header.into(),
            right: false,
            priority,
        }
    }

    pub fn right(header: &str, priority: u8) -> Column {
        Column {
            header: header.into(),
            right: true,
            priority,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct TextTable {
    pub columns: Vec<Column>,
    rows: Vec<Vec<(String, Style)>>,
}

const GAP: usize = 2;

impl TextTable {
    pub fn new(columns: Vec<Column>) -> TextTable {
        TextTable {
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank.
    pub fn row(&mut self, cells: Vec<(String, Style)>) {
        self.rows.push(cells);
    }

    /// Removes the column headed `header` when every row has `blank` in it.
    pub fn drop_if_blank(&mut self, header: &str, blank: &str) {
        let Some(i) = self.columns.iter().position(|c| c.header == header) else {
            return;
        };
        let all_blank = self
            .rows
            .iter()
            .all(|r| r.get(i).map(|(s, _)| s == blank).unwrap_or(true));
        if all_blank {
            self.columns.remove(i);
            for r in &mut self.rows {
                if i < r.len() {
                    r.remove(i);
                }
            }
        }
    }

    fn width_of(&self, col: usize) -> usize {
        self.rows
            .iter()
            .filter_map(|r| r.get(col))
            .map(|(s, _)| s.chars().count())
            .chain([self.columns[col].header.chars().count()])
            .max()
            .unwrap_or(0)
    }

    /// The columns kept within `max_width`, in their original order.
    fn kept(&self, widths: &[usize], max_width: usize) -> Vec<usize> {
        let mut keep: Vec<usize> = (0..self.columns.len()).collect();
        let total = |k: &[usize]| k.iter().map(|&i| widths[i] + GAP).sum::<usize>();
        while total(&keep) > max_width {
            let drop = keep
                .iter()
                .copied()
                .filter(|&i| self.columns[i].priority < 255)
                .min_by_key(|&i| (self.columns[i].priority, usize::MAX - i));
            match drop {
                Some(i) => keep.retain(|&k| k != i),
                None => break,
            }
        }
        keep
    }

    /// Renders with a two-space indent; columns that do not fit in `width`
    /// are dropped, lowest priority first.
    pub fn render(&self, width: usize, color: bool) -> String {
        let widths: Vec<usize> = (0..self.columns.len()).map(|c| self.width_of(c)).collect();
        let keep = self.kept(&widths, width.saturating_sub(2));
        let mut out = String::new();
        let header: Vec<(String, Style)> = self
            .columns
            .iter()
            .map(|c| (c.header.clone(), Style::Bold))
            .collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::from("  ");
            for (n, &i) in keep.iter().enumerate() {
                let (text, style) = row.get(i).cloned().unwrap_or_default();
                let pad = widths[i].saturating_sub(text.chars().count());
                let last = n + 1 == keep.len();
                if self.columns[i].right {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(&style.paint(&text, color));
                } else {
                    line.push_str(&style.paint(&text, color));
                    if !last {
                        line.push_str(&" ".repeat(pad));
                    }
                }
                if !last {
                    line.push_str(&" ".repeat(GAP));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TextTable {
        let mut t = TextTable::new(vec![
            Column::left("system", 255),
            Column::right("median", 255),
            Column::right("95% CI", 1),
        ]);
        t.row(vec![
            ("Debian".into(), Style::Plain),
            ("63.94k".into(), Style::Green),
            ("60.00k–66.00k".into(), Style::Plain),
        ]);
        t
    }

    #[test]
    fn aligns_columns() {
        let s = table().render(200, false);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "  system  median         95% CI");
        assert_eq!(lines[1], "  Debian  63.94k  60.00k–66.00k");
    }

    #[test]
    fn drops_low_priority_columns_when_narrow() {
        let s = table().render(20, false);
        assert!(!s.contains("95% CI"));
        assert!(s.contains("63.94k"));
    }

    #[test]
    fn blank_columns_can_be_dropped() {
        let mut t = table();
        t.drop_if_blank("95% CI", "-");
        assert!(t.render(200, false).contains("95% CI"));
        t.row(vec![
            ("FreeBSD".into(), Style::Plain),
            ("82.12k".into(), Style::Plain),
        ]);
        t.drop_if_blank("median", "-");
        assert!(t.render(200, false).contains("median"));
        let mut t = TextTable::new(vec![Column::left("a", 1), Column::left("b", 1)]);
        t.row(vec![("x".into(), Style::Plain), ("-".into(), Style::Plain)]);
        t.drop_if_blank("b", "-");
        assert_eq!(t.render(200, false), "  a\n  x\n");
    }

    #[test]
    fn colour_only_when_asked() {
        assert!(!table().render(200, false).contains('\x1b'));
        assert!(table().render(200, true).contains("\x1b[32m63.94k\x1b[0m"));
    }
}
