//! Drawing the setup view: the pane's frame, the reason, status lines, the list or a form,
//! and the key help.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::field::Field;
use super::{CustomFocus, CustomForm, Entry, Mode, ProviderStatus, SetupView};
use crate::chrome::pane_block;
use crate::sanitize::{sanitize, sanitize_line};
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// The pane's title.
const TITLE: &str = "Set up a model";

/// Lines of the body, the line that must stay in view, and where a cursor goes in it
/// (line, column).
struct Body {
    lines: Vec<Line<'static>>,
    focus: usize,
    cursor: Option<(usize, usize)>,
}

/// A line of `text` in `style`, cut to `width` columns.
fn plain(text: &str, width: usize, style: Style) -> Line<'static> {
    Line::from(Span::styled(wrap::truncate(text, width), style))
}

/// A marker for the highlighted row, and the style of a row.
fn row_style(theme: &Theme, selected: bool, slot: Slot) -> Style {
    if selected {
        theme.style(slot).patch(theme.style(Slot::Selection))
    } else {
        theme.style(slot)
    }
}

impl SetupView {
    /// Draws the view in `area`; `focused` draws the focused border and records the cursor.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        self.cursor = None;
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let title = wrap::truncate(TITLE, usize::from(area.width.saturating_sub(4)));
        let block = pane_block(&title, focused, theme);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 3 || inner.height == 0 {
            return;
        }
        let content = Rect::new(inner.x + 1, inner.y, inner.width - 2, inner.height);
        let width = usize::from(content.width);
        let height = usize::from(content.height);

        let help = (height >= 3).then(|| self.help_line(width, theme));
        let room = height - usize::from(help.is_some());
        let mut top = self.top_lines(width, theme);
        top.truncate(room / 2);
        let body = self.body(width, theme);
        let rows = room - top.len();
        let first = body.focus.saturating_sub(rows.saturating_sub(1));

