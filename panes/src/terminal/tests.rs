//! The emulator against byte streams of the kinds real programs write.

use super::*;
use ratatui::buffer::Buffer;

fn term(rows: u16, cols: u16) -> AlacrittyEmulator {
    AlacrittyEmulator::new(rows, cols, 1000)
}

#[test]
fn text_colours_and_attributes() {
    let mut t = term(5, 40);
    t.feed(b"plain \x1b[1;31mbold red\x1b[0m \x1b[38;5;208morange\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m\r\n");
    t.feed(b"\x1b[4munder\x1b[24m \x1b[7minv\x1b[27m \x1b[2mdim\x1b[22m \x1b[3mit\x1b[0m");
    assert_eq!(t.row_text(0), "plain bold red orange rgb");
    let bold = t.cell(0, 6);
    assert_eq!(
        (bold.text.as_str(), bold.bold, bold.fg),
        ("b", true, TermColor::Indexed(1))
    );
    assert_eq!(t.cell(0, 15).fg, TermColor::Indexed(208));
    assert_eq!(t.cell(0, 22).fg, TermColor::Rgb(1, 2, 3));
    assert_eq!(t.cell(0, 0).fg, TermColor::Default);
    assert!(t.cell(1, 0).underline && !t.cell(1, 6).underline);
    assert!(t.cell(1, 6).inverse);
    assert!(t.cell(1, 10).dim);
    assert!(t.cell(1, 14).italic);
    assert_eq!(
        t.cursor(),
        TermCursor {
            row: 1,
            col: 16,
            visible: true,
            shape: CursorShape::Block
        }
    );
}

#[test]
fn wide_and_combining_characters() {
    let mut t = term(3, 20);
    t.feed("日本 e\u{301}🦀!".as_bytes());
    assert!(t.cell(0, 0).wide);
    assert_eq!(t.cell(0, 0).text, "日");
    assert_eq!(
        t.cell(0, 1).text,
        "",
        "the second column of a wide character"
    );
    assert_eq!(t.cell(0, 2).text, "本");
    assert_eq!(t.cell(0, 5).text, "e\u{301}");
    assert_eq!(t.cell(0, 6).text, "🦀");
    assert_eq!(t.cell(0, 8).text, "!");
    assert_eq!(t.cursor().col, 9);
}

#[test]
fn alternate_screen_enter_and_exit_keep_the_shell_screen() {
    let mut t = term(4, 20);
    t.feed(b"$ vim notes\r\n");
    t.feed(b"\x1b[?1049h\x1b[H\x1b[2Jediting\x1b[?1h\x1b[?2004h");
    let modes = t.modes();
    assert!(modes.alternate_screen && modes.application_cursor && modes.bracketed_paste);
    assert_eq!(t.row_text(0), "editing");
    t.feed(b"\x1b[?1l\x1b[?2004l\x1b[?1049l");
    assert!(!t.modes().alternate_screen);
    assert_eq!(t.row_text(0), "$ vim notes");
}

#[test]
fn progress_bars_redraw_in_place() {
    let mut t = term(3, 30);
    for pct in [10, 50, 100] {
        t.feed(format!("\r\x1b[K[{:<10}] {pct}%", "#".repeat(pct / 10)).as_bytes());
    }
    assert_eq!(t.row_text(0), "[##########] 100%");
    assert_eq!(t.row_text(1), "");
}

#[test]
fn title_replies_clipboard_and_cursor_looks() {
    let mut t = term(5, 20);
    t.feed(b"\x1b]0;build: march\x07");
    assert_eq!(t.title(), Some("build: march"));
    // A cursor position report: the program asks, the answer goes back to it.
    t.feed(b"\x1b[3;4H\x1b[6n");
    assert_eq!(t.take_replies(), b"\x1b[3;4R");
    assert!(t.take_replies().is_empty());
    t.feed(b"\x1b]52;c;aGVsbG8=\x07");
    assert_eq!(t.take_clipboard(), ["hello"]);
    t.feed(b"\x1b[?25l\x1b[6 q");
    let c = t.cursor();
    assert!(!c.visible);
    assert_eq!(c.shape, CursorShape::Bar);
    t.feed(b"\x1b[?1000h\x1b[?1006h");
    assert!(t.modes().mouse_reporting && t.modes().sgr_mouse);
}

