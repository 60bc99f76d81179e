//! Helpers shared by this crate's tests.

use ratatui::buffer::Buffer;

use crate::theme::Theme;

/// The built-in dark theme.
pub(crate) fn dark() -> Theme {
    Theme::builtin("dark").expect("the dark theme is built in")
}

/// The built-in light theme.
pub(crate) fn light() -> Theme {
    Theme::builtin("light").expect("the light theme is built in")
}

/// The buffer's symbols, one string per row, trailing spaces kept.
pub(crate) fn rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            (area.left()..area.right())
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect()
        })
        .collect()
}
