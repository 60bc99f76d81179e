//! What every pane draws around itself: the border and the title, styled for focus.

use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use crate::theme::{Slot, Theme};

/// A pane's bordered block with `title` (already cut to fit), in the focused or unfocused
/// border and title styles.
pub(crate) fn pane_block(title: &str, focused: bool, theme: &Theme) -> Block<'static> {
    let (border, title_style) = if focused {
        (Slot::BorderFocused, Slot::TitleFocused)
    } else {
        (Slot::Border, Slot::Title)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(border))
        .style(theme.style(Slot::Background))
        .title(Line::from(Span::styled(
            format!(" {title} "),
            theme.style(title_style),
        )))
}