        let mut y = content.y;
        for line in &top {
            buf.set_line(content.x, y, line, content.width);
            y += 1;
        }
        for (i, line) in body.lines.iter().enumerate().skip(first).take(rows) {
            buf.set_line(content.x, y, line, content.width);
            if let Some((_, col)) = body.cursor.filter(|&(row, _)| focused && row == i) {
                let x = content
                    .x
                    .saturating_add(u16::try_from(col).unwrap_or(u16::MAX));
                if x < content.right() {
                    self.cursor = Some((x, y));
                }
            }
            y += 1;
        }
        if let Some(help) = help {
            buf.set_line(content.x, content.bottom() - 1, &help, content.width);
        }
    }

    /// The reason, the probing note and the last message, each followed by a blank line.
    fn top_lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let reason = sanitize(self.reason.trim()).into_owned();
        if !reason.is_empty() {
            let spans = [(reason, theme.style(Slot::TextDim))];
            lines.extend(wrap::wrap(&spans, width, &[], &[]));
            lines.push(Line::default());
        }
        let mut status = false;
        if self.probing {
            lines.push(plain(
                "… looking for local servers",
                width,
                theme.style(Slot::Info),
            ));
            status = true;
        }
        if let Some((message, is_error)) = &self.message {
            let slot = if *is_error {
                Slot::Error
            } else {
                Slot::Success
            };
            let spans = [(sanitize(message).into_owned(), theme.style(slot))];
            let mut wrapped = wrap::wrap(&spans, width, &[], &[]);
            wrapped.truncate(3);
            lines.extend(wrapped);
            status = true;
        }
        if status {
            lines.push(Line::default());
        }
        lines
    }

    fn help_line(&self, width: usize, theme: &Theme) -> Line<'static> {
        let help = match &self.mode {
            Mode::List => "↑↓ move · enter select · r look again",
            Mode::Models { .. } => "↑↓ move · enter use model · esc back",
            Mode::Key { .. } => "enter save · esc back · ctrl+u clear",
            Mode::Custom(form) if form.checking => "asking the server for its models… · esc back",
            Mode::Custom(_) => "tab next field · enter save · esc back",
        };
        plain(help, width, theme.style(Slot::Hint))
    }

    fn body(&self, width: usize, theme: &Theme) -> Body {
        match &self.mode {
            Mode::List => self.list_body(width, theme),
            Mode::Models {
                provider,
                models,
                selected,
                ..
            } => models_body(provider, models, *selected, width, theme),
            Mode::Key {
                provider,
                env_var,
                field,
                error,
            } => key_body(
                provider,
                env_var.as_deref(),
                field,
                error.as_deref(),
                width,
                theme,
            ),
            Mode::Custom(form) => custom_body(form, width, theme),
        }
    }

    fn list_body(&self, width: usize, theme: &Theme) -> Body {
        let mut lines = vec![plain(
            "Choose how March reaches a model:",
            width,
            theme.style(Slot::Text),
        )];
        for (i, entry) in self.entries.iter().enumerate() {
            let selected = i == self.selected;
            let (icon, icon_slot, name, detail, extra) = match entry {
                Entry::Custom => (
                    "+",
                    Slot::Hint,
                    "Custom OpenAI-compatible server (base URL)".to_string(),
                    String::new(),
                    String::new(),
                ),
                Entry::Provider(p) => {
                    let Some(p) = self.providers.get(*p) else {
                        continue;
                    };
                    let name = sanitize_line(&p.name).into_owned();
                    let (icon, slot, detail, extra) = match &p.status {
                        ProviderStatus::KeyInEnv(var) => (
                            "✓",
                            Slot::Success,
                            format!("{} is set", sanitize_line(var)),
                            String::new(),
                        ),
                        ProviderStatus::KeyStored => (
                            "✓",
                            Slot::Success,
                            "key saved in auth.json".to_string(),
                            String::new(),
                        ),
                        ProviderStatus::LocalRunning { models } => {
                            let detail = match models.as_slice() {
                                [] => "running, no models loaded".to_string(),
                                [model] => format!("running, {}", sanitize_line(model)),
                                _ => format!("running, {} models", models.len()),
                            };
                            ("●", Slot::Success, detail, String::new())
                        }
                        ProviderStatus::LocalNotRunning => {
                            ("○", Slot::TextDim, "not running".to_string(), String::new())
                        }
                        ProviderStatus::NoKey => (
                            "+",
                            Slot::Hint,
                            "paste an API key".to_string(),
                            p.env_var
                                .as_deref()
                                .map(|v| format!(" (or set {})", sanitize_line(v)))
                                .unwrap_or_default(),
                        ),
                    };
                    (icon, slot, name, detail, extra)
                }
            };
            let stopped = matches!(entry, Entry::Provider(p)
                if self.providers.get(*p).is_some_and(|p| p.status == ProviderStatus::LocalNotRunning));
            let text_slot = if stopped { Slot::TextDim } else { Slot::Text };
            let base = row_style(theme, selected, Slot::Text);
            let mut b = LineBuilder::new(&[]);
            b.push(if selected { "› " } else { "  " }, base);
            b.push(icon, row_style(theme, selected, icon_slot));
            b.push(" ", base);
            let mut text = vec![(name, row_style(theme, selected, text_slot))];
            if !detail.is_empty() {
                text.push((
                    format!(" — {detail}"),
                    row_style(theme, selected, text_slot),
                ));
            }
            if !extra.is_empty() {
                text.push((extra, row_style(theme, selected, Slot::TextDim)));
            }
            let avail = width.saturating_sub(4);
            let mut used = 0;
            for (s, style) in text {
                let cut = wrap::truncate(&s, avail.saturating_sub(used));
                used += wrap::width(&cut);
                b.push(&cut, style);
                if cut != s {
                    break;
                }
            }
            if selected {
                b.pad_to(width, base);
            }
            lines.push(b.finish());
        }
        Body {
            // The heading is line 0, so entry `i` is line `i + 1`.
            focus: self.selected + 1,
            lines,
            cursor: None,
        }
    }
}

