//! How the workspace's canvas becomes a client's cells: copied, in colours its terminal
//! shows, with the part of a larger terminal the workspace does not use marked.

use march_wire::TermCaps;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Style};

/// What a cell outside the workspace shows on a terminal larger than it.
pub(super) const UNUSED: &str = "·";

/// Copies `area` of `canvas` into `buf`, in colours the terminal shows.
pub(super) fn compose(canvas: &Buffer, area: Rect, buf: &mut Buffer, caps: &TermCaps) {
    let area = area.intersection(buf.area).intersection(canvas.area);
    // Neighbouring cells mostly share colours: each channel remembers its last mapping.
    let (mut fg, mut bg) = (Remembered::default(), Remembered::default());
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let cell = &canvas[(x, y)];
            let to = &mut buf[(x, y)];
            to.clone_from(cell);
            if !caps.truecolor {
                to.fg = fg.indexed(cell.fg);
                to.bg = bg.indexed(cell.bg);
            }
        }
    }
}

/// [`indexed`], remembering the last colour it mapped.
#[derive(Default)]
struct Remembered(Option<(Color, Color)>);

impl Remembered {
    fn indexed(&mut self, color: Color) -> Color {
        match self.0 {
            Some((from, to)) if from == color => to,
            _ => {
                let to = indexed(color);
                self.0 = Some((color, to));
                to
            }
        }
    }
}

/// Marks the cells of `buf` outside the workspace's `used` area.
pub(super) fn mark_unused(used: Rect, buf: &mut Buffer) {
    let area = buf.area;
    if used.contains(Position::new(
        area.right().saturating_sub(1),
        area.bottom().saturating_sub(1),
    )) {
        return;
    }
    let style = Style::default().fg(Color::DarkGray);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if !used.contains(Position::new(x, y)) {
                let cell: &mut Cell = &mut buf[(x, y)];
                cell.set_symbol(UNUSED).set_style(style);
            }
        }
    }
}

/// `color` for a terminal without 24-bit colour: the nearest of the 256 indexed ones.
pub(super) fn indexed(color: Color) -> Color {
    let Color::Rgb(r, g, b) = color else {
        return color;
    };
    // The 6×6×6 cube (16–231) and the 24 greys (232–255), as xterm defines them.
    let level = |v: u8| -> (u8, u8) {
        let steps = [0u8, 95, 135, 175, 215, 255];
        let (i, s) = steps
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| (i32::from(**s) - i32::from(v)).abs())
            .map_or((0, 0), |(i, s)| (i, *s));
        (u8::try_from(i).unwrap_or(0), s)
    };
    let ((ri, rv), (gi, gv), (bi, bv)) = (level(r), level(g), level(b));
    let distance = |a: (u8, u8, u8)| -> i32 {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a.0, r) + d(a.1, g) + d(a.2, b)
    };
    let cube = 16 + 36 * ri + 6 * gi + bi;
    let average = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey_index = u8::try_from((average.saturating_sub(3) / 10).min(23)).unwrap_or(23);
    let grey = 8 + 10 * grey_index;
    if distance((grey, grey, grey)) < distance((rv, gv, bv)) {
        Color::Indexed(232 + grey_index)
    } else {
        Color::Indexed(cube)
    }
}