#[test]
fn scrollback_scrolling_and_its_limit() {
    let mut t = AlacrittyEmulator::new(3, 10, 50);
    for i in 0..100 {
        t.feed(format!("line {i}\r\n").as_bytes());
    }
    assert_eq!(t.scrollback_lines(), 50, "capped");
    assert_eq!(t.row_text(1), "line 99");
    t.scroll_by(2);
    assert_eq!(t.scroll_offset(), 2);
    assert_eq!(t.row_text(0), "line 96");
    t.scroll_by(1000);
    assert_eq!(t.scroll_offset(), 50);
    assert_eq!(t.row_text(0), "line 48");
    t.scroll_to_bottom();
    assert_eq!(t.scroll_offset(), 0);
}

#[test]
fn resize_keeps_the_text_and_never_panics() {
    let mut t = term(5, 20);
    t.feed(b"hello world\r\nsecond");
    t.resize(10, 40);
    assert_eq!(t.size(), (10, 40));
    assert_eq!(t.row_text(0), "hello world");
    for (rows, cols) in [(1, 1), (0, 0), (3, 5), (50, 200)] {
        t.resize(rows, cols);
        t.feed(b"more text after the resize\r\n");
        let (r, c) = t.size();
        assert!(r >= 1 && c >= 1);
        let _ = t.cell(r + 5, c + 5);
        let _ = t.cursor();
    }
}

#[test]
fn garbage_is_survived() {
    let mut t = term(10, 40);
    let mut bytes = Vec::new();
    let mut x: u32 = 7;
    for _ in 0..20_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bytes.push((x >> 16) as u8);
    }
    t.feed(&bytes);
    t.feed(b"\x1b[31");
    t.feed(b"mstill ok");
    let _ = t.take_replies();
    let (rows, cols) = t.size();
    assert_eq!((rows, cols), (10, 40));
}

#[test]
fn scrollback_capped_by_bytes_keeps_lines_compact() {
    let budget = 1 << 20;
    let mut t = AlacrittyEmulator::with_scrollback_bytes(10, 200, budget, usize::MAX);
    for i in 0..100_000 {
        t.feed(format!("line {i}\r\n").as_bytes());
    }
    assert!(t.scrollback_bytes() <= budget, "{}", t.scrollback_bytes());
    // Short lines cost their text, not the screen's width (a full-width row of the
    // emulator's grid is 4,800 bytes at 200 columns: 218 of them would fit).
    assert!(t.scrollback_lines() > 10_000, "{}", t.scrollback_lines());
    t.scroll_by(1);
    assert_eq!(t.row_text(0), "line 99990");
    assert_eq!(t.row_text(1), "line 99991");
}

#[test]
fn history_keeps_colours_and_wide_characters() {
    let mut t = AlacrittyEmulator::new(2, 20, 100);
    t.feed("\x1b[31mred\x1b[0m 漢字 x\r\n".as_bytes());
    t.feed(b"a\r\nb\r\nc\r\n");
    let lines = i32::try_from(t.scrollback_lines()).unwrap();
    t.scroll_by(lines);
    assert_eq!(t.row_text(0), "red 漢字 x");
    assert_eq!(t.cell(0, 0).fg, TermColor::Indexed(1));
    assert_eq!(t.cell(0, 3).fg, TermColor::Default);
    assert!(t.cell(0, 4).wide);
    assert_eq!(t.cell(0, 5).text, "");
    assert_eq!(t.cell(0, 6).text, "字");
    assert_eq!(t.cell(0, 19).text, " ");
    // New output while scrolled back keeps the view on the same lines.
    t.feed(b"d\r\n");
    assert_eq!(t.row_text(0), "red 漢字 x");
}

#[test]
fn scrollback_capped_by_lines_when_they_come_first() {
    let mut t = AlacrittyEmulator::with_scrollback_bytes(10, 80, 64 << 20, 500);
    for i in 0..2_000 {
        t.feed(format!("line {i}\r\n").as_bytes());
    }
    assert_eq!(t.scrollback_lines(), 500);
    t.resize(10, 100);
    assert_eq!(
        t.scrollback_lines(),
        500,
        "the line limit holds after a resize"
    );
}

#[test]
fn a_wide_character_that_does_not_fit_leaves_a_blank_at_the_row_end() {
    let mut t = term(3, 10);
    t.feed("123456789日".as_bytes());
    assert_eq!(t.cell(0, 9).text, " ");
    assert_eq!(t.cell(1, 0).text, "日");
}

