//! Drawing an emulator's screen into a ratatui buffer: the colours a program chose, with the
//! 16 ANSI colours and the defaults taken from the theme.

use std::cell::RefCell;
use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::{TermCell, TermColor, TerminalEmulator};
use crate::theme::{Slot, Theme};

/// The colours a shell pane draws with: the theme's text and background for the defaults,
/// its `terminal.ansi.*` slots for the 16 named colours.
#[derive(Debug, Clone, PartialEq)]
pub struct TermPalette {
    fg: Color,
    bg: Color,
    ansi: [Color; 16],
}

impl TermPalette {
    /// The palette of `theme`.
    pub fn new(theme: &Theme) -> Self {
        let fg = theme.style(Slot::Text).fg.unwrap_or(Color::Reset);
        let bg = theme.style(Slot::Background).bg.unwrap_or(Color::Reset);
        let mut ansi = [Color::Reset; 16];
        for (i, colour) in ansi.iter_mut().enumerate() {
            // Without a slot the outer terminal's own colour of that index is used.
            *colour = u8::try_from(i)
                .ok()
                .and_then(|i| Some(theme.style(Slot::ansi(i)?).fg.unwrap_or(Color::Indexed(i))))
                .unwrap_or(Color::Reset);
        }
        TermPalette { fg, bg, ansi }
    }

    fn color(&self, c: TermColor, default: Color) -> Color {
        match c {
            TermColor::Default => default,
            TermColor::Indexed(i) if i < 16 => self.ansi[usize::from(i)],
            TermColor::Indexed(i) => Color::Indexed(i),
            TermColor::Rgb(r, g, b) => Color::Rgb(r, g, b),
        }
    }

    /// The style of `cell`.
    pub fn style(&self, cell: &TermCell) -> Style {
        let (mut fg, mut bg) = (self.color(cell.fg, self.fg), self.color(cell.bg, self.bg));
        if cell.inverse {
            std::mem::swap(&mut fg, &mut bg);
        }
        let mut modifier = Modifier::empty();
        for (on, m) in [
            (cell.bold, Modifier::BOLD),
            (cell.dim, Modifier::DIM),
            (cell.italic, Modifier::ITALIC),
            (cell.underline, Modifier::UNDERLINED),
            (cell.strikeout, Modifier::CROSSED_OUT),
        ] {
            if on {
                modifier |= m;
            }
        }
        // Every attribute is said, on or off: a cell drawn again over an older one in a
        // reused buffer must not keep the older one's (a bold left by `top`).
        Style::default()
            .fg(fg)
            .bg(bg)
            .add_modifier(modifier)
            .remove_modifier(Modifier::all() - modifier)
    }
}

/// Draws what `term` shows into `area` of `buf` (its top-left rows and columns when the
/// area is smaller than the screen; blank beyond the screen when it is larger), with
/// `mark(row, col)` giving a style to lay over marked cells (a selection, a search match).
pub fn draw_screen(
    term: &dyn TerminalEmulator,
    area: Rect,
    buf: &mut Buffer,
    palette: &TermPalette,
    mark: &dyn Fn(u16, u16) -> Option<Style>,
) {
    draw_rows(term, area, buf, palette, mark, &|_| Some(0..u16::MAX));
}

/// [`draw_screen`] for the columns `which(row)` gives of each row only (the other cells
/// are left as they are).
pub fn draw_rows(
    term: &dyn TerminalEmulator,
    area: Rect,
    buf: &mut Buffer,
    palette: &TermPalette,
    mark: &dyn Fn(u16, u16) -> Option<Style>,
    which: &dyn Fn(u16) -> Option<Range<u16>>,
) {
    ROW.with_borrow_mut(|cells| {
        draw_rows_with(term, area, buf, palette, mark, which, cells);
    });
}

thread_local! {
    /// A row's cells, kept from one draw to the next: at 200 columns they take 11 KiB,
    /// whose allocation per frame (with one string per cell) showed in the cost of an echo.
    static ROW: RefCell<Vec<TermCell>> = const { RefCell::new(Vec::new()) };
}

fn draw_rows_with(
    term: &dyn TerminalEmulator,
    area: Rect,
    buf: &mut Buffer,
    palette: &TermPalette,
    mark: &dyn Fn(u16, u16) -> Option<Style>,
    which: &dyn Fn(u16) -> Option<Range<u16>>,
    cells: &mut Vec<TermCell>,
) {
    let (rows, _) = term.size();
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    let blank = Style::default().fg(palette.fg).bg(palette.bg);
    // Neighbouring cells mostly look alike: their style is worked out once.
    let mut last: Option<(TermCell, Style)> = None;
    let width = usize::from(area.width);
    for y in 0..area.height {
        let Some(cols) = which(y) else {
            continue;
        };
        let cols = usize::from(cols.start).min(width)..usize::from(cols.end).min(width);
        if cols.is_empty() {
            continue;
        }
        let start = buf.index_of(area.x, area.y + y);
        let targets = &mut buf.content[start + cols.start..start + cols.end];
        if y >= rows {
            for target in targets {
                target.reset();
                target.set_style(blank);
            }
            continue;
        }
        // The cell before the first is read too: is the first a wide character's second half?
        let read = cols.start.saturating_sub(1)..cols.end;
        term.row_into(y, clamp(read.start)..clamp(read.end), cells);
        for (x, target) in (cols.start..).zip(targets.iter_mut()) {
            let Some(cell) = cells.get(x) else {
                target.reset();
                target.set_style(blank);
                continue;
            };
            let mut style = match &last {
                Some((seen, style)) if same_look(seen, cell) => *style,
                _ => {
                    let style = palette.style(cell);
                    last = Some((cell.clone_look(), style));
                    style
                }
            };
            let col = u16::try_from(x).unwrap_or(u16::MAX);
            if let Some(over) = mark(y, col) {
                style = style.patch(over);
            }
            if cell.text.is_empty() {
                // The second column of a wide character is skipped when the buffer is drawn;
                // an empty cell anywhere else would shift the rest of the row on the screen.
                let after_wide = x > 0 && cells.get(x - 1).is_some_and(|c| c.wide);
                target.set_symbol(if after_wide { "" } else { " " });
            } else if cell.text.len() == 1 {
                let b = cell.text.as_bytes()[0];
                target.set_symbol(if b < 0x20 || b == 0x7f {
                    " "
                } else {
                    &cell.text
                });
            } else if cell.text.chars().any(char::is_control) {
                target.set_symbol(" ");
            } else {
                target.set_symbol(&cell.text);
            }
            target.set_style(style);
        }
        // A wide character cut by the right edge of the area would spill over the border.
        if cols.end == width && width < cells.len() && cells[width - 1].wide {
            targets_last(buf, area, y).set_symbol(" ");
        }
    }
}

fn clamp(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn targets_last(buf: &mut Buffer, area: Rect, y: u16) -> &mut ratatui::buffer::Cell {
    &mut buf[(area.x + area.width - 1, area.y + y)]
}

fn same_look(a: &TermCell, b: &TermCell) -> bool {
    a.fg == b.fg
        && a.bg == b.bg
        && a.bold == b.bold
        && a.dim == b.dim
        && a.italic == b.italic
        && a.underline == b.underline
        && a.inverse == b.inverse
        && a.strikeout == b.strikeout
}
