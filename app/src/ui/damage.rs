//! What changed between two drawings of the workspace: the rows that differ, and, when a
//! band of full-width rows moved up or down together (a pane's text scrolling as an answer
//! streams), that move, so a terminal can make it itself with a scroll region and be sent
//! only the rows that are new.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;

use super::screen::Scroll;

/// Rows a move must keep, at least, to be worth a scroll region.
const MOVE_WORTH: usize = 2;
/// Places looked at for where a row moved (a row repeated many times, like a blank one,
/// matches at each).
const CANDIDATES: usize = 8;

/// What differs between two drawings of the same size.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Damage {
    /// The rows that differ, as full-width areas.
    pub changed: Vec<Rect>,
    /// A band that moved, and the rows that differ once it has.
    pub moved: Option<(Scroll, Vec<Rect>)>,
}

impl Damage {
    /// What differs from `old` to `new` (both of one size).
    pub(super) fn between(old: &Buffer, new: &Buffer) -> Damage {
        if old.area != new.area || new.area.is_empty() {
            return Damage {
                changed: vec![new.area],
                moved: None,
            };
        }
        let rows = Rows { old, new };
        let changed: Vec<bool> = (0..rows.height()).map(|y| rows.differ(y, y)).collect();
        let (Some(first), Some(last)) = (
            changed.iter().position(|c| *c),
            changed.iter().rposition(|c| *c),
        ) else {
            return Damage::default();
        };
        let up = rows.moved_up(first);
        let down = rows.moved_down(last);
        let best = match (up, down) {
            (Some(u), Some(d)) if d.1 > u.1 => Some(d.0),
            (Some(u), _) => Some(u.0),
            (None, d) => d.map(|d| d.0),
        };
        let moved = best.map(|scroll| {
            let mut dirty = changed.clone();
            rows.after(scroll, &mut dirty);
            (scroll, areas(&dirty, new.area))
        });
        Damage {
            changed: areas(&changed, new.area),
            moved,
        }
    }
}

/// The rows of two drawings, compared.
struct Rows<'a> {
    old: &'a Buffer,
    new: &'a Buffer,
}

impl Rows<'_> {
    fn height(&self) -> usize {
        usize::from(self.new.area.height)
    }

    fn row(buf: &Buffer, y: usize) -> &[Cell] {
        let width = usize::from(buf.area.width);
        &buf.content[y * width..(y + 1) * width]
    }

    /// Whether new row `y` differs from old row `from`.
    fn differ(&self, y: usize, from: usize) -> bool {
        Self::row(self.new, y) != Self::row(self.old, from)
    }

    /// The best move up that puts old rows at new row `at` and below: the scroll and the
    /// rows it keeps.
    fn moved_up(&self, at: usize) -> Option<(Scroll, usize)> {
        let height = self.height();
        let mut best: Option<(Scroll, usize)> = None;
        let candidates = (1..height - at).filter(|k| !self.differ(at, at + k));
        for k in candidates.take(CANDIDATES) {
            let mut end = at;
            while end + k < height && !self.differ(end, end + k) {
                end += 1;
            }
            let kept = end - at;
            if kept >= MOVE_WORTH && best.is_none_or(|(_, b)| kept > b) {
                best = Some((scroll(at, end + k, k, true), kept));
            }
        }
        best
    }

    /// The best move down that puts old rows at new row `at` and above.
    fn moved_down(&self, at: usize) -> Option<(Scroll, usize)> {
        let mut best: Option<(Scroll, usize)> = None;
        let candidates = (1..=at).filter(|k| !self.differ(at, at - k));
        for k in candidates.take(CANDIDATES) {
            // Rows start..=at came from k rows above.
            let mut start = at;
            while start > k && !self.differ(start - 1, start - 1 - k) {
                start -= 1;
            }
            let kept = at + 1 - start;
            if kept >= MOVE_WORTH && best.is_none_or(|(_, b)| kept > b) {
                best = Some((scroll(start - k, at + 1, k, false), kept));
            }
        }
        best
    }

    /// Which rows differ once `scroll` has moved the old drawing, in `dirty` (which holds
    /// the rows that differ without it).
    fn after(&self, scroll: Scroll, dirty: &mut [bool]) {
        let (top, bottom) = (usize::from(scroll.top), usize::from(scroll.bottom));
        let k = usize::from(scroll.by.unsigned_abs());
        for (y, d) in dirty.iter_mut().enumerate().take(bottom).skip(top) {
            *d = if scroll.by > 0 {
                // The rows the move leaves blank at the bottom are drawn.
                y + k >= bottom || self.differ(y, y + k)
            } else {
                y < top + k || self.differ(y, y - k)
            };
        }
    }
}

