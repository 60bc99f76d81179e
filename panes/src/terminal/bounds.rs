//! How far each screen line may hold something, followed through plain output, so that a
//! line leaving the screen is read up to there and not across its whole width.
//!
//! A `Term` row is as wide as the screen, 24 bytes a cell, and a line that scrolls off is read
//! into the history: finding where its text ends meant reading every cell of it. Rows come
//! back from a ring of a thousand spare rows, so those cells come from memory, not cache:
//! for short lines (`seq`, logs) that read was half of all the work of parsing them.
//!
//! Plain output (printable text, CR, LF, backspace, tab) is simple enough to follow here:
//! each line's bound is the furthest column the cursor reached on it since it came onto the
//! screen blank. Anything else (an escape sequence, another control, a line reaching the last
//! column, a scroll region) forgets every bound, and lines without one are read whole. A
//! piece whose lines did not scroll as followed (a string sequence that swallowed them)
//! forgets them too, so a bound may be too large but never too small.

use std::collections::VecDeque;

/// A line whose bound is not known: read it whole.
pub(super) const UNKNOWN: u16 = u16::MAX;

/// Where the cursor and the screen stand before a piece is fed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Start {
    /// The cursor's line on the screen.
    pub row: usize,
    /// The cursor's column.
    pub col: usize,
    /// Screen lines.
    pub rows: usize,
    /// Screen columns.
    pub cols: usize,
    /// Plain output may be followed from here: the primary screen, no insert mode, no wrap
    /// pending, and the cells a new line is cleared to are blank.
    pub plain_modes: bool,
}

/// The bounds of the screen's lines, and of those that scrolled off, oldest first.
#[derive(Debug, Default)]
pub(super) struct LineBounds {
    /// For each screen line, the column from which on it is blank.
    lines: VecDeque<u16>,
    /// The bounds of the lines that scrolled off since they were last taken.
    scrolled: VecDeque<u16>,
    /// A scroll region may be set (lines then scroll within it, not as followed here).
    region: bool,
    /// Tab stops other than every eighth column may be set.
    custom_tabs: bool,
    /// Nothing is followed: every line is read whole (the reference in tests).
    #[cfg(test)]
    pub(super) off: bool,
    /// Lines that left the screen with a known bound.
    #[cfg(test)]
    pub(super) known: usize,
}

impl LineBounds {
    /// Forgets every bound (after a resize, say): every line is read whole.
    pub(super) fn forget(&mut self) {
        self.lines.clear();
        self.scrolled.clear();
    }

    /// Follows `piece`, about to be fed from `start`.
    pub(super) fn follow(&mut self, piece: &[u8], start: Start) {
        #[cfg(test)]
        if self.off {
            self.forget();
            return;
        }
        if !start.plain_modes || self.region || !self.walk(piece, start) {
            self.note_settings(piece);
            self.forget();
        }
    }

    /// Moves the cursor through `piece` as the terminal will; `false` when it is not plain.
    fn walk(&mut self, piece: &[u8], start: Start) -> bool {
        let Start {
            mut row,
            mut col,
            rows,
            cols,
            ..
        } = start;
        if row >= rows || col >= cols {
            return false;
        }
        if self.lines.len() != rows {
            self.lines = std::iter::repeat_n(UNKNOWN, rows).collect();
        }
        let mut bytes = piece.iter().copied().peekable();
        while let Some(b) = bytes.next() {
            // A character's width, at most: 2 for one that is not ASCII.
            let width = match b {
                0x20..=0x7e => 1,
                b'\r' => {
                    col = 0;
                    continue;
                }
                b'\n' => {
                    if row + 1 == rows {
                        // The top line scrolls off; the new bottom line is blank.
                        let top = self.lines.pop_front().unwrap_or(UNKNOWN);
                        self.scrolled.push_back(top);
                        self.lines.push_back(0);
                    } else {
                        row += 1;
                    }
                    continue;
                }
                0x08 => {
                    col = col.saturating_sub(1);
                    continue;
                }
                b'\t' if self.custom_tabs => return false,
                // A tab marks the cell it starts from and stops at the next eighth column.
                b'\t' => {
                    let bound = &mut self.lines[row];
                    if *bound != UNKNOWN {
                        *bound = (*bound).max(u16::try_from(col + 1).unwrap_or(UNKNOWN));
                    }
                    col = ((col / 8 + 1) * 8).min(cols - 1);
                    continue;
                }
                0x07 => continue,
                // A C1 control in UTF-8 (U+0080–U+009F) may act as one.
                0xc2 if bytes.peek().is_some_and(|n| (0x80..=0x9f).contains(n)) => return false,
                0x80..=0xbf => continue,
                0xc0..=0xff => 2,
                _ => return false,
            };
            if col + width >= cols {
                // The last column: the line may wrap, which is not followed.
                return false;
            }
            col += width;
            let bound = &mut self.lines[row];
            if *bound != UNKNOWN {
                *bound = (*bound).max(u16::try_from(col).unwrap_or(UNKNOWN));
            }
        }
        true
    }

