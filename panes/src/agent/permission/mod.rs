//! The permission modal: an agent asks before a tool runs; the user answers by a key whose
//! meaning never changes (see [`choices`]), after seeing the whole call: the command
//! wrapped in full, the diff, every argument, and whether it leaves the sandbox and why. A
//! body longer than the dialog must be scrolled to its end before an allow counts. Esc
//! cancels, which ACP defines as cancelling the turn, not as a refusal.

mod body;
mod choices;
mod guard;
mod queue;

pub use guard::DEFAULT_HOLD;
pub(crate) use queue::{PermissionQueue, Routed};

use std::cell::Cell;
use std::time::Instant;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SelectedPermissionOutcome, ToolKind,
};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::chrome::draw_modal;
use crate::picture::{Picture, Placement};
use crate::sanitize::sanitize_line;
use crate::scroll::Scroll;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};
use body::{BodyKind, LeavesSandbox, Wrapped};
use choices::Meaning;

/// Columns a call's picture takes at most in the modal.
const PICTURE_COLUMNS: u16 = 24;

/// Identifies a permission request the pane shows, so the app can answer the right one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PermissionId(pub u64);

/// What a key did to the modal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ModalKey {
    /// Not a key of the dialog: it goes to the prompt editor.
    Ignored,
    /// The dialog changed (selection, scroll, the words of a rejection): draw it again.
    Moved,
    Answered(RequestPermissionOutcome),
}

/// One answer the dialog offers: its meaning (and key), its label, and the agent's option
/// it chooses (none for "reject with a message", which chooses the reject option).
#[derive(Debug, Clone)]
struct Row {
    meaning: Meaning,
    name: String,
    option: Option<usize>,
}

/// An open permission request.
#[derive(Debug, Clone)]
pub(crate) struct PermissionModal {
    pub id: PermissionId,
    pub request: RequestPermissionRequest,
    title: String,
    kind: Option<ToolKind>,
    /// The agent's options, in its order.
    options: Vec<PermissionOption>,
    /// The answers shown, in the order of their keys.
    rows: Vec<Row>,
    selected: usize,
    /// What the call would do, built once: the diff, the command, the text, or the arguments.
    body: Vec<(BodyKind, String)>,
    wrapped: Wrapped,
    /// The call runs outside the sandbox, if it asks to.
    sandbox: Option<LeavesSandbox>,
    /// The whole question as one text, for every channel but this dialog.
    question: String,
    /// The picture the call would put somewhere (a new avatar), shown above the body where
    /// a terminal shows pictures; its label is in the body.
    picture: Option<std::sync::Arc<Picture>>,
    /// The first body row shown.
    scroll: usize,
    /// Body rows the last frame had room for (a page), and the body's rows at its width.
    page: Cell<usize>,
    total: Cell<usize>,
    /// The body's last row has been on screen.
    seen_end: Cell<bool>,
    /// An allow was pressed before the end was seen: the dialog says to read on.
    nudged: bool,
    /// The words of a rejection being typed.
    message: Option<String>,
    /// When it became the dialog on screen (the first of the queue).
    pub(crate) shown: Instant,
}

impl PermissionModal {
    /// A modal for `request`; `known` is the tool call's title and kind from the transcript,
    /// used when the request leaves them out.
    pub(crate) fn new(
        id: PermissionId,
        request: RequestPermissionRequest,
        known: Option<(String, ToolKind)>,
    ) -> Self {
        let fields = &request.tool_call.fields;
        let title = fields
            .title
            .as_deref()
            .map(|t| sanitize_line(t).into_owned())
            .or_else(|| known.as_ref().map(|(t, _)| t.clone()))
            .unwrap_or_else(|| "a tool call".to_string());
        let kind = fields.kind.or(known.map(|(_, k)| k));
        let options: Vec<PermissionOption> = request
            .options
            .iter()
            .map(|o| {
                let mut o = o.clone();
                o.name = sanitize_line(&o.name).into_owned();
                o
            })
            .collect();
        let mut rows: Vec<Row> = choices::meanings(&options)
            .into_iter()
            .zip(&options)
            .enumerate()
            .map(|(i, (meaning, o))| Row {
                meaning,
                name: o.name.clone(),
                option: Some(i),
            })
            .collect();
        if body::takes_reject_message(&request) && rows.iter().any(|r| r.meaning == Meaning::Reject)
        {
            rows.push(Row {
                meaning: Meaning::RejectWithMessage,
                name: "Reject, and tell the agent why".to_string(),
                option: None,
            });
        }
        rows.sort_by_key(|r| r.meaning);
        let (body, picture) = body::body_of(&request);
        let sandbox = body::leaves_sandbox(&request);
        let question = body::question_text(&title, sandbox.as_ref(), &body);
        PermissionModal {
            id,
            request,
            title,
            kind,
            options,
            rows,
            selected: 0,
            body,
            wrapped: Wrapped::default(),
            sandbox,
            question,
            picture,
            scroll: 0,
            page: Cell::new(1),
            total: Cell::new(0),
            seen_end: Cell::new(false),
            nudged: false,
            message: None,
            shown: Instant::now(),
        }
    }