fn models_body(
    provider: &str,
    models: &[String],
    selected: usize,
    width: usize,
    theme: &Theme,
) -> Body {
    let mut lines = vec![plain(
        &format!("Models on {}:", sanitize_line(provider)),
        width,
        theme.style(Slot::Text),
    )];
    for (i, model) in models.iter().enumerate() {
        let is_selected = i == selected;
        let style = row_style(theme, is_selected, Slot::Text);
        let mut b = LineBuilder::new(&[]);
        b.push(if is_selected { "› " } else { "  " }, style);
        b.push(
            &wrap::truncate(&sanitize_line(model), width.saturating_sub(2)),
            style,
        );
        if is_selected {
            b.pad_to(width, style);
        }
        lines.push(b.finish());
    }
    Body {
        lines,
        focus: selected + 1,
        cursor: None,
    }
}

/// A field's line, indented under its label, with the cursor's column.
fn field_line(field: &Field, focused: bool, width: usize, theme: &Theme) -> (Line<'static>, usize) {
    let marker = if focused { "› " } else { "  " };
    let (line, col) = field.line(width.saturating_sub(2), theme.style(Slot::PromptText));
    let mut spans = vec![Span::styled(marker, theme.style(Slot::Hint))];
    spans.extend(line.spans);
    (Line::from(spans), col + 2)
}

/// A masked field's note: how many characters it holds.
fn count_note(field: &Field) -> String {
    match field.len() {
        0 => String::new(),
        1 => "1 character".to_string(),
        n => format!("{n} characters"),
    }
}

fn key_body(
    provider: &str,
    env_var: Option<&str>,
    field: &Field,
    error: Option<&str>,
    width: usize,
    theme: &Theme,
) -> Body {
    let dim = theme.style(Slot::TextDim);
    let mut lines = vec![plain(
        &format!("API key for {}:", sanitize_line(provider)),
        width,
        theme.style(Slot::Text),
    )];
    let (line, col) = field_line(field, true, width, theme);
    lines.push(line);
    match error {
        Some(error) => lines.push(plain(error, width, theme.style(Slot::Error))),
        None => lines.push(plain(&count_note(field), width, dim)),
    }
    lines.push(Line::default());
    let mut note = "Saved in auth.json, readable only by you (mode 0600).".to_string();
    if let Some(var) = env_var {
        note.push_str(&format!(
            " Or set {} in the environment and press r in the list.",
            sanitize_line(var)
        ));
    }
    lines.extend(wrap::wrap(&[(note, dim)], width, &[], &[]));
    Body {
        lines,
        focus: 1,
        cursor: Some((1, col)),
    }
}

fn custom_body(form: &CustomForm, width: usize, theme: &Theme) -> Body {
    let dim = theme.style(Slot::TextDim);
    let label = |text: &str, focused: bool| {
        let slot = if focused { Slot::Hint } else { Slot::Text };
        plain(text, width, theme.style(slot))
    };
    let focus = form.focus;
    let mut lines = Vec::new();
    let mut cursor = (1, 0);
    let fields = [
        (
            CustomFocus::Url,
            "Base URL of an OpenAI-compatible server:",
            &form.url,
            "e.g. http://127.0.0.1:8000/v1".to_string(),
        ),
        (
            CustomFocus::Key,
            "API key (optional):",
            &form.key,
            match form.key.len() {
                0 => "leave empty if the server needs no key".to_string(),
                _ => count_note(&form.key),
            },
        ),
        (
            CustomFocus::Model,
            "Model id (optional):",
            &form.model,
            if form.checking {
                "asking the server… nothing is saved until one is chosen".to_string()
            } else {
                "empty: the server is asked which models it serves".to_string()
            },
        ),
    ];
    for (i, (which, title, field, note)) in fields.into_iter().enumerate() {
        if i > 0 {
            lines.push(Line::default());
        }
        let focused = focus == which;
        lines.push(label(title, focused));
        let (line, col) = field_line(field, focused, width, theme);
        if focused {
            cursor = (lines.len(), col);
        }
        lines.push(line);
        // The error sits under the field it is about.
        match &form.error {
            Some(error) if focused => lines.push(plain(error, width, theme.style(Slot::Error))),
            _ => lines.push(plain(&note, width, dim)),
        }
    }
    Body {
        lines,
        focus: cursor.0,
        cursor: (!form.checking).then_some(cursor),
    }
}