    /// Notes whether `piece` sets a scroll region (`CSI top;bottom r`) or clears it (`CSI r`,
    /// a full reset), and whether it sets tab stops (`ESC H`, `CSI g`; a full reset puts
    /// back every eighth). The last such sequence counts.
    fn note_settings(&mut self, piece: &[u8]) {
        for at in memchr::memchr_iter(0x1b, piece) {
            match piece.get(at + 1) {
                Some(b'c') => {
                    self.region = false;
                    self.custom_tabs = false;
                }
                Some(b'H') => self.custom_tabs = true,
                Some(b'[') => {
                    let params = &piece[at + 2..];
                    let len = params
                        .iter()
                        .position(|b| !matches!(b, b'0'..=b'9' | b';'))
                        .unwrap_or(params.len());
                    match params.get(len) {
                        Some(b'r') => self.region = len > 0,
                        Some(b'g') => self.custom_tabs = true,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// The terminal resized: it clears any scroll region.
    pub(super) fn resized(&mut self) {
        self.region = false;
        self.forget();
    }

    /// The bounds of the `count` lines that scrolled off, oldest first, when they were
    /// followed; otherwise every bound is forgotten and `None` says to read them whole.
    pub(super) fn take_scrolled(
        &mut self,
        count: usize,
    ) -> Option<std::collections::vec_deque::Drain<'_, u16>> {
        if self.scrolled.len() != count {
            self.forget();
            return None;
        }
        #[cfg(test)]
        {
            self.known += self.scrolled.iter().filter(|b| **b != UNKNOWN).count();
        }
        Some(self.scrolled.drain(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::{AlacrittyEmulator, TerminalEmulator};

    /// Output of every kind the bounds must get right or give up on: plain lines, CR and
    /// LF alone, tabs, backspaces, wide text, lines to the last column, colours, coloured
    /// erases, cursor moves, scroll regions, insert mode, the other screen, scrolls, resets.
    fn token(next: &mut impl FnMut() -> u32) -> Vec<u8> {
        const WORDS: [&str; 6] = ["a", "seq", "12345", "hello world", "x y z", "-"];
        let n = next();
        let s: String = match n % 40 {
            0..10 => WORDS[(n / 40) as usize % WORDS.len()].to_string(),
            10..16 => "\r\n".to_string(),
            16 => "\n".to_string(),
            17 => "\r".to_string(),
            18 => "\t".to_string(),
            19 => "\x08".to_string(),
            20 => "\u{4e16}\u{754c}".to_string(),
            21 => "e\u{301}".to_string(),
            22 => "#".repeat((n / 40) as usize % 30),
            23 => format!("\x1b[{}m", 40 + (n / 40) % 8),
            24 => "\x1b[0m".to_string(),
            25 => "\x1b[K".to_string(),
            26 => format!("\x1b[{};{}H", 1 + (n / 40) % 6, 1 + (n / 400) % 20),
            27 => format!("\x1b[{};{}r", 1 + (n / 40) % 3, 3 + (n / 400) % 3),
            28 => "\x1b[r".to_string(),
            29 => "\x1b[4h".to_string(),
            30 => "\x1b[4l".to_string(),
            31 => "\x1b[?1049h".to_string(),
            32 => "\x1b[?1049l".to_string(),
            33 => format!("\x1b[{}S", 1 + (n / 40) % 4),
            // A full reset clears the history too: seldom.
            34 if (n / 40).is_multiple_of(10) => "\x1bc".to_string(),
            34 => "\x1b[m".to_string(),
            35 => "\x1b[7m".to_string(),
            36 => "\x1b]0;title".to_string(),
            37 => "\x07".to_string(),
            38 => "\u{85}".to_string(),
            _ => "\x1b[3;5H\x1b[2K".to_string(),
        };
        s.into_bytes()
    }

    #[test]
    fn the_history_is_the_same_with_bounds_as_read_whole() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 16) as u32
        };
        let (rows, cols) = (6u16, 20u16);
        let (mut compared, mut known) = (0, 0);
        for round in 0..60 {
            let mut fast = AlacrittyEmulator::new(rows, cols, 100_000);
            let mut whole = AlacrittyEmulator::new(rows, cols, 100_000).without_line_bounds();
            // Some rounds are mostly plain, as a flood of short lines is.
            let plain_only = round % 3 == 0;
            let mut stream = Vec::new();
            while stream.len() < 20_000 {
                // A line of a few tokens, mostly ended by CR LF.
                for _ in 0..1 + next() % 4 {
                    let t = token(&mut next);
                    // Mostly plain: now and then a colour, ended at once, or a line to
                    // the last column (which wraps, and is given up on).
                    let colour = t.starts_with(b"\x1b[4") && t.ends_with(b"m");
                    let other = t.contains(&0x1b) || t.starts_with(&[0xc2, 0x85]);
                    let long = t.len() > 12 && t.iter().all(|b| *b == b'#');
                    if plain_only && ((colour || long) && next() % 50 != 0 || other && !colour) {
                        continue;
                    }
                    stream.extend_from_slice(&t);
                    if plain_only && colour {
                        stream.extend_from_slice(b"\x1b[0m");
                    }
                }
                if next() % 4 != 0 {
                    stream.extend_from_slice(b"\r\n");
                }
            }
            let mut at = 0;
            while at < stream.len() {
                let len = (1 + next() as usize % 3000).min(stream.len() - at);
                fast.feed(&stream[at..at + len]);
                whole.feed(&stream[at..at + len]);
                at += len;
                if next() % 50 == 0 {
                    let (r, c) = (4 + next() as u16 % 4, 12 + next() as u16 % 12);
                    fast.resize(r, c);
                    whole.resize(r, c);
                }
            }
            assert_eq!(
                fast.scrollback_lines(),
                whole.scrollback_lines(),
                "round {round}"
            );
            compared += fast.scrollback_lines();
            known += fast.lines_read_to_a_bound();
            for line in 0..fast.scrollback_lines() {
                assert_eq!(
                    fast.history_cells(line),
                    whole.history_cells(line),
                    "round {round}, line {line}: {:?}",
                    whole.line_text(line)
                );
                assert_eq!(fast.line_wrapped(line), whole.line_wrapped(line));
            }
        }
        assert!(compared > 10_000, "only {compared} lines compared");
        // The bounds were used, not given up on throughout.
        assert!(
            known > compared / 20,
            "{known} of {compared} lines read to a bound"
        );
    }

    fn start(row: usize, col: usize) -> Start {
        Start {
            row,
            col,
            rows: 3,
            cols: 10,
            plain_modes: true,
        }
    }

    #[test]
    fn lines_that_scroll_off_keep_how_far_they_were_written() {
        let mut bounds = LineBounds::default();
        // The screen's lines were written before anything was followed: unknown.
        bounds.follow(b"12\r\n1234\r\nab\r\nabc\r\n", start(2, 0));
        let scrolled: Vec<u16> = bounds.take_scrolled(4).unwrap().collect();
        assert_eq!(scrolled, [UNKNOWN, UNKNOWN, UNKNOWN, 4]);
        // Now the screen holds "ab", "abc" and an empty line; a backspace moves back.
        bounds.follow(b"x\x08\x08yz\r\n", start(2, 0));
        let scrolled: Vec<u16> = bounds.take_scrolled(1).unwrap().collect();
        assert_eq!(scrolled, [2]);
        assert_eq!(bounds.lines, [3, 2, 0]);
        // A count other than followed forgets everything.
        assert!(bounds.take_scrolled(1).is_none());
        bounds.follow(b"\r\n", start(2, 0));
        assert_eq!(
            bounds.take_scrolled(1).unwrap().collect::<Vec<_>>(),
            [UNKNOWN]
        );
    }

    #[test]
    fn anything_not_plain_forgets_every_bound() {
        let cases: [&[u8]; 5] = [
            b"ab\x1b[31mc\r\n",
            b"ab\x0b\r\n",
            b"0123456789\r\n",
            b"ab\xc2\x85\r\n",
            b"ab\x00\r\n",
        ];
        for piece in cases {
            let mut bounds = LineBounds::default();
            bounds.follow(b"\r\n\r\n\r\n", start(2, 0));
            bounds.take_scrolled(3).unwrap();
            bounds.follow(piece, start(2, 0));
            assert!(bounds.lines.is_empty(), "{piece:?}");
            bounds.follow(b"\r\n", start(2, 0));
            assert_eq!(
                bounds.take_scrolled(1).unwrap().collect::<Vec<_>>(),
                [UNKNOWN],
                "{piece:?}"
            );
        }
        let mut bounds = LineBounds::default();
        bounds.follow(
            b"ab\r\n",
            Start {
                plain_modes: false,
                ..start(2, 0)
            },
        );
        assert!(bounds.lines.is_empty());
    }

    #[test]
    fn tabs_stop_every_eighth_column_and_wide_text_counts_twice() {
        let wide = |cols| Start {
            cols,
            ..start(0, 0)
        };
        let mut bounds = LineBounds::default();
        bounds.follow(b"\r\n\r\n\r\n", start(2, 0));
        bounds.take_scrolled(3).unwrap();
        bounds.follow("a\tb\r\n\u{4e16}\u{754c}\r\n".as_bytes(), wide(20));
        assert_eq!(bounds.lines, [9, 4, 0]);
        // A tab then LF: the next line goes on from the tab's column.
        bounds.follow(b"\r\t\nab", wide(20));
        assert_eq!(bounds.lines, [9, 10, 0]);
        // Tab stops set by the program are not followed.
        bounds.follow(b"\x1bH", wide(20));
        bounds.follow(b"\r\n\r\n\r\nab", wide(20));
        assert_eq!(bounds.lines, [UNKNOWN, UNKNOWN, 2]);
        bounds.follow(b"\t", wide(20));
        assert!(bounds.lines.is_empty());
        bounds.follow(b"\x1bc", wide(20));
        bounds.follow(b"\t", wide(20));
        assert_eq!(bounds.lines, [UNKNOWN, UNKNOWN, UNKNOWN]);
    }

    #[test]
    fn a_scroll_region_stops_following_until_it_is_cleared() {
        let mut bounds = LineBounds::default();
        bounds.follow(b"\x1b[1;2r", start(0, 0));
        bounds.follow(b"ab\r\n", start(0, 0));
        assert!(bounds.lines.is_empty());
        bounds.follow(b"\x1b[r", start(0, 0));
        bounds.follow(b"ab", start(0, 0));
        assert_eq!(bounds.lines, [UNKNOWN, UNKNOWN, UNKNOWN]);
        bounds.follow(b"\x1b[2;3r\x1bc", start(0, 0));
        bounds.follow(b"\r\n\r\n\r\nab", start(0, 0));
        assert_eq!(bounds.lines, [UNKNOWN, UNKNOWN, 2]);
        bounds.follow(b"\x1b[2;3r", start(0, 0));
        bounds.resized();
        bounds.follow(b"ab", start(0, 0));
        assert_eq!(bounds.lines, [UNKNOWN, UNKNOWN, UNKNOWN]);
        assert!(!bounds.region);
    }
}
