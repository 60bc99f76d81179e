//! Markdown tables laid out in columns: natural widths when they fit, the widest columns
//! shrunk (cells cut with `…`) when they do not, one line per row when even that fails.

use pulldown_cmark::Alignment;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::wrap::{self, LineBuilder};

/// Narrowest column worth drawing; below it rows are written out as text instead.
const MIN_COLUMN: usize = 3;
const SEPARATOR: &str = " │ ";

/// A table being collected from parser events.
#[derive(Debug, Default)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Row>,
}

#[derive(Debug)]
struct Row {
    header: bool,
    cells: Vec<String>,
}

/// The styles a table is drawn with.
pub(super) struct TableStyle {
    pub text: Style,
    pub header: Style,
    pub rule: Style,
}

impl Table {
    pub(super) fn new(aligns: Vec<Alignment>) -> Self {
        Table {
            aligns,
            rows: Vec::new(),
        }
    }

    pub(super) fn start_row(&mut self, header: bool) {
        self.rows.push(Row {
            header,
            cells: Vec::new(),
        });
    }

    pub(super) fn start_cell(&mut self) {
        if self.rows.is_empty() {
            self.start_row(false);
        }
        if let Some(row) = self.rows.last_mut() {
            row.cells.push(String::new());
        }
    }

    /// Appends text to the current cell.
    pub(super) fn push(&mut self, text: &str) {
        if let Some(cell) = self.rows.last_mut().and_then(|r| r.cells.last_mut()) {
            // Cells are one line; a break inside one reads as a space.
            cell.push_str(&text.replace('\n', " "));
        }
    }

    /// The table's lines, at most `width` columns wide.
    pub(super) fn render(&self, width: usize, style: &TableStyle) -> Vec<Line<'static>> {
        let ncols = self
            .rows
            .iter()
            .map(|r| r.cells.len())
            .max()
            .unwrap_or(0)
            .max(self.aligns.len());
        if ncols == 0 {
            return Vec::new();
        }
        let mut natural = vec![1; ncols];
        for row in &self.rows {
            for (i, cell) in row.cells.iter().enumerate() {
                natural[i] = natural[i].max(wrap::width(cell));
            }
        }
        let seps = wrap::width(SEPARATOR) * (ncols - 1);
        let avail = width.saturating_sub(seps);
        if avail < MIN_COLUMN * ncols {
            return self.as_text(width, style);
        }
        let widths = fit(&natural, avail);
        let mut out = Vec::new();
        for row in &self.rows {
            out.push(self.row_line(row, &widths, style));
            if row.header {
                out.push(rule_line(&widths, style.rule));
            }
        }
        out
    }

    fn row_line(&self, row: &Row, widths: &[usize], style: &TableStyle) -> Line<'static> {
        let cell_style = if row.header { style.header } else { style.text };
        let mut b = LineBuilder::new(&[]);
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                b.push(SEPARATOR, style.rule);
            }
            let text = wrap::truncate(row.cells.get(i).map_or("", String::as_str), *w);
            let pad = w.saturating_sub(wrap::width(&text));
            let (left, right) = match self.aligns.get(i) {
                Some(Alignment::Right) => (pad, 0),
                Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                _ => (0, pad),
            };
            b.push(&" ".repeat(left), cell_style);
            b.push(&text, cell_style);
            // Trailing padding of the last column would only add invisible spaces.
            if i + 1 < widths.len() {
                b.push(&" ".repeat(right), cell_style);
            }
        }
        b.finish()
    }

    /// Rows written as `a │ b │ c` and wrapped, for panes too narrow for columns.
    fn as_text(&self, width: usize, style: &TableStyle) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for row in &self.rows {
            let cell_style = if row.header { style.header } else { style.text };
            let mut spans = Vec::new();
            for (i, cell) in row.cells.iter().enumerate() {
                if i > 0 {
                    spans.push((SEPARATOR.to_string(), style.rule));
                }
                spans.push((cell.clone(), cell_style));
            }
            out.extend(wrap::wrap(&spans, width, &[], &[]));
        }
        out
    }
}

fn rule_line(widths: &[usize], rule: Style) -> Line<'static> {
    let parts: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    Line::from(Span::styled(parts.join("─┼─"), rule))
}

/// Column widths within `avail`: every column keeps its natural width up to a common cap,
/// the cap as high as fits; columns never go below [`MIN_COLUMN`] unless naturally smaller.
fn fit(natural: &[usize], avail: usize) -> Vec<usize> {
    let total: usize = natural.iter().sum();
    if total <= avail {
        return natural.to_vec();
    }
    let capped = |cap: usize| -> usize { natural.iter().map(|n| (*n).min(cap)).sum() };
    let (mut lo, mut hi) = (
        MIN_COLUMN,
        natural.iter().copied().max().unwrap_or(MIN_COLUMN),
    );
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if capped(mid) <= avail {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut widths: Vec<usize> = natural.iter().map(|n| (*n).min(lo)).collect();
    // Hand the columns left over to the columns that were cut, left to right.
    let mut spare = avail.saturating_sub(widths.iter().sum());
    for (w, n) in widths.iter_mut().zip(natural) {
        if spare == 0 {
            break;
        }
        if *w < *n {
            *w += 1;
            spare -= 1;
        }
    }
    widths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_natural_widths_when_room() {
        assert_eq!(fit(&[3, 5, 2], 20), [3, 5, 2]);
    }

    #[test]
    fn fit_shrinks_the_widest_first() {
        let w = fit(&[3, 40, 30], 40);
        assert_eq!(w.iter().sum::<usize>(), 40);
        assert_eq!(w[0], 3);
        assert!(w[1] >= w[2] && w[1] <= 19);
    }
}
