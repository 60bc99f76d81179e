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
    // Find the removed `let x = 1;` row and its `1`.
    let row = (0..16)
        .find(|&y| {
            let text: String = (0..60).map(|x| buf[(x, y)].symbol().to_string()).collect();
            text.contains("-    let x = 1;")
        })
        .expect("the removed line is drawn");
    let text: String = (0..60)
        .map(|x| buf[(x, row)].symbol().to_string())
        .collect();
    let one = u16::try_from(text.chars().position(|c| c == '1').unwrap()).unwrap();
    assert!(buf[(one, row)].modifier.contains(Modifier::REVERSED));
    let x = u16::try_from(text.chars().position(|c| c == 'x').unwrap()).unwrap();
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
    let row = (0..16)
        .find(|&y| {
            let text: String = (0..60).map(|x| buf[(x, y)].symbol().to_string()).collect();
            text.contains("+    let x = 2;")
        })
        .expect("the added line is drawn");
    let text: String = (0..60)
        .map(|x| buf[(x, row)].symbol().to_string())
        .collect();
    let column = |needle: &str| {
        let byte = text.find(needle).unwrap();
        u16::try_from(text[..byte].chars().count()).unwrap()
    };
    let (keyword, sign) = (column("let"), column("+"));
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
