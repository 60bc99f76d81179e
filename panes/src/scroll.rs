//! One way to ask any pane to scroll, with one sign convention for every kind.

/// A scroll of a pane's content. Counts are positive going down, toward the end (the
/// newest output, the last file, the live screen), and negative going up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    /// This many lines.
    Lines(i32),
    /// This many pages (a page is the view's height less one line).
    Pages(i32),
    /// The start.
    Top,
    /// The end (following new output again, where the pane follows it).
    Bottom,
}

impl Scroll {
    /// What a turn of the mouse wheel scrolls: three lines, up or down.
    pub fn wheel(up: bool) -> Scroll {
        Scroll::Lines(if up { -WHEEL_LINES } else { WHEEL_LINES })
    }

    /// The lines this scrolls by, for a view `page` lines high (`Top` and `Bottom` as far
    /// as an `i32` goes).
    pub fn lines(self, page: usize) -> i64 {
        let page = i64::try_from(page.saturating_sub(1).max(1)).unwrap_or(i64::MAX);
        match self {
            Scroll::Lines(n) => i64::from(n),
            Scroll::Pages(n) => i64::from(n).saturating_mul(page),
            Scroll::Top => i64::from(i32::MIN),
            Scroll::Bottom => i64::from(i32::MAX),
        }
    }
}

/// Lines one wheel notch scrolls.
pub const WHEEL_LINES: i32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_the_height_less_a_line_and_signs_go_down() {
        assert_eq!(Scroll::Pages(1).lines(10), 9);
        assert_eq!(Scroll::Pages(-2).lines(10), -18);
        assert_eq!(Scroll::Pages(1).lines(0), 1, "an unlaid view still moves");
        assert_eq!(Scroll::wheel(true), Scroll::Lines(-3));
        assert!(Scroll::Top.lines(10) < -1_000_000 && Scroll::Bottom.lines(10) > 1_000_000);
    }
}