fn scroll(top: usize, bottom: usize, by: usize, up: bool) -> Scroll {
    let to16 = |v: usize| u16::try_from(v).unwrap_or(u16::MAX);
    let by = i16::try_from(by).unwrap_or(i16::MAX);
    Scroll {
        top: to16(top),
        bottom: to16(bottom),
        by: if up { by } else { -by },
    }
}

/// The rows marked in `dirty`, as full-width areas of `area`, neighbours joined.
fn areas(dirty: &[bool], area: Rect) -> Vec<Rect> {
    let mut out: Vec<Rect> = Vec::new();
    for (y, _) in dirty.iter().enumerate().filter(|(_, d)| **d) {
        let y = area.y + u16::try_from(y).unwrap_or(u16::MAX);
        match out.last_mut() {
            Some(last) if last.bottom() == y => last.height += 1,
            _ => out.push(Rect::new(area.x, y, area.width, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    /// A drawing of `rows`, 10 wide.
    fn drawing(rows: &[&str]) -> Buffer {
        let height = u16::try_from(rows.len()).unwrap();
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, height));
        for (y, text) in rows.iter().enumerate() {
            buf.set_string(0, u16::try_from(y).unwrap(), text, Style::default());
        }
        buf
    }

    fn rows(areas: &[Rect]) -> Vec<u16> {
        areas.iter().flat_map(|a| a.top()..a.bottom()).collect()
    }

    #[test]
    fn nothing_changed_is_no_damage() {
        let a = drawing(&["title", "one", "two"]);
        assert_eq!(Damage::between(&a, &a.clone()), Damage::default());
    }

    #[test]
    fn text_going_up_is_a_move_and_the_new_rows() {
        let old = drawing(&[
            "title", "one", "two", "three", "four", "> prompt", "status 1",
        ]);
        let new = drawing(&[
            "title", "three", "four", "five", "six", "> prompt", "status 2",
        ]);
        let damage = Damage::between(&old, &new);
        assert_eq!(rows(&damage.changed), vec![1, 2, 3, 4, 6]);
        let (scroll, dirty) = damage.moved.expect("a move");
        assert_eq!(
            scroll,
            Scroll {
                top: 1,
                bottom: 5,
                by: 2
            }
        );
        assert_eq!(rows(&dirty), vec![3, 4, 6]);
    }

    #[test]
    fn text_going_down_is_a_move_too() {
        let old = drawing(&["title", "three", "four", "five", "six", "> prompt"]);
        let new = drawing(&["title", "two", "three", "four", "five", "> prompt"]);
        let (scroll, dirty) = Damage::between(&old, &new).moved.expect("a move");
        assert_eq!(
            scroll,
            Scroll {
                top: 1,
                bottom: 5,
                by: -1
            }
        );
        assert_eq!(rows(&dirty), vec![1]);
    }

    #[test]
    fn rows_that_only_change_are_no_move() {
        let old = drawing(&["title", "one", "two", "three"]);
        let new = drawing(&["title", "uno", "dos", "tres"]);
        let damage = Damage::between(&old, &new);
        assert_eq!(damage.moved, None);
        assert_eq!(damage.changed, vec![Rect::new(0, 1, 10, 3)]);
    }

    #[test]
    fn blank_rows_do_not_hide_the_real_move() {
        // The first changed row is blank: it matches the old blank row 1 first, the move
        // that keeps most rows is from row 2.
        let old = drawing(&["x", "", "", "p", "q", "r", "s"]);
        let new = drawing(&["", "p", "q", "r", "s", "t", "u"]);
        let (scroll, dirty) = Damage::between(&old, &new).moved.expect("a move");
        assert_eq!(
            scroll,
            Scroll {
                top: 0,
                bottom: 7,
                by: 2
            }
        );
        assert_eq!(rows(&dirty), vec![5, 6]);
    }

    #[test]
    fn another_size_is_all_of_it() {
        let old = drawing(&["a", "b"]);
        let new = drawing(&["a", "b", "c"]);
        let damage = Damage::between(&old, &new);
        assert_eq!(damage.changed, vec![new.area]);
        assert_eq!(damage.moved, None);
    }
}
