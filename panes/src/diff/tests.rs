//! The diff pane drawn: snapshots of its layouts and of the files it cannot show.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;

use super::*;
use crate::theme::Theme;

fn draw(view: &mut DiffView, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::default();
    terminal
        .draw(|f| {
            let hl = crate::highlight::Highlighter::new();
            view.render(f.area(), f.buffer_mut(), &theme, &hl, true);
        })
        .unwrap();
    terminal
}

/// The row of `buf` (`width` columns) whose text holds `needle`, with that text.
fn row_with(buf: &ratatui::buffer::Buffer, width: u16, needle: &str) -> (u16, String) {
    (0..buf.area.height)
        .map(|y| {
            let text: String = (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            (y, text)
        })
        .find(|(_, text)| text.contains(needle))
        .unwrap_or_else(|| panic!("no row holds {needle:?}"))
}

/// The column at which `needle` starts in a row's `text`.
fn column_of(text: &str, needle: &str) -> u16 {
    let byte = text.find(needle).unwrap();
    u16::try_from(text[..byte].chars().count()).unwrap()
}

fn files() -> Vec<FileDiff> {
    let old = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";
    let new = "fn main() {\n    let x = 2;\n    let y = x * 2;\n    println!(\"{y}\");\n}\n";
    vec![
        FileDiff::new("src/main.rs", Some(old), Some(new)),
        FileDiff::new("notes.md", None, Some("# Notes\n\nNew file.\n")),
    ]
}

#[test]
fn unified() {
    let mut view = DiffView::new("session", files());
    insta::assert_snapshot!(draw(&mut view, 60, 16).backend());
}

#[test]
fn side_by_side() {
    let mut view = DiffView::new("session", files());
    view.toggle_layout();
    assert_eq!(view.layout(), DiffLayout::SideBySide);
    insta::assert_snapshot!(draw(&mut view, 80, 16).backend());
}

#[test]
fn changed_words_are_marked_inside_changed_lines() {
    let mut view = DiffView::new("session", files());
    let terminal = draw(&mut view, 60, 16);
    let buf = terminal.backend().buffer();
    // The removed `let x = 1;` row: its `1;` changed, its `x` did not.
    let (row, text) = row_with(buf, 60, "-    let x = 1;");
    let one = column_of(&text, "1;");
    assert!(buf[(one, row)].modifier.contains(Modifier::REVERSED));
    let x = column_of(&text, "x =");
    assert!(!buf[(x, row)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn the_next_file_and_the_next_hunk() {
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 3\n", "line three\n")
        .replace("line 30\n", "line thirty\n");
    let mut view = DiffView::new("s", vec![FileDiff::new("a", Some(&old), Some(&new))]);
    view.toggle_layout();
    view.toggle_layout();
    view.jump_hunk(true);
    insta::assert_snapshot!(draw(&mut view, 50, 12).backend());
    // Past the last hunk of the last file: it stays.
    view.jump_hunk(true);
    let mut two = DiffView::new("s", files());
    two.jump_hunk(true);
    assert_eq!(two.selected().unwrap().path, "notes.md");
    two.jump_hunk(false);
    assert_eq!(two.selected().unwrap().path, "src/main.rs");
}

#[test]
fn empty_binary_and_huge() {
    let mut empty = DiffView::new("s", Vec::new());
    insta::assert_snapshot!("empty", draw(&mut empty, 40, 5).backend());
    let huge = "x\n".repeat(model::MAX_DIFF_BYTES / 2);
    let mut odd = DiffView::new(
        "s",
        vec![
            FileDiff::new("logo.png", Some("\u{0}PNG"), Some("\u{0}PNG2")),
            FileDiff::new("big.log", Some(&huge), Some("y\n")),
        ],
    );
    insta::assert_snapshot!("binary", draw(&mut odd, 50, 8).backend());
    odd.select_file(1);
    insta::assert_snapshot!("huge", draw(&mut odd, 50, 8).backend());
}

#[test]
fn escape_sequences_in_a_file_are_not_drawn() {
    let mut view = DiffView::new(
        "s",
        vec![FileDiff::new(
            "x",
            Some("a\n"),
            Some("\u{1b}]0;pwned\u{7}\u{1b}[31mred\n"),
        )],
    );
    let terminal = draw(&mut view, 40, 8);
    let text = format!("{}", terminal.backend());
    // Shown as what they are, never sent to the terminal.
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("␛[31mred"), "{text}");
}

#[test]
fn code_is_coloured_by_its_language_and_keeps_the_diff_background() {
    use crate::theme::Slot;
    let theme = Theme::default();
    let mut view = DiffView::new("session", files());
    let terminal = draw(&mut view, 60, 16);
    let buf = terminal.backend().buffer();
    let (row, text) = row_with(buf, 60, "+    let x = 2;");
    let (keyword, sign) = (column_of(&text, "let"), column_of(&text, "+"));
    let added = theme.style(Slot::DiffAdded);
    assert_eq!(buf[(sign, row)].fg, added.fg.unwrap());
    assert_ne!(
        buf[(keyword, row)].fg,
        added.fg.unwrap(),
        "a keyword's own colour"
    );
    assert_eq!(
        buf[(keyword, row)].bg,
        added.bg.unwrap(),
        "on the added line's background"
    );
}
