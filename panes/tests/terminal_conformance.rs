//! The shell pane's emulator against real programs: byte streams recorded from `ls`,
//! `printf` (a progress bar; wide, combining and box-drawing characters), `vim` and `less`
//! in an 80×24 PTY, replayed and compared with what tmux showed for the same program at the
//! same moment. `tests/fixtures/terminal/record.py` made both.

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
    let mut term = AlacrittyEmulator::new(24, 80, 1000);
    // In PTY-sized reads, as the shell pane gets them.
    for chunk in fixture(&format!("{name}.bytes")).chunks(4096) {
        term.feed(chunk);
    }
    let expected = String::from_utf8(fixture(&format!("{name}.screen"))).unwrap_or_default();
    let expected: Vec<&str> = expected.lines().collect();
    for row in 0..24u16 {
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
