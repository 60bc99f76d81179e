//! Copy mode over a terminal's history and screen.

use super::*;
use crate::terminal::{AlacrittyEmulator, TerminalEmulator, copy_start};

impl CopyMode {
    fn enter(t: &AlacrittyEmulator, case: SearchCase) -> Self {
        let (line, col) = copy_start(t);
        CopyMode::at(t, line, col, case)
    }
}

fn press(copy: &mut CopyMode, term: &mut AlacrittyEmulator, keys: &str) -> CopyOutcome {
    let mut last = CopyOutcome::Stay;
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            c => KeyCode::Char(c),
        };
        last = copy.key(KeyEvent::from(code), term);
    }
    last
}

/// 30 lines and a prompt on a 5×40 screen: 26 lines of history.
fn filled() -> AlacrittyEmulator {
    let mut t = AlacrittyEmulator::new(5, 40, 1000);
    for i in 0..30 {
        t.feed(format!("line {i} alpha-beta gamma\r\n").as_bytes());
    }
    t.feed(b"$ ");
    t
}

#[test]
fn motions_select_words_and_copy() {
    let mut t = filled();
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    assert_eq!(c.status(&t), "copy [31/31]");
    assert_eq!(press(&mut c, &mut t, "k0vwe"), CopyOutcome::Stay);
    assert_eq!(c.status(&t), "copy · selecting [30/31]");
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Copy("line 29".into())
    );
    // Word ends and punctuation: `e` stops at "alpha", then at "-".
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "k0wwv$");
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Copy("alpha-beta gamma".into())
    );
}

#[test]
fn whole_lines_and_scrolling_back() {
    let mut t = filled();
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "kkVj");
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Copy("line 28 alpha-beta gamma\nline 29 alpha-beta gamma".into())
    );
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "g");
    assert_eq!(
        t.scroll_offset(),
        26,
        "the view follows the cursor to the top"
    );
    assert_eq!(t.row_text(0), "line 0 alpha-beta gamma");
    press(&mut c, &mut t, "G");
    assert_eq!(t.scroll_offset(), 0);
}

#[test]
fn incremental_search_both_ways_with_smart_case() {
    let mut t = filled();
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "/gam");
    // Wrapped around to the first line while typing.
    assert_eq!(c.status(&t), "/gam");
    assert_eq!(t.row_text(0), "line 0 alpha-beta gamma");
    press(&mut c, &mut t, "\n");
    assert_eq!(c.status(&t), "copy [1/31]");
    assert_eq!(c.mark(&t, 0, 18), Some(CopyMark::Cursor));
    assert_eq!(c.matches_on_row(&t, 0), vec![(18, 20)]);
    press(&mut c, &mut t, "n");
    assert_eq!(c.status(&t), "copy [2/31]");
    press(&mut c, &mut t, "N");
    assert_eq!(c.status(&t), "copy [1/31]");
    press(&mut c, &mut t, "?line 2\n");
    assert_eq!(
        c.status(&t),
        "copy [30/31]",
        "backwards, wrapping to line 29"
    );
    // A capital letter makes the search match case; no match leaves the cursor.
    press(&mut c, &mut t, "/GAMMA");
    assert_eq!(c.status(&t), "/GAMMA  (no match for GAMMA)");
    press(&mut c, &mut t, "\x1b");
    assert_eq!(c.status(&t), "copy [30/31]");
    // Leaving copy mode returns the view to the live screen (the pane does that).
    t.scroll_to_bottom();
    let mut c = CopyMode::enter(&t, SearchCase::Ignore);
    press(&mut c, &mut t, "/GAMMA\n");
    assert_eq!(c.status(&t), "copy [1/31]");
}

#[test]
fn escape_clears_the_selection_then_leaves() {
    let mut t = filled();
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "v");
    assert_eq!(press(&mut c, &mut t, "\x1b"), CopyOutcome::Stay);
    assert_eq!(press(&mut c, &mut t, "\x1b"), CopyOutcome::Exit);
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Exit,
        "nothing selected"
    );
}

#[test]
fn the_selection_stays_on_its_text_when_old_lines_are_dropped() {
    let mut t = AlacrittyEmulator::new(3, 40, 10);
    for i in 0..20 {
        t.feed(format!("old {i}\r\n").as_bytes());
    }
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "kV");
    // More output pushes lines out of the full history.
    for i in 0..5 {
        t.feed(format!("new {i}\r\n").as_bytes());
    }
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Copy("old 19".into())
    );
}

#[test]
fn clear_and_reset_empty_the_history() {
    let mut t = AlacrittyEmulator::new(3, 40, 100);
    for i in 0..20 {
        t.feed(format!("line {i}\r\n").as_bytes());
    }
    assert!(t.scrollback_lines() > 0);
    t.feed(b"\x1b[H\x1b[2J\x1b[3J");
    assert_eq!(t.scrollback_lines(), 0);
    for i in 0..20 {
        t.feed(format!("line {i}\r\n").as_bytes());
    }
    t.feed(b"\x1bc");
    assert_eq!(t.scrollback_lines(), 0);
}

#[test]
fn a_space_at_a_wrap_is_kept() {
    let mut t = AlacrittyEmulator::new(5, 10, 100);
    t.feed(b"aaaaaaaaa bbb\r\n$ ");
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "kkVj");
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Copy("aaaaaaaaa bbb".into())
    );
}

#[test]
fn a_wrapped_line_is_copied_as_one() {
    let mut t = AlacrittyEmulator::new(5, 20, 100);
    t.feed(b"0123456789abcdefghijKLMNO\r\n$ ");
    let mut c = CopyMode::enter(&t, SearchCase::Smart);
    press(&mut c, &mut t, "kkVj");
    assert_eq!(
        press(&mut c, &mut t, "y"),
        CopyOutcome::Copy("0123456789abcdefghijKLMNO".into())
    );
}