/// Collects what a ratatui backend writes.
#[derive(Clone, Default)]
struct Written(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Written {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Random bytes (invalid UTF-8, controls, wide and combining characters, wide characters
/// at the row end) drawn between two borders and sent through ratatui's terminal backend:
/// an outer terminal shows every cell where March put it, frame after frame.
#[test]
fn random_output_reaches_the_outer_terminal_cell_for_cell() {
    use ratatui::Terminal;
    use ratatui::backend::CrosstermBackend;
    use ratatui::layout::Rect;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 24) as u8
    };
    let palette = TermPalette::new(&crate::theme::Theme::default());
    let (rows, cols) = (20u16, 42u16);
    for round in 0..40 {
        let mut t = term(rows, cols - 2);
        let written = Written::default();
        let viewport = ratatui::Viewport::Fixed(Rect::new(0, 0, cols, rows));
        let mut terminal = Terminal::with_options(
            CrosstermBackend::new(written.clone()),
            ratatui::TerminalOptions { viewport },
        )
        .unwrap();
        let mut outer = vt100::Parser::new(rows, cols, 0);
        let mut drawn = Buffer::empty(Rect::new(0, 0, cols, rows));
        for frame in 0..20 {
            let noise: Vec<u8> = (0..2000).map(|_| random()).collect();
            t.feed(&noise);
            // A reset now and then, so the noise is also seen in the normal modes.
            if frame % 2 == 0 {
                t.feed(b"\x1bc");
                let noise: Vec<u8> = (0..300).map(|_| random()).collect();
                t.feed(&noise);
            }
            terminal
                .draw(|f| {
                    let buf = f.buffer_mut();
                    draw_screen(
                        &t,
                        Rect::new(1, 0, cols - 2, rows),
                        buf,
                        &palette,
                        &|_, _| None,
                    );
                    for y in 0..rows {
                        buf[(0, y)].set_symbol("│");
                        buf[(cols - 1, y)].set_symbol("│");
                    }
                    drawn = buf.clone();
                })
                .unwrap();
            let bytes = std::mem::take(&mut *written.0.lock().unwrap());
            // vt100 drops U+FFFD where a terminal shows it: a stand-in of the same width.
            let bytes = String::from_utf8(bytes).unwrap().replace('\u{fffd}', "?");
            outer.process(bytes.as_bytes());
            for y in 0..rows {
                let shown: Vec<String> = (0..cols)
                    .map(|x| {
                        outer
                            .screen()
                            .cell(y, x)
                            .map(|c| c.contents().to_string())
                            .unwrap_or_default()
                    })
                    .collect();
                let meant: Vec<String> = (0..cols)
                    .map(|x| drawn[(x, y)].symbol().replace('\u{fffd}', "?"))
                    .collect();
                let same = shown
                    .iter()
                    .zip(&meant)
                    .all(|(s, m)| s == m || (s.is_empty() && m == " "));
                assert!(
                    same,
                    "round {round} frame {frame} row {y}:\n{shown:?}\n{meant:?}"
                );
            }
        }
    }
}

#[test]
fn the_history_reflows_with_the_screen_on_resize() {
    let mut t = term(4, 20);
    for i in 0..10 {
        t.feed(format!("line {i} {}\r\n", "x".repeat(12)).as_bytes());
    }
    let history = t.scrollback_lines();
    assert!(history >= 6, "{history}");
    assert_eq!(t.line_text(0), "line 0 xxxxxxxxxxxx");
    t.resize(4, 10);
    // Each 19-character line takes two rows now, the first marked as wrapping.
    assert_eq!(t.line_text(0), "line 0 xxx");
    assert!(t.line_wrapped(0));
    assert_eq!(t.line_text(1), "xxxxxxxxx");
    assert!(!t.line_wrapped(1));
    assert!(t.scrollback_lines() >= 2 * history);
    t.resize(4, 30);
    assert_eq!(t.line_text(0), "line 0 xxxxxxxxxxxx");
    assert!(!t.line_wrapped(0));
}

#[test]
fn screens_scrolled_at_once_all_reach_the_history() {
    // Each `CSI 50 S` scrolls a whole screen: a read of them scrolls more lines than the
    // emulator keeps between two pieces, unless each ends one.
    let mut t = AlacrittyEmulator::new(50, 20, 10_000);
    let mut bytes = Vec::new();
    for i in 0..100 {
        bytes.extend_from_slice(format!("\x1b[Hscreen {i}\x1b[50S").as_bytes());
    }
    t.feed(&bytes);
    assert_eq!(t.scrollback_lines(), 5000);
    assert_eq!(t.line_text(0), "screen 0");
    assert_eq!(t.line_text(50), "screen 1");
    assert_eq!(t.line_text(4950), "screen 99");
}

#[test]
fn clear_empties_the_history_even_when_split_across_reads() {
    let mut t = term(3, 20);
    for i in 0..10 {
        t.feed(format!("old {i}\r\n").as_bytes());
    }
    assert!(t.scrollback_lines() > 0);
    // `clear`'s bytes, cut inside the erase-saved-lines sequence, then new lines.
    t.feed(b"\x1b[H\x1b[2J\x1b[3");
    t.feed(b"J");
    assert_eq!(t.scrollback_lines(), 0);
    for i in 0..5 {
        t.feed(format!("new {i}\r\n").as_bytes());
    }
    assert_eq!(t.line_text(0), "new 0");
}

#[test]
fn history_lines_of_one_look_and_of_many_read_back_the_same() {
    let mut t = AlacrittyEmulator::new(2, 20, 100);
    // One look throughout (copied as one run), a bold tail, a tab, a wrapped line.
    t.feed(b"\x1b[1;32mall green\x1b[0m\r\nplain \x1b[1mbold\x1b[0m\r\na\tb\r\n");
    t.feed(b"0123456789012345678901234\r\n\r\n\r\n");
    let lines = i32::try_from(t.scrollback_lines()).unwrap();
    t.scroll_by(lines);
    assert_eq!(t.row_text(0), "all green");
    let green = t.cell(0, 8);
    assert!(green.bold && green.fg == TermColor::Indexed(2), "{green:?}");
    assert_eq!(t.cell(0, 9).fg, TermColor::Default, "past the line's end");
    assert_eq!(t.row_text(1), "plain bold");
    assert!(!t.cell(1, 5).bold && t.cell(1, 6).bold);
    t.scroll_by(-2);
    assert_eq!(t.row_text(0), "a       b");
    assert_eq!(t.row_text(1), "01234567890123456789");
    assert!(t.line_wrapped(3));
    assert_eq!(t.line_text(4), "01234");
}

#[test]
fn an_unterminated_synchronized_update_holds_the_drawing_never_the_text() {
    let mut t = term(5, 40);
    let _ = t.take_damage();
    t.feed(b"S\x1b[?2026h");
    t.feed(b"one\r\n");
    // The text is there at once (for copy mode and `terminal/output`)...
    assert_eq!(t.row_text(0), "Sone");
    // ...while the drawing waits for the update's end, up to the limit.
    assert_eq!(t.take_damage(), Damage::Rows(Vec::new()));
    let at = t.sync_deadline().expect("an update is open");
    assert!(!t.expire_sync(at - std::time::Duration::from_millis(1)));
    assert!(t.expire_sync(at));
    assert_eq!(t.sync_deadline(), None);
    // What changed meanwhile was kept for the frame after it.
    assert!(draws_row(&t.take_damage(), 0));
    let mut t = term(5, 40);
    let _ = t.take_damage();
    t.feed(b"\x1b[?2026hframe");
    assert_eq!(t.take_damage(), Damage::Rows(Vec::new()));
    t.feed(b"\x1b[?2026l");
    assert_eq!(t.sync_deadline(), None);
    assert!(draws_row(&t.take_damage(), 0));
}

fn draws_row(damage: &Damage, row: u16) -> bool {
    match damage {
        Damage::Full => true,
        Damage::Rows(rows) => rows.iter().any(|s| s.row == row),
    }
}

#[test]
fn a_full_reset_ends_a_synchronized_update() {
    let mut t = term(5, 40);
    t.feed(b"x\x1b[?2026hy");
    assert!(t.sync_deadline().is_some());
    t.feed(b"\x1bcafter");
    assert_eq!(t.sync_deadline(), None);
    assert_eq!(t.row_text(0), "after");
    // A begin that comes after an end in the same read opens a new update.
    t.feed(b"\x1b[?2026h1\x1b[?2026l2\x1b[?2026h3");
    assert!(t.sync_deadline().is_some());
}
