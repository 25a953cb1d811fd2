//! Plain text tables for the terminal, the one way casslab lines up columns: every column as
//! wide as its widest cell, words left-aligned and numbers right-aligned where the caller says
//! so, a gap of spaces between columns, an indent, no borders and no trailing spaces. Built on
//! `comfy-table` (its border-less preset), so long names (`read_by_partition_set.request`)
//! push their column wider instead of breaking the alignment. It decides layout only: what
//! the cells say is the caller's, and so is where the text goes.

use comfy_table::{presets::NOTHING, CellAlignment, Table};
use std::fmt;

/// How a column's cells (its heading included) line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
}

/// A table of text cells; see the module doc for the layout.
#[derive(Debug, Clone)]
pub struct TextTable {
    header: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
    align: Vec<Align>,
    indent: usize,
    gap: usize,
}

impl TextTable {
    /// A table under these headings, one per column; left-aligned, a gap of 2, no indent.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> TextTable {
        TextTable { header: Some(header.into_iter().map(Into::into).collect()), ..TextTable::headless() }
    }

    /// A table without a heading row.
    pub fn headless() -> TextTable {
        TextTable { header: None, rows: Vec::new(), align: Vec::new(), indent: 0, gap: 2 }
    }

    /// Spaces before every line.
    pub fn indent(mut self, spaces: usize) -> TextTable {
        self.indent = spaces;
        self
    }

    /// Spaces between two columns.
    pub fn gap(mut self, spaces: usize) -> TextTable {
        self.gap = spaces;
        self
    }

    /// Right-aligns these columns (numbers), counted from 0.
    pub fn right(mut self, columns: impl IntoIterator<Item = usize>) -> TextTable {
        for c in columns {
            if self.align.len() <= c {
                self.align.resize(c + 1, Align::Left);
            }
            self.align[c] = Align::Right;
        }
        self
    }

    /// Adds a row; a short row leaves its last cells empty.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut TextTable {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Rows added so far (the heading not counted).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table's lines, heading first, without line breaks.
    pub fn lines(&self) -> Vec<String> {
        if self.rows.is_empty() && self.header.is_none() {
            return Vec::new();
        }
        let mut t = Table::new();
        t.load_style(NOTHING);
        if let Some(h) = &self.header {
            t.set_header(h.clone());
        }
        t.add_rows(self.rows.iter().cloned());
        let last = t.column_count().saturating_sub(1);
        let gap = u16::try_from(self.gap).unwrap_or(u16::MAX);
        for (i, column) in t.column_iter_mut().enumerate() {
            column.set_padding((0, if i < last { gap } else { 0 }));
            column.set_cell_alignment(match self.align.get(i) {
                Some(Align::Right) => CellAlignment::Right,
                _ => CellAlignment::Left,
            });
        }
        let indent = " ".repeat(self.indent);
        t.lines().map(|l| format!("{indent}{}", l.trim_end())).collect()
    }
}

/// The lines, each ended by a line break.
impl fmt::Display for TextTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.lines().iter().try_for_each(|l| writeln!(f, "{l}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_whatever_the_length_of_a_name() {
        let mut t = TextTable::new(["op", "count", "p99"]).indent(2).right([1, 2]);
        t.row(["read", "12345", "1.23"]);
        t.row(["read_by_partition_set.request", "5", "123"]);
        assert_eq!(
            t.to_string(),
            concat!(
                "  op                             count   p99\n",
                "  read                           12345  1.23\n",
                "  read_by_partition_set.request      5   123\n",
            )
        );
    }

    #[test]
    fn no_trailing_spaces_short_rows_and_gaps() {
        let mut t = TextTable::headless().gap(1);
        t.row(["a", "long cell", "x"]);
        t.row(["bb"]);
        assert_eq!(t.lines(), vec!["a  long cell x".to_string(), "bb".to_string()]);
        assert_eq!(t.len(), 2);
        assert!(TextTable::headless().lines().is_empty());
    }

    #[test]
    fn wide_characters_count_as_one_column() {
        let mut t = TextTable::new(["x", "y"]);
        t.row(["—", "1"]);
        t.row(["ab", "2"]);
        assert_eq!(t.lines(), vec!["x   y", "—   1", "ab  2"]);
    }
}
