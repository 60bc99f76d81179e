//! What the outer terminal shows, kept as a buffer, and the two ways it changes: a whole
//! frame (everything drawn again, only the differences written) and a patch (some rows of
//! some panes drawn again, compared and written on their own: a shell's echo costs the rows
//! it changed, not the 10,000 cells of a full-screen frame).
//!
//! ratatui's `Terminal` has the first only: it keeps no buffer of what is shown that the app
//! may change outside a whole frame.

use std::io::{self, Write};

use crossterm::queue;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::backend::{Backend, ClearType, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect};

/// A band of full-width rows the terminal moves itself (a scroll region: DECSTBM, then line
/// feeds or reverse indexes, all VT100; not SU/SD, which the Linux console lacks), instead
/// of being sent them again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    /// The band's first row.
    pub top: u16,
    /// The row after its last.
    pub bottom: u16,
    /// Rows moved: up when positive (new rows come in at the bottom), down when negative.
    pub by: i16,
}

/// The outer terminal: what it shows and the writer to it.
pub struct Screen<W: Write> {
    backend: CrosstermBackend<W>,
    /// What the terminal shows.
    shown: Buffer,
    /// Where the next frame or patch is drawn; between two of them, stale.
    next: Buffer,
    /// Where the cursor was left visible, or `None` when hidden.
    cursor: Option<Position>,
    /// Cells a patch writes, as (x, y).
    changed: Vec<(u16, u16)>,
    /// Copies of a patched area as shown and as drawn, to compare.
    area_shown: Buffer,
    area_next: Buffer,
}

impl<W: Write> Screen<W> {
    /// A screen on `writer`, its size asked of the terminal at the first frame.
    pub fn new(writer: W) -> Screen<W> {
        Screen {
            backend: CrosstermBackend::new(writer),
            shown: Buffer::empty(Rect::default()),
            next: Buffer::empty(Rect::default()),
            cursor: None,
            changed: Vec::new(),
            area_shown: Buffer::empty(Rect::default()),
            area_next: Buffer::empty(Rect::default()),
        }
    }

    /// Draws a whole frame of `size` (the terminal's size, asked by the caller): `draw`
    /// fills the buffer and says where the cursor goes; what differs from the screen is
    /// written.
    pub fn frame(
        &mut self,
        size: Rect,
        draw: impl FnOnce(&mut Buffer) -> Option<Position>,
    ) -> io::Result<()> {
        queue!(self.backend, BeginSynchronizedUpdate)?;
        if self.shown.area != size {
            // Everything is written again: what the terminal kept after a resize is unknown.
            self.shown = Buffer::empty(size);
            self.next = Buffer::empty(size);
            self.backend.clear_region(ClearType::All)?;
            self.cursor = None;
            self.backend.hide_cursor()?;
        } else {
            self.next.reset();
        }
        let cursor = draw(&mut self.next);
        let updates = self.shown.diff(&self.next);
        self.backend.draw(updates.into_iter())?;
        std::mem::swap(&mut self.shown, &mut self.next);
        self.finish(cursor)
    }

