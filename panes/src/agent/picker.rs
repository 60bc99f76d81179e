//! A chooser for one of the session's select config options (model, thinking level,
//! permission mode, …): the agent's values listed, the current one marked.

use agent_client_protocol::v1::schema::{
    SessionConfigId, SessionConfigKind, SessionConfigOption, SessionConfigSelectOptions,
    SessionConfigValueId,
};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Clear, Widget};

use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PickerKey {
    Ignored,
    Moved,
    Closed,
    Chosen(SessionConfigId, SessionConfigValueId),
}

/// An open chooser.
#[derive(Debug, Clone)]
pub(crate) struct Picker {
    id: SessionConfigId,
    title: String,
    /// Value, label (group prefixed), whether current.
    items: Vec<(SessionConfigValueId, String, bool)>,
    selected: usize,
}

impl Picker {
    /// A picker for `option`; none for boolean options or an empty list.
    pub(crate) fn new(option: &SessionConfigOption) -> Option<Picker> {
        let SessionConfigKind::Select(select) = &option.kind else {
            return None;
        };
        let mut items = Vec::new();
        let mut add = |value: &SessionConfigValueId, name: &str| {
            let current = *value == select.current_value;
            items.push((value.clone(), sanitize_line(name).into_owned(), current));
        };
        match &select.options {
            SessionConfigSelectOptions::Ungrouped(options) => {
                for o in options {
                    add(&o.value, &o.name);
                }
            }
            SessionConfigSelectOptions::Grouped(groups) => {
                for g in groups {
                    for o in &g.options {
                        add(&o.value, &format!("{} · {}", g.name, o.name));
                    }
                }
            }
            _ => {}
        }
        if items.is_empty() {
            return None;
        }
        let selected = items.iter().position(|(_, _, c)| *c).unwrap_or(0);
        Some(Picker {
            id: option.id.clone(),
            title: sanitize_line(&option.name).into_owned(),
            items,
            selected,
        })
    }

    /// Handles a key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> PickerKey {
        match key.code {
            KeyCode::Esc => PickerKey::Closed,
            KeyCode::Enter => self.accept(),
            KeyCode::Up | KeyCode::BackTab => {
                self.move_by(-1);
                PickerKey::Moved
            }
            KeyCode::Down | KeyCode::Tab => {
                self.move_by(1);
                PickerKey::Moved
            }
            _ => PickerKey::Ignored,
        }
    }

    /// The highlighted value.
    pub(crate) fn accept(&self) -> PickerKey {
        match self.items.get(self.selected) {
            Some((value, _, _)) => PickerKey::Chosen(self.id.clone(), value.clone()),
            None => PickerKey::Closed,
        }
    }

    /// Moves the highlight, wrapping around.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let n = self.items.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    /// Draws the picker centred in `area`.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = area.width.saturating_sub(4).min(56);
        if width < 12 || area.height < 4 {
            return;
        }
        let rows = self
            .items
            .len()
            .min(usize::from(area.height.saturating_sub(2)));
        let height = rows as u16 + 2;
        let x = area.x + (area.width - width) / 2;
        let y = area.y + area.height.saturating_sub(height) / 2;
        let rect = Rect::new(x, y, width, height);
        let body = theme.style(Slot::Modal);
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.style(Slot::ModalBorder))
            .style(body)
            .title(Span::styled(
                format!(" {} ", self.title),
                theme.style(Slot::ModalBorder),
            ));
        let inner = block.inner(rect);
        block.render(rect, buf);
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        let w = usize::from(inner.width);
        for (row, (i, (_, label, current))) in self
            .items
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .enumerate()
        {
            let style = if i == self.selected {
                body.patch(theme.style(Slot::Selection))
            } else {
                body
            };
            let mut b = LineBuilder::new(&[]);
            b.push(
                if *current { " ● " } else { "   " },
                style.patch(theme.style(Slot::Hint)),
            );
            b.push(&wrap::truncate(label, w.saturating_sub(4)), style);
            b.pad_to(w, style);
            buf.set_line(inner.x, inner.y + row as u16, &b.finish(), inner.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{SessionConfigSelect, SessionConfigSelectOption};
    use crossterm::event::KeyModifiers;

    use super::*;

    fn model_option() -> SessionConfigOption {
        SessionConfigOption::new(
            "model",
            "Model",
            SessionConfigKind::Select(SessionConfigSelect::new(
                "b",
                vec![
                    SessionConfigSelectOption::new("a", "Alpha"),
                    SessionConfigSelectOption::new("b", "Beta"),
                ],
            )),
        )
    }

    #[test]
    fn starts_on_the_current_value_and_chooses() {
        let mut p = Picker::new(&model_option()).unwrap();
        assert_eq!(p.selected, 1);
        assert_eq!(
            p.key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)),
            PickerKey::Moved
        );
        assert_eq!(
            p.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
            PickerKey::Chosen("model".to_string().into(), "a".to_string().into())
        );
    }
}
