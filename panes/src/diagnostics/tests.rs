//! The diagnostics pane drawn: empty, grouped by file, filtered, with a notice and a selection.

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;
use crate::theme::Theme;

fn draw(view: &mut DiagnosticsView, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::default();
    terminal
        .draw(|f| view.render(f.area(), f.buffer_mut(), &theme, true))
        .unwrap();
    terminal
}

fn item(line: u32, severity: Severity, message: &str, code: &str) -> DiagnosticItem {
    DiagnosticItem {
        line,
        column: 5,
        severity,
        message: message.to_string(),
        source: "Ruff".to_string(),
        code: Some(code.to_string()),
    }
}

fn sample() -> Vec<FileItems> {
    vec![
        FileItems {
            path: PathBuf::from("/p/src/util.py"),
            items: vec![
                item(2, Severity::Warning, "`os` imported but unused", "F401"),
                item(9, Severity::Hint, "consider a comprehension", "C400"),
            ],
        },
        FileItems {
            path: PathBuf::from("/p/app.py"),
            items: vec![
                item(3, Severity::Error, "Undefined name `y`", "F821"),
                item(7, Severity::Error, "two\nlines \x1b[31mred", "E999"),
            ],
        },
        FileItems {
            path: PathBuf::from("/p/clean.py"),
            items: vec![],
        },
    ]
}

#[test]
fn empty() {
    let mut view = DiagnosticsView::new("diagnostics · p", Path::new("/p"));
    insta::assert_snapshot!(draw(&mut view, 60, 5).backend());
}

#[test]
fn grouped_by_file_with_a_notice_and_a_selection() {
    let mut view = DiagnosticsView::new("diagnostics · p", Path::new("/p"));
    view.set_files(sample());
    view.set_notices(vec!["pyright could not start: node not found".to_string()]);
    view.move_selection(1);
    let (path, item) = view.selected_item().unwrap();
    assert_eq!((path, item.line), (Path::new("/p/app.py"), 7));
    insta::assert_snapshot!(draw(&mut view, 72, 9).backend());
    assert_eq!(
        view.counts(),
        Counts {
            errors: 2,
            warnings: 1,
            others: 1
        }
    );
}

#[test]
fn filters_cycle_and_keep_the_selection() {
    let mut view = DiagnosticsView::new("diagnostics · p", Path::new("/p"));
    view.set_files(sample());
    view.move_selection(2);
    assert_eq!(view.selected_item().unwrap().1.line, 2);
    view.cycle_filter(); // everything
    assert_eq!(view.filter(), Severity::Hint);
    insta::assert_snapshot!(draw(&mut view, 72, 8).backend());
    view.cycle_filter(); // errors only
    assert_eq!(view.filter(), Severity::Error);
    assert_eq!(view.selected_item().unwrap().1.severity, Severity::Error);
    // A fix clears a diagnostic; the one selected stays selected.
    view.move_selection(1);
    let mut files = sample();
    files[1].items.remove(0);
    view.set_files(files);
    assert_eq!(view.selected_item().unwrap().1.line, 7);
    files = sample();
    files.truncate(1);
    view.set_files(files);
    insta::assert_snapshot!(draw(&mut view, 60, 4).backend());
    assert!(view.selected_item().is_none());
}
