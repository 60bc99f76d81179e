//! The shell pane's emulator against real programs: byte streams recorded from `ls`,
//! `printf` (a progress bar; wide, combining and box-drawing characters), `vim`, `less` and
//! `top` in an 80×24 PTY, replayed and compared with what tmux showed for the same program at
//! the same moment (or for the same bytes, replayed and resized). `record.py` in
//! `tests/fixtures/terminal/` made both.

use std::path::Path;

use march_panes::terminal::{AlacrittyEmulator, TerminalEmulator};

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/terminal")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Replays `NAME.bytes` and compares every row with `NAME.screen`.
fn conforms(name: &str) {
    conforms_to(name, name, None);
}

/// Replays `BYTES.bytes`, resizes when asked, and compares every row with `SCREEN.screen`.
fn conforms_to(bytes: &str, screen: &str, resize: Option<(u16, u16)>) {
    let mut term = AlacrittyEmulator::new(24, 80, 1000);
    // In PTY-sized reads, as the shell pane gets them.
    for chunk in fixture(&format!("{bytes}.bytes")).chunks(4096) {
        term.feed(chunk);
    }
    if let Some((rows, cols)) = resize {
        term.resize(rows, cols);
    }
    let name = screen;
    let expected = String::from_utf8(fixture(&format!("{screen}.screen"))).unwrap_or_default();
    let expected: Vec<&str> = expected.lines().collect();
    for row in 0..term.size().0 {
        let want = expected
            .get(usize::from(row))
            .copied()
            .unwrap_or("")
            .trim_end();
        assert_eq!(term.row_text(row), want, "{name}, row {row}");
    }
}

#[test]
fn ls_with_colours() {
    conforms("ls_color");
    let mut term = AlacrittyEmulator::new(24, 80, 1000);
    term.feed(&fixture("ls_color.bytes"));
    // The executable is green and the directory blue, as ls's colours say.
    let run = term.cell(0, 11);
    assert_eq!(run.text, "r");
    assert!(run.bold);
    assert_eq!(run.fg, march_panes::terminal::TermColor::Indexed(2));
}

#[test]
fn a_progress_bar() {
    conforms("progress");
}

#[test]
fn wide_combining_and_box_drawing_characters() {
    conforms("wide");
}

#[test]
fn vim_on_the_alternate_screen() {
    conforms("vim");
}

#[test]
fn less_on_the_alternate_screen() {
    conforms("less");
}

#[test]
fn top_on_the_alternate_screen() {
    // htop is not installed here; top is the same kind of program. Expected: tmux's replay
    // of the same bytes.
    conforms("top");
}

#[test]
fn a_resize_reflows_wrapped_lines_as_tmux_does() {
    conforms_to("wide_long", "resize", Some((24, 40)));
}