    /// Draws again some rows only, after moving bands of them by `scrolls` (apart from each
    /// other):
    /// `draw` fills them in a buffer whose other cells are stale and not looked at, and
    /// returns the areas it drew and where the cursor goes, or `None` when a whole frame is
    /// needed instead (then nothing is written and `false` returned).
    pub fn patch(
        &mut self,
        scrolls: &[Scroll],
        draw: impl FnOnce(&mut Buffer) -> Option<(Vec<Rect>, Option<Position>)>,
    ) -> io::Result<bool> {
        if self.shown.area.is_empty() {
            return Ok(false);
        }
        let Some((areas, cursor)) = draw(&mut self.next) else {
            return Ok(false);
        };
        queue!(self.backend, BeginSynchronizedUpdate)?;
        for scroll in scrolls {
            self.scroll(*scroll)?;
        }
        self.changed.clear();
        for area in &areas {
            let area = area.intersection(self.shown.area);
            // ratatui's diff, wide characters and all, on copies of the area's cells.
            copy_area(&self.shown, area, &mut self.area_shown);
            copy_area(&self.next, area, &mut self.area_next);
            let changes = self.area_shown.diff_iter(&self.area_next);
            self.changed.extend(changes.map(|(x, y, _)| (x, y)));
        }
        let next = &self.next;
        let updates = self.changed.iter().map(|&(x, y)| (x, y, &next[(x, y)]));
        self.backend.draw(updates)?;
        for area in &areas {
            let area = area.intersection(self.shown.area);
            let width = usize::from(area.width);
            for y in area.top()..area.bottom() {
                let at = self.shown.index_of(area.x, y);
                self.shown.content[at..at + width].clone_from_slice(&next.content[at..at + width]);
            }
        }
        self.finish(cursor)?;
        Ok(true)
    }

    /// Moves a band of rows on the terminal and in what it shows; the rows it leaves are
    /// blank (in the default colours: attributes are reset first).
    fn scroll(&mut self, scroll: Scroll) -> io::Result<()> {
        let area = self.shown.area;
        let width = usize::from(area.width);
        let (top, bottom) = (scroll.top, scroll.bottom.min(area.height));
        let k = scroll.by.unsigned_abs();
        if k == 0 || top.saturating_add(k) >= bottom {
            return Ok(());
        }
        let rows = &mut self.shown.content[usize::from(top) * width..usize::from(bottom) * width];
        let moved = usize::from(k) * width;
        let left = if scroll.by > 0 {
            rows.rotate_left(moved);
            let at = rows.len() - moved;
            &mut rows[at..]
        } else {
            rows.rotate_right(moved);
            &mut rows[..moved]
        };
        left.iter_mut().for_each(Cell::reset);
        // The region, the cursor on its edge, one line feed (or reverse index) per row, and
        // the whole screen as the region again (which homes the cursor: drawing places it).
        let (edge, step) = if scroll.by > 0 {
            (bottom, "\n")
        } else {
            (top + 1, "\x1bM")
        };
        write!(
            self.backend,
            "\x1b[m\x1b[{};{}r\x1b[{edge};1H{}\x1b[r",
            top + 1,
            bottom,
            step.repeat(usize::from(k))
        )
    }

    /// Where the cursor was left, `None` when hidden.
    #[cfg(test)]
    pub fn cursor(&self) -> Option<Position> {
        self.cursor
    }

    /// Forgets what the terminal shows (it missed output): the next frame writes it all.
    pub fn forget(&mut self) {
        self.shown = Buffer::empty(Rect::default());
    }

    /// Places or hides the cursor and ends the update.
    fn finish(&mut self, cursor: Option<Position>) -> io::Result<()> {
        match cursor {
            Some(at) => {
                // Drawing moved the terminal's cursor: it is placed on every frame.
                self.backend.set_cursor_position(at)?;
                if self.cursor.is_none() {
                    self.backend.show_cursor()?;
                }
            }
            None if self.cursor.is_some() => self.backend.hide_cursor()?,
            None => {}
        }
        self.cursor = cursor;
        queue!(self.backend, EndSynchronizedUpdate)?;
        Backend::flush(&mut self.backend)
    }

    /// What the terminal shows, for tests.
    #[cfg(test)]
    pub fn shown(&self) -> &Buffer {
        &self.shown
    }
}

