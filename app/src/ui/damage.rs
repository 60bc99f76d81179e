//! What changed between two drawings of the workspace: the rows that differ, and, when a
//! band of full-width rows moved up or down together (a pane's text scrolling as an answer
//! streams), that move, so a terminal can make it itself with a scroll region and be sent
//! only the rows that are new.

use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;

use super::screen::Scroll;

/// Rows a move must save from being drawn, at least, to be worth a scroll region.
const MOVE_WORTH: usize = 2;
/// Places looked at for where a row moved (a row repeated many times, like a blank one,
/// matches at each).
const CANDIDATES: usize = 8;

/// What differs between two drawings of the same size.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Damage {
    /// The rows that differ, as full-width areas.
    pub changed: Vec<Rect>,
    /// Bands that moved (apart from each other: a pane's text each, for panes stacked),
    /// and the rows that differ once they have.
    pub moved: Option<(Vec<Scroll>, Vec<Rect>)>,
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
        // Bands that went up, top to bottom; else one that went down (text scrolled back).
        let mut scrolls = Vec::new();
        let mut from = first;
        while let Some(at) = (from..rows.height()).find(|y| changed[*y]) {
            match rows.moved_up(at, &changed) {
                Some(scroll) => {
                    from = usize::from(scroll.bottom);
                    scrolls.push(scroll);
                }
                None => from = at + 1,
            }
        }
        if scrolls.is_empty() {
            scrolls.extend(rows.moved_down(last, &changed));
        }
        let moved = (!scrolls.is_empty()).then(|| {
            let mut dirty = changed.clone();
            for scroll in &scrolls {
                Rows::after(*scroll, &mut dirty);
            }
            (scrolls, areas(&dirty, new.area))
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
        !same_row(Self::row(self.new, y), Self::row(self.old, from))
    }

    /// The move up that puts old rows at new row `at` and below and saves the most rows to
    /// draw (at least [`MOVE_WORTH`]), the shortest of equals. A band moved by `k` has `k`
    /// rows to draw, and may make rows that had not changed be drawn: a long move can keep
    /// rows by coincidence (stacked panes showing the same text) and cost more than it saves.
    fn moved_up(&self, at: usize, changed: &[bool]) -> Option<Scroll> {
        let height = self.height();
        let candidates = (1..height - at).filter(|k| !self.differ(at, at + k));
        // No move by k saves more than the rows below that changed, less k.
        let most = count(&changed[at..]);
        let mut best: Option<(usize, Scroll)> = None;
        for k in candidates.take(CANDIDATES) {
            if best.is_some_and(|(saves, _)| saves + k >= most) {
                break;
            }
            let mut end = at;
            while end + k < height && !self.differ(end, end + k) {
                end += 1;
            }
            let band = scroll(at, end + k, k, true);
            best = better(best, band, changed);
        }
        best.map(|(_, band)| band)
    }

    /// The move down that puts old rows at new row `at` and above, chosen as
    /// [`Self::moved_up`] chooses.
    fn moved_down(&self, at: usize, changed: &[bool]) -> Option<Scroll> {
        let candidates = (1..=at).filter(|k| !self.differ(at, at - k));
        let most = count(&changed[..=at]);
        let mut best: Option<(usize, Scroll)> = None;
        for k in candidates.take(CANDIDATES) {
            if best.is_some_and(|(saves, _)| saves + k >= most) {
                break;
            }
            // Rows start..=at came from k rows above.
            let mut start = at;
            while start > k && !self.differ(start - 1, start - 1 - k) {
                start -= 1;
            }
            let band = scroll(start - k, at + 1, k, false);
            best = better(best, band, changed);
        }
        best.map(|(_, band)| band)
    }

    /// Which rows differ once `scroll` (as [`Self::moved_up`] or [`Self::moved_down`] found
    /// it) has moved the old drawing, in `dirty` (which holds the rows that differ without
    /// it): in the band, the rows it kept are the same, and those it leaves blank are drawn.
    fn after(scroll: Scroll, dirty: &mut [bool]) {
        let (top, bottom) = (usize::from(scroll.top), usize::from(scroll.bottom));
        let k = usize::from(scroll.by.unsigned_abs());
        for (y, d) in dirty.iter_mut().enumerate().take(bottom).skip(top) {
            *d = if scroll.by > 0 {
                y + k >= bottom
            } else {
                y < top + k
            };
        }
    }
}

/// Whether two rows show the same: cell by cell, the cheap fields first and one-byte
/// symbols without a call to `memcmp` (most of what a frame's comparison costs otherwise).
fn same_row(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_cell(x, y))
}

fn same_cell(x: &Cell, y: &Cell) -> bool {
    let symbols = match (x.symbol().as_bytes(), y.symbol().as_bytes()) {
        ([p], [q]) => p == q,
        (p, q) => p == q,
    };
    x.fg == y.fg
        && x.bg == y.bg
        && x.modifier == y.modifier
        && symbols
        && x.underline_color == y.underline_color
        && x.diff_option == y.diff_option
}

/// How many fewer rows are drawn with `band` moved than without: the rows of the band that
/// changed, less the `k` it leaves to draw.
fn saved(band: Scroll, changed: &[bool]) -> usize {
    let (top, bottom) = (usize::from(band.top), usize::from(band.bottom));
    let redrawn = changed.get(top..bottom).map_or(0, count);
    redrawn.saturating_sub(usize::from(band.by.unsigned_abs()))
}

