//! A chooser in the pane: one of the session's select config options (model, thinking
//! level, permission mode, …) with the current value marked, or an earlier session of the
//! project to resume.

use agent_client_protocol::v1::schema::{
    SessionConfigId, SessionConfigKind, SessionConfigOption, SessionConfigSelectOptions,
    SessionConfigValueId, SessionId,
};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::chrome::draw_modal;
use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PickerKey {
    Ignored,
    Moved,
    Closed,
    Chosen(Choice),
}

/// What was chosen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Choice {
    /// A value of a config option.
    Config(SessionConfigId, SessionConfigValueId),
    /// A session to resume.
    Session(SessionId),
}

/// What the chooser is for.
#[derive(Debug, Clone, PartialEq)]
enum Purpose {
    Config(SessionConfigId),
    Session,
}

/// An earlier session offered by `/resume`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionChoice {
    /// The session.
    pub id: SessionId,
    /// Its title, when the agent knows one.
    pub title: Option<String>,
    /// Its last activity (ISO 8601), when known.
    pub updated_at: Option<String>,
}

/// An open chooser.
#[derive(Debug, Clone)]
pub(crate) struct Picker {
    purpose: Purpose,
    title: String,
    /// Value, label (group prefixed), whether current.
    items: Vec<(String, String, bool)>,
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
            items.push((
                value.0.to_string(),
                sanitize_line(name).into_owned(),
                current,
            ));
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
            purpose: Purpose::Config(option.id.clone()),
            title: sanitize_line(&option.name).into_owned(),
            items,
            selected,
        })
    }

    /// A picker over `sessions` (newest first, as listed), `current` marked; none when the
    /// list is empty.
    pub(crate) fn sessions(
        sessions: &[SessionChoice],
        current: Option<&SessionId>,
    ) -> Option<Self> {
        let items: Vec<_> = sessions
            .iter()
            .map(|s| {
                let title = s
                    .title
                    .as_deref()
                    .map(|t| sanitize_line(t).into_owned())
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or_else(|| format!("untitled {}", short_id(&s.id.0)));
                let label = match s.updated_at.as_deref().map(when) {
                    Some(when) => format!("{when}  {title}"),
                    None => title,
                };
                (s.id.0.to_string(), label, Some(&s.id) == current)
            })
            .collect();
        if items.is_empty() {
            return None;
        }
        Some(Picker {
            purpose: Purpose::Session,
            title: "Resume a session".to_string(),
            items,
            selected: 0,
        })
    }

    /// Adds `choices` (value, label) not offered yet, after the others, when this picker is
    /// for option `id`; whether any was added.
    pub(crate) fn offer_more(
        &mut self,
        id: &SessionConfigId,
        choices: &[(String, String)],
    ) -> bool {
        if self.purpose != Purpose::Config(id.clone()) {
            return false;
        }
        let mut added = false;
        for (value, label) in choices {
            if !self.items.iter().any(|(v, _, _)| v == value) {
                self.items
                    .push((value.clone(), sanitize_line(label).into_owned(), false));
                added = true;
            }
        }
        added
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
            Some((value, _, _)) => PickerKey::Chosen(match &self.purpose {
                Purpose::Config(id) => {
                    Choice::Config(id.clone(), SessionConfigValueId::new(value.clone()))
                }
                Purpose::Session => Choice::Session(SessionId::new(value.clone())),
            }),
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
        let width = area.width.saturating_sub(4).min(72);
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
        let inner = draw_modal(rect, &self.title, buf, theme);
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

/// The first characters of a session id, enough to tell sessions apart.
fn short_id(id: &str) -> &str {
    id.char_indices().nth(8).map_or(id, |(i, _)| &id[..i])
}

/// An ISO 8601 time as `YYYY-MM-DD HH:MM` (what it is when it does not look like one).
fn when(iso: &str) -> String {
    let clean = sanitize_line(iso);
    let date = clean.get(..10);
    let time = clean.get(11..16);
    match (date, time) {
        (Some(d), Some(t)) if clean.as_bytes().get(10) == Some(&b'T') => format!("{d} {t}"),
        _ => clean.into_owned(),
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
            PickerKey::Chosen(Choice::Config(
                "model".to_string().into(),
                "a".to_string().into()
            ))
        );
    }

    #[test]
    fn sessions_are_listed_with_their_time_and_chosen_by_id() {
        let sessions = [
            SessionChoice {
                id: SessionId::new("0123456789abcdef"),
                title: None,
                updated_at: Some("2026-11-30T06:12:44.120Z".to_string()),
            },
            SessionChoice {
                id: SessionId::new("s2"),
                title: Some("fix the \x1b[31mbuild".to_string()),
                updated_at: Some("yesterday".to_string()),
            },
        ];
        let mut p = Picker::sessions(&sessions, Some(&SessionId::new("s2"))).unwrap();
        assert_eq!(p.items[0].1, "2026-11-30 06:12  untitled 01234567");
        assert!(p.items[1].1.starts_with("yesterday  fix the "));
        assert!(!p.items[1].1.contains('\x1b'));
        assert!(p.items[1].2 && !p.items[0].2);
        p.move_by(1);
        assert_eq!(
            p.accept(),
            PickerKey::Chosen(Choice::Session(SessionId::new("s2")))
        );
        assert!(Picker::sessions(&[], None).is_none());
    }
}