/// What a screen wrote, kept in memory until taken (for a client's socket).
#[derive(Clone, Default)]
pub struct Captured(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Captured {
    /// The bytes written since the last call.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Makes `to` a copy of `area` of `from`.
fn copy_area(from: &Buffer, area: Rect, to: &mut Buffer) {
    to.area = area;
    to.content.clear();
    for y in area.top()..area.bottom() {
        let at = from.index_of(area.x, y);
        to.content
            .extend_from_slice(&from.content[at..at + usize::from(area.width)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};

    struct Probe {
        screen: Screen<Captured>,
        out: Captured,
    }

    impl std::ops::Deref for Probe {
        type Target = Screen<Captured>;
        fn deref(&self) -> &Screen<Captured> {
            &self.screen
        }
    }

    impl std::ops::DerefMut for Probe {
        fn deref_mut(&mut self) -> &mut Screen<Captured> {
            &mut self.screen
        }
    }

    fn screen() -> Probe {
        let out = Captured::default();
        Probe {
            screen: Screen::new(out.clone()),
            out,
        }
    }

    fn written(s: &mut Probe) -> String {
        String::from_utf8(s.out.take()).unwrap()
    }

    /// Feeds what was written into an outer terminal model and returns its rows.
    fn outer_rows(bytes: &str, size: Rect) -> Vec<String> {
        let mut parser = vt100::Parser::new(size.height, size.width, 0);
        parser.process(bytes.as_bytes());
        parser.screen().rows(0, size.width).collect()
    }

    #[test]
    fn a_frame_writes_only_what_changed() {
        let mut s = screen();
        let size = Rect::new(0, 0, 20, 3);
        s.frame(size, |b| {
            b.set_string(0, 0, "hello world", Style::default());
            None
        })
        .unwrap();
        let first = written(&mut s);
        assert!(
            first.contains("hello") && first.contains("world"),
            "{first:?}"
        );
        s.frame(size, |b| {
            b.set_string(0, 0, "hello there", Style::default());
            Some(Position::new(3, 1))
        })
        .unwrap();
        let second = written(&mut s);
        assert!(
            second.contains("there") && !second.contains("hello"),
            "{second:?}"
        );
        let rows = outer_rows(&(first + &second), size);
        assert_eq!(rows[0].trim_end(), "hello there");
    }

    #[test]
    fn a_patch_compares_its_rows_only_and_keeps_the_rest() {
        let mut s = screen();
        let size = Rect::new(0, 0, 20, 4);
        s.frame(size, |b| {
            b.set_string(0, 0, "│status", Style::default());
            b.set_string(0, 1, "│$ ", Style::default());
            None
        })
        .unwrap();
        let mut all = written(&mut s);
        // The patch's buffer is stale outside its area; what is there must not be written.
        let drawn = s
            .patch(&[], |b| {
                b.set_string(1, 1, "$ ", Style::default());
                b.set_string(3, 1, "a", Style::default().fg(Color::Red));
                b.set_string(0, 3, "junk", Style::default());
                Some((vec![Rect::new(1, 1, 10, 1)], Some(Position::new(4, 1))))
            })
            .unwrap();
        assert!(drawn);
        assert_eq!(s.cursor(), Some(Position::new(4, 1)));
        let patch = written(&mut s);
        assert!(!patch.contains("junk") && !patch.contains('$'), "{patch:?}");
        all.push_str(&patch);
        let rows = outer_rows(&all, size);
        assert_eq!(rows[1].trim_end(), "│$ a");
        assert_eq!(rows[3].trim_end(), "");
        assert_eq!(s.shown()[(3, 1)].symbol(), "a");
        assert_eq!(s.shown()[(0, 3)].symbol(), " ");
        // The next frame starts from what is shown, patch included.
        s.frame(size, |b| {
            b.set_string(0, 0, "│status", Style::default());
            b.set_string(0, 1, "│$ ", Style::default());
            None
        })
        .unwrap();
        all.push_str(&written(&mut s));
        assert_eq!(outer_rows(&all, size)[1].trim_end(), "│$");
    }

    #[test]
    fn a_patch_rewrites_cells_a_wide_character_covered() {
        let mut s = screen();
        let size = Rect::new(0, 0, 10, 2);
        s.frame(size, |b| {
            b.set_string(0, 0, "日本", Style::default());
            None
        })
        .unwrap();
        let mut all = written(&mut s);
        s.patch(&[], |b| {
            for x in 0..10 {
                b[(x, 0)].reset();
            }
            b.set_string(0, 0, "ab", Style::default());
            Some((vec![Rect::new(0, 0, 10, 1)], None))
        })
        .unwrap();
        all.push_str(&written(&mut s));
        assert_eq!(outer_rows(&all, size)[0].trim_end(), "ab");
    }

    #[test]
    fn a_scroll_moves_a_band_on_the_terminal_and_only_new_rows_are_written() {
        let mut s = screen();
        let size = Rect::new(0, 0, 12, 6);
        let lines = ["┌ pane", "│ one", "│ two", "│ three", "│ four", "status"];
        s.frame(size, |b| {
            for (y, line) in lines.iter().enumerate() {
                b.set_string(0, y as u16, *line, Style::default());
            }
            None
        })
        .unwrap();
        let mut all = written(&mut s);
        // Rows 1..5 go up two: "three" and "four" move, "five" and "six" come in.
        let patched = s
            .patch(
                &[Scroll {
                    top: 1,
                    bottom: 5,
                    by: 2,
                }],
                |b| {
                    b.set_string(0, 3, format!("{:<12}", "│ five"), Style::default());
                    b.set_string(0, 4, format!("{:<12}", "│ six"), Style::default());
                    Some((vec![Rect::new(0, 3, 12, 2)], None))
                },
            )
            .unwrap();
        assert!(patched);
        let patch = written(&mut s);
        assert!(
            !patch.contains("three") && !patch.contains("four"),
            "moved rows are not sent again: {patch:?}"
        );
        all.push_str(&patch);
        let rows = outer_rows(&all, size);
        let trimmed: Vec<&str> = rows.iter().map(|r| r.trim_end()).collect();
        assert_eq!(
            trimmed,
            ["┌ pane", "│ three", "│ four", "│ five", "│ six", "status"]
        );
        // What the screen keeps agrees: the next frame writes nothing for the same text.
        s.frame(size, |b| {
            for (y, line) in trimmed.iter().enumerate() {
                b.set_string(0, y as u16, *line, Style::default());
            }
            None
        })
        .unwrap();
        assert!(!written(&mut s).contains("│"));
        // And down: "two" comes back at the top of the band.
        let patched = s
            .patch(
                &[Scroll {
                    top: 1,
                    bottom: 5,
                    by: -1,
                }],
                |b| {
                    // The buffer is stale outside what a patch draws: whole rows are drawn.
                    b.set_string(0, 1, format!("{:<12}", "│ two"), Style::default());
                    Some((vec![Rect::new(0, 1, 12, 1)], None))
                },
            )
            .unwrap();
        assert!(patched);
        all.push_str(&written(&mut s));
        let rows = outer_rows(&all, size);
        assert_eq!(rows[1].trim_end(), "│ two");
        assert_eq!(rows[4].trim_end(), "│ five");
        assert_eq!(rows[5].trim_end(), "status");
    }

    #[test]
    fn a_patch_that_needs_a_frame_writes_nothing() {
        let mut s = screen();
        assert!(
            !s.patch(&[], |_| Some((Vec::new(), None))).unwrap(),
            "no frame yet"
        );
        s.frame(Rect::new(0, 0, 10, 2), |_| None).unwrap();
        written(&mut s);
        assert!(!s.patch(&[], |_| None).unwrap());
        assert_eq!(written(&mut s), "");
    }

    #[test]
    fn a_resize_writes_everything_again() {
        let mut s = screen();
        s.frame(Rect::new(0, 0, 10, 2), |b| {
            b.set_string(0, 0, "one", Style::default());
            None
        })
        .unwrap();
        written(&mut s);
        s.frame(Rect::new(0, 0, 12, 2), |b| {
            b.set_string(0, 0, "one", Style::default());
            None
        })
        .unwrap();
        let again = written(&mut s);
        assert!(again.contains("one"), "{again:?}");
    }
}