    /// Scrolls the body (what the call would do); whether it moved.
    pub(crate) fn scroll(&mut self, scroll: Scroll) -> bool {
        let last = self.total.get().saturating_sub(self.page.get());
        let to = match scroll {
            Scroll::Top => 0,
            Scroll::Bottom => last,
            other => {
                let by = other.lines(self.page.get());
                self.scroll
                    .saturating_add_signed(isize::try_from(by).unwrap_or(0))
                    .min(last)
            }
        };
        let moved = to != self.scroll;
        self.scroll = to;
        moved
    }

    /// The whole question: its title, whether it leaves the sandbox, and all it would do.
    pub(crate) fn question(&self) -> &str {
        &self.question
    }

    /// The agent's option of `kind`, as an answer.
    pub(crate) fn option_of(&self, kind: PermissionOptionKind) -> Option<RequestPermissionOutcome> {
        self.options.iter().find(|o| o.kind == kind).map(|o| {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(o.option_id.clone()))
        })
    }

    /// Whether `outcome` turns the call down (one of the agent's reject options).
    pub(crate) fn rejects(&self, outcome: &RequestPermissionOutcome) -> bool {
        let RequestPermissionOutcome::Selected(selected) = outcome else {
            return false;
        };
        self.options.iter().any(|o| {
            o.option_id == selected.option_id
                && matches!(
                    o.kind,
                    PermissionOptionKind::RejectOnce | PermissionOptionKind::RejectAlways
                )
        })
    }

    pub(crate) fn tool_call_id(&self) -> &agent_client_protocol::v1::schema::ToolCallId {
        &self.request.tool_call.tool_call_id
    }

    /// Whether an allow would count now: a body taller than the dialog (a command, the
    /// arguments; a diff's extent shows in its counts) must have been read to its end.
    fn informed(&self) -> bool {
        self.seen_end.get() || self.body.iter().all(|(k, _)| !matches!(k, BodyKind::Text))
    }

    fn choose(&mut self, i: usize) -> ModalKey {
        let Some(row) = self.rows.get(i) else {
            return ModalKey::Ignored;
        };
        self.selected = i;
        if row.meaning.allows() && !self.informed() {
            self.nudged = true;
            return ModalKey::Moved;
        }
        if row.meaning == Meaning::RejectWithMessage {
            self.message = Some(String::new());
            return ModalKey::Moved;
        }
        match row.option.and_then(|o| self.options.get(o)) {
            Some(o) => ModalKey::Answered(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(o.option_id.clone()),
            )),
            None => ModalKey::Ignored,
        }
    }

    /// The reject option, answered with the user's words for the agent.
    fn reject_with(&self, words: &str) -> ModalKey {
        let reject = self
            .rows
            .iter()
            .find(|r| r.meaning == Meaning::Reject)
            .and_then(|r| self.options.get(r.option?));
        let Some(reject) = reject else {
            return ModalKey::Ignored;
        };
        let mut meta = serde_json::Map::new();
        meta.insert("march".into(), serde_json::json!({ "message": words }));
        ModalKey::Answered(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(reject.option_id.clone()).meta(meta),
        ))
    }

    /// Handles a key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> ModalKey {
        if let Some(words) = self.message.as_mut() {
            return match key.code {
                KeyCode::Esc => {
                    self.message = None;
                    ModalKey::Moved
                }
                KeyCode::Enter if words.trim().is_empty() => ModalKey::Moved,
                KeyCode::Enter => {
                    let words = words.trim().to_string();
                    self.reject_with(&words)
                }
                KeyCode::Backspace => {
                    words.pop();
                    ModalKey::Moved
                }
                KeyCode::Char(c) => {
                    words.push(c);
                    ModalKey::Moved
                }
                _ => ModalKey::Moved,
            };
        }
        match key.code {
            KeyCode::Esc => ModalKey::Answered(RequestPermissionOutcome::Cancelled),
            KeyCode::Enter => self.choose(self.selected),
            KeyCode::Up | KeyCode::BackTab => {
                self.move_by(-1);
                ModalKey::Moved
            }
            KeyCode::Down | KeyCode::Tab => {
                self.move_by(1);
                ModalKey::Moved
            }
            KeyCode::PageUp => self.scrolled(Scroll::Pages(-1)),
            KeyCode::PageDown => self.scrolled(Scroll::Pages(1)),
            KeyCode::Home => self.scrolled(Scroll::Top),
            KeyCode::End => self.scrolled(Scroll::Bottom),
            KeyCode::Char(c) => match self.rows.iter().position(|r| r.meaning.key() == c) {
                Some(i) => self.choose(i),
                None => ModalKey::Ignored,
            },
            _ => ModalKey::Ignored,
        }
    }

    fn scrolled(&mut self, scroll: Scroll) -> ModalKey {
        self.scroll(scroll);
        ModalKey::Moved
    }

    /// Text pasted while the words of a rejection are typed; elsewhere a paste is not the
    /// dialog's.
    pub(crate) fn paste(&mut self, text: &str) -> bool {
        match self.message.as_mut() {
            Some(words) => {
                words.push_str(&crate::paste::paste_lines(text));
                true
            }
            None => false,
        }
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.rows.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    /// The answers laid out three ways, roomiest first: one a line; allows on the left and
    /// rejections on the right (where every label fits half the width); all in a flow.
    fn option_layouts(
        &self,
        width: usize,
        body: ratatui::style::Style,
        key_style: ratatui::style::Style,
        theme: &Theme,
    ) -> Vec<Vec<Line<'static>>> {
        let style_of = |i: usize| {
            if i == self.selected {
                body.patch(theme.style(Slot::Selection))
            } else {
                body
            }
        };
        let cell = |b: &mut LineBuilder, i: usize, room: usize| {
            let row = &self.rows[i];
            let style = style_of(i);
            let start = b.width();
            b.push(&format!(" {} ", row.meaning.key()), style.patch(key_style));
            b.push(" ", style);
            b.push(&wrap::truncate(&row.name, room.saturating_sub(5)), style);
            b.pad_to(start + room, style);
        };
        let n = self.rows.len();
        let mut layouts = vec![
            (0..n)
                .map(|i| {
                    let mut b = LineBuilder::new(&[]);
                    cell(&mut b, i, width);
                    b.finish()
                })
                .collect::<Vec<_>>(),
        ];
        let half = width / 2;
        let (allows, rejects): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| self.rows[i].meaning.allows());
        if self.rows.iter().all(|r| wrap::width(&r.name) + 5 < half)
            && !allows.is_empty()
            && !rejects.is_empty()
        {
            layouts.push(
                (0..allows.len().max(rejects.len()))
                    .map(|k| {
                        let mut b = LineBuilder::new(&[]);
                        match allows.get(k) {
                            Some(&i) => cell(&mut b, i, half),
                            None => b.pad_to(half, body),
                        }
                        if let Some(&i) = rejects.get(k) {
                            cell(&mut b, i, width - half);
                        }
                        b.finish()
                    })
                    .collect(),
            );
        }
        // Each answer whole, one after another, wrapped between answers.
        let mut flow = Vec::new();
        let mut b = LineBuilder::new(&[]);
        for i in 0..n {
            let row = &self.rows[i];
            let label = format!(" {} ", row.meaning.key());
            let need = wrap::width(&label) + 1 + wrap::width(&row.name) + 2;
            if b.width() > 0 && b.width() + need > width {
                flow.push(std::mem::replace(&mut b, LineBuilder::new(&[])).finish());
            }
            b.push(&label, style_of(i).patch(key_style));
            b.push(" ", style_of(i));
            b.push(
                &wrap::truncate(&row.name, width.saturating_sub(5)),
                style_of(i),
            );
            b.push("  ", body);
        }
        flow.push(b.finish());
        layouts.push(flow);
        layouts
    }

    /// Draws the modal centred in `area`; `waiting` more requests are queued behind it;
    /// `held` while its answer keys wait for typing to pause. With a body (a diff, a
    /// command, arguments) it takes most of the pane and shows a window of the body, wrapped
    /// whole: only the rows on screen are drawn, however long the body. Where some terminal
    /// shows `pictures`, the call's picture goes under the title (its placement returned).
    pub(crate) fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        waiting: usize,
        held: bool,
        pictures: bool,
    ) -> Option<Placement> {
        let has_body = !self.body.is_empty();
        let width = if has_body || self.sandbox.is_some() {
            area.width.saturating_sub(4).min(120)
        } else {
            area.width.saturating_sub(4).min(64)
        };
        if width < 12 || area.height < 5 {
            return None;
        }
        let inner_w = usize::from(width - 4);
        let body = theme.style(Slot::Modal);
        let dim = body.patch(theme.style(Slot::TextDim));
        let mut head: Vec<Line<'static>> = Vec::new();
        let kind = self.kind.map(super::blocks::kind_label).unwrap_or("tool");
        let spans = [(self.title.clone(), body.patch(theme.style(Slot::Text)))];
        // The kind first, unless the title already starts with it ("edit src/a.rs").
        let first = if self.title.split_whitespace().next() == Some(kind) {
            Vec::new()
        } else {
            vec![Span::styled(
                format!("{kind} "),
                body.patch(theme.style(Slot::Tool)),
            )]
        };
        let mut title = wrap::wrap(&spans, inner_w, &first, &[]);
        // The body shows the call whole; the title is its one-line summary then.
        if has_body && title.len() > 1 {
            title.truncate(1);
            if let Some(last) = title.last_mut() {
                *last = wrap::cut_line(last, inner_w, '…', body).0;
            }
        }
        head.extend(title);
        if let Some(sandbox) = &self.sandbox {
            let spans = [(sandbox.line(), body.patch(theme.style(Slot::Warning)))];
            head.extend(wrap::wrap(&spans, inner_w, &[], &[]));
        }
        head.push(Line::default());
        // The picture's rows, when it fits beside what the modal must show.
        let picture = self
            .picture
            .as_ref()
            .filter(|_| pictures)
            .map(|p| {
                (
                    p,
                    p.cells(
                        u16::try_from(inner_w)
                            .unwrap_or(u16::MAX)
                            .min(PICTURE_COLUMNS),
                    ),
                )
            })
            .filter(|(_, (_, rows))| usize::from(*rows) + 12 <= usize::from(area.height));
        let picture_row = head.len();
        if let Some((_, (_, rows))) = picture {
            head.extend((0..=rows).map(|_| Line::default()));
        }
        let mut tail: Vec<Line<'static>> = Vec::new();
        if has_body {
            tail.push(Line::default());
        }
        let key_style = if held {
            dim
        } else {
            body.patch(theme.style(Slot::Hint))
        };
        let layouts = self.option_layouts(inner_w, body, key_style, theme);
        let mut after: Vec<Line<'static>> = Vec::new();
        if let Some(words) = &self.message {
            let prompt = [(
                format!("why: {words}▏"),
                body.patch(theme.style(Slot::Text)),
            )];
            after.extend(wrap::wrap(&prompt, inner_w, &[], &[]));
        }
        after.push(Line::default());
        let rows = self.wrapped.rows(&self.body, inner_w);
        self.total.set(rows.len());
        // Scrolled to the end by the last frame's page: read (this frame confirms it below).
        if self.scroll + self.page.get() >= rows.len() && self.scroll > 0 {
            self.seen_end.set(true);
        }
        let hint = if held {
            "keys wait until typing pauses: what you type stays in the prompt".to_string()
        } else if self.message.is_some() {
            "type why · enter reject and send · esc back".to_string()
        } else if self.nudged && !self.informed() {
            "▼ read to the end first (pgdn, end), then allow".to_string()
        } else {
            let mut hint = "digit, ↑↓ enter · esc cancel turn".to_string();
            if has_body {
                hint.push_str(" · pgup pgdn end scroll");
            }
            hint
        };
        let hint = if waiting > 0 {
            format!("{hint} · {waiting} more waiting")
        } else {
            hint
        };
        let hint_slot = if self.nudged && !self.informed() {
            Slot::Warning
        } else {
            Slot::TextDim
        };
        after.extend(wrap::wrap(
            &[(hint, body.patch(theme.style(hint_slot)))],
            inner_w,
            &[],
            &[],
        ));
        let height = if has_body {
            area.height.saturating_sub(2)
        } else {
            0
        };
        // The roomiest layout of the answers that leaves the whole body on screen, else the
        // most compact one (the body scrolls).
        let others = head.len() + tail.len() + after.len();
        let room_with = |n: usize| usize::from(height.saturating_sub(2)).saturating_sub(others + n);
        let options = layouts
            .iter()
            .find(|l| rows.len() <= room_with(l.len()))
            .or(layouts.last())
            .cloned()
            .unwrap_or_default();
        tail.extend(options);
        tail.extend(after);

        let fixed = head.len() + tail.len();
        let height = if has_body {
            height
        } else {
            u16::try_from(fixed)
                .unwrap_or(u16::MAX)
                .saturating_add(2)
                .min(area.height)
        };
        // Rows for the body: what the frame leaves after the title, the options and the hint.
        let room = usize::from(height.saturating_sub(2)).saturating_sub(fixed);
        // A body longer than the room gives its last row to "lines a–b of n ▼ more below".
        let shown = if rows.len() > room {
            room.saturating_sub(1)
        } else {
            room
        };
        self.page.set(shown.max(1));
        let mut lines = head;
        if has_body && room > 0 {
            let start = self.scroll.min(rows.len().saturating_sub(1));
            let end = (start + shown).min(rows.len());
            if end >= rows.len() {
                self.seen_end.set(true);
            }
            for (kind, text) in &rows[start..end] {
                let slot = match kind {
                    BodyKind::Heading | BodyKind::Hunk => Slot::DiffHeader,
                    BodyKind::Added => Slot::DiffAdded,
                    BodyKind::Removed => Slot::DiffRemoved,
                    BodyKind::Context => Slot::DiffContext,
                    BodyKind::Text => Slot::Text,
                };
                let style = body.patch(theme.style(slot));
                let mut b = LineBuilder::new(&[]);
                b.push(text, style);
                if matches!(kind, BodyKind::Added | BodyKind::Removed) {
                    b.pad_to(inner_w, style);
                }
                lines.push(b.finish());
            }
            // The rest of the rows stays blank, so the options do not jump while scrolling.
            for _ in end - start..shown {
                lines.push(Line::default());
            }
            if shown < room {
                let more = if end < rows.len() {
                    " ▼ more below"
                } else {
                    ""
                };
                let note = format!("lines {}–{end} of {}{more}", start + 1, rows.len());
                let slot = if more.is_empty() {
                    Slot::TextDim
                } else {
                    Slot::Warning
                };
                lines.push(Line::from(Span::styled(
                    note,
                    body.patch(theme.style(slot)),
                )));
            }
        }
        lines.extend(tail);

        let x = area.x + (area.width - width) / 2;
        let y = area.y + area.height.saturating_sub(height) / 2;
        let rect = Rect::new(x, y, width, height);
        let inner = draw_modal(rect, "Permission needed", buf, theme);
        let inner = Rect::new(
            inner.x + 1,
            inner.y,
            inner.width.saturating_sub(2),
            inner.height,
        );
        for (row, line) in lines.iter().take(usize::from(inner.height)).enumerate() {
            buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
        }
        let (picture, (cols, rows)) = picture?;
        let at = Rect::new(inner.x, inner.y + picture_row as u16, cols, rows);
        (at.bottom() <= inner.bottom()).then(|| Placement::new(picture.clone(), at, buf))
    }
}

#[cfg(test)]
mod tests;