/// The rows marked.
fn count(rows: &[bool]) -> usize {
    rows.iter().filter(|d| **d).count()
}

/// `band` if it saves more than `best` (and at least [`MOVE_WORTH`] rows), else `best`.
fn better(
    best: Option<(usize, Scroll)>,
    band: Scroll,
    changed: &[bool],
) -> Option<(usize, Scroll)> {
    let saves = saved(band, changed);
    match best {
        Some((most, _)) if most >= saves => best,
        _ if saves >= MOVE_WORTH => Some((saves, band)),
        _ => best,
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
        let (scrolls, dirty) = damage.moved.expect("a move");
        assert_eq!(
            scrolls,
            [Scroll {
                top: 1,
                bottom: 5,
                by: 2
            }]
        );
        assert_eq!(rows(&dirty), vec![3, 4, 6]);
    }

    #[test]
    fn text_going_down_is_a_move_too() {
        let old = drawing(&["title", "three", "four", "five", "six", "> prompt"]);
        let new = drawing(&["title", "two", "three", "four", "five", "> prompt"]);
        let (scrolls, dirty) = Damage::between(&old, &new).moved.expect("a move");
        assert_eq!(
            scrolls,
            [Scroll {
                top: 1,
                bottom: 5,
                by: -1
            }]
        );
        assert_eq!(rows(&dirty), vec![1]);
    }

    #[test]
    fn panes_stacked_move_each_on_their_own() {
        let old = drawing(&[
            "┌ one", "a1", "a2", "a3", "> x", "┌ two", "b1", "b2", "b3", "> y",
        ]);
        let new = drawing(&[
            "┌ one", "a2", "a3", "a4", "> x", "┌ two", "b2", "b3", "b4", "> y",
        ]);
        let (scrolls, dirty) = Damage::between(&old, &new).moved.expect("moves");
        assert_eq!(
            scrolls,
            [
                Scroll {
                    top: 1,
                    bottom: 4,
                    by: 1
                },
                Scroll {
                    top: 6,
                    bottom: 9,
                    by: 1
                }
            ]
        );
        assert_eq!(rows(&dirty), vec![3, 8]);
    }

    #[test]
    fn panes_showing_the_same_text_move_each_and_not_into_each_other() {
        // Pane one's new rows are also pane two's old rows moved up 5: that move keeps more
        // rows, but each pane moving by one leaves less to draw.
        let old = drawing(&["┌", "a", "b", "c", "┌", "a", "b", "c", "┌", "a"]);
        let new = drawing(&["┌", "b", "c", "d", "┌", "b", "c", "d", "┌", "a"]);
        let (scrolls, dirty) = Damage::between(&old, &new).moved.expect("moves");
        assert_eq!(scrolls.len(), 2, "{scrolls:?}");
        assert!(scrolls.iter().all(|s| s.by == 1));
        assert_eq!(rows(&dirty), vec![3, 7]);
    }

    #[test]
    fn a_move_that_keeps_rows_by_coincidence_but_draws_more_is_not_made() {
        // Pane two's new last rows are pane one's old rows 1–2, seven rows up: moving them
        // down keeps two rows and leaves seven to draw, where two changed.
        let old = drawing(&["┌", "a", "b", "c", "·", "┌", "x", "y", "z", "·"]);
        let new = drawing(&["┌", "a", "b", "c", "·", "┌", "x", "y", "a", "b"]);
        let damage = Damage::between(&old, &new);
        assert_eq!(damage.moved, None);
        assert_eq!(rows(&damage.changed), vec![8, 9]);
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
        // The first changed row is blank: it matches the old blank row 1 first, which keeps
        // one row only; the move from row 2 keeps five.
        let old = drawing(&["x", "", "", "p", "q", "r", "s"]);
        let new = drawing(&["", "p", "q", "r", "s", "t", "u"]);
        let (scrolls, dirty) = Damage::between(&old, &new).moved.expect("a move");
        assert_eq!(
            scrolls,
            [Scroll {
                top: 0,
                bottom: 7,
                by: 2
            }]
        );
        assert_eq!(rows(&dirty), vec![5, 6]);
    }

    #[test]
    fn a_change_of_colour_or_attribute_alone_is_a_change() {
        let old = drawing(&["title", "same text"]);
        for style in [
            Style::default().fg(ratatui::style::Color::Indexed(3)),
            Style::default().bg(ratatui::style::Color::Indexed(3)),
            Style::default().add_modifier(ratatui::style::Modifier::BOLD),
            Style::default().underline_color(ratatui::style::Color::Indexed(3)),
        ] {
            let mut new = old.clone();
            new.set_style(Rect::new(2, 1, 1, 1), style);
            assert_eq!(rows(&Damage::between(&old, &new).changed), vec![1]);
        }
        // Wide symbols are compared whole.
        let mut wide = old.clone();
        wide.set_string(0, 1, "日本", Style::default());
        let mut other = old.clone();
        other.set_string(0, 1, "日木", Style::default());
        assert_eq!(rows(&Damage::between(&wide, &other).changed), vec![1]);
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
