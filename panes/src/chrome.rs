//! What every pane draws around itself (the border and the title, styled for focus), and
//! the frame of every modal box drawn over panes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

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

/// Clears `rect` and draws a modal box titled `title` in it; the area inside the border.
pub fn draw_modal(rect: Rect, title: &str, buf: &mut Buffer, theme: &Theme) -> Rect {
    Clear.render(rect, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Slot::ModalBorder))
        .style(theme.style(Slot::Modal))
        .title(Span::styled(
            format!(" {title} "),
            theme.style(Slot::ModalBorder),
        ));
    let inner = block.inner(rect);
    block.render(rect, buf);
    inner
}
