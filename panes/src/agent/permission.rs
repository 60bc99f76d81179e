//! The permission modal: an agent asks before a tool runs; the user picks one of the
//! agent's options by key. Keys follow the option's kind, never its position or name:
//! `y` allow once, `Y` allow always, `n` reject once, `N` reject always, the supervisor
//! view's letters too (digits for any option whose kind repeats); arrows and Enter also work;
//! Esc cancels, which ACP defines as cancelling the turn, not as a refusal.

use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, SelectedPermissionOutcome, ToolCallContent, ToolKind,
};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::diff::DiffLineKind;
use crate::chrome::draw_modal;
use crate::picture::{Picture, Placement};
use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// Columns a call's picture takes at most in the modal.
const PICTURE_COLUMNS: u16 = 24;

/// Identifies a permission request the pane shows, so the app can answer the right one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PermissionId(pub u64);

/// What a key did to the modal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ModalKey {
    Ignored,
    Moved,
    Answered(RequestPermissionOutcome),
}

/// What a line of the request's body is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    /// A file's path and whether it is new.
    Heading,
    Hunk,
    Added,
    Removed,
    Context,
    /// A command, text to append, pretty-printed arguments.
    Text,
}

/// An open permission request.
#[derive(Debug, Clone)]
pub(crate) struct PermissionModal {
    pub id: PermissionId,
    pub request: RequestPermissionRequest,
    title: String,
    kind: Option<ToolKind>,
    options: Vec<(char, PermissionOption)>,
    selected: usize,
    /// What the call would do, built once: the diff, the command, the text, or the arguments.
    body: Vec<(BodyKind, String)>,
    /// The picture the call would put somewhere (a new avatar), shown above the body where
    /// a terminal shows pictures; its label is in the body.
    picture: Option<std::sync::Arc<Picture>>,
    /// The first body line shown.
    scroll: usize,
    /// Body lines the last frame had room for (a page).
    page: std::cell::Cell<usize>,
}

/// The body of a request: each diff (path, new or not, the unified diff), each text block,
/// each picture's label, else the raw arguments pretty-printed; and the first picture.
/// Sanitized here, so drawing is copying.
fn body_of(
    request: &RequestPermissionRequest,
) -> (Vec<(BodyKind, String)>, Option<std::sync::Arc<Picture>>) {
    let mut out = Vec::new();
    let mut picture = None;
    let fields = &request.tool_call.fields;
    for content in fields.content.iter().flatten() {
        match content {
            ToolCallContent::Diff(d) => {
                let path = sanitize_line(&d.path.to_string_lossy()).into_owned();
                let heading = if d.old_text.is_none() {
                    format!("{path} (new file)")
                } else {
                    path
                };
                if !out.is_empty() {
                    out.push((BodyKind::Text, String::new()));
                }
                out.push((BodyKind::Heading, heading));
                let diff = super::diff::unified(d.old_text.as_deref(), &d.new_text);
                for (kind, text) in diff.lines {
                    let (kind, sign) = match kind {
                        DiffLineKind::Hunk => (BodyKind::Hunk, ""),
                        DiffLineKind::Added => (BodyKind::Added, "+"),
                        DiffLineKind::Removed => (BodyKind::Removed, "-"),
                        DiffLineKind::Context => (BodyKind::Context, " "),
                    };
                    out.push((kind, format!("{sign}{}", sanitize_line(&text))));
                }
            }
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => {
                    for line in t.text.lines() {
                        out.push((BodyKind::Text, sanitize_line(line).into_owned()));
                    }
                }
                ContentBlock::Image(image) => match Picture::from_base64(&image.data) {
                    Ok(p) => {
                        out.push((BodyKind::Text, p.label()));
                        picture.get_or_insert(p);
                    }
                    Err(e) => out.push((BodyKind::Text, format!("[image: {e}]"))),
                },
                _ => {}
            },
            _ => {}
        }
    }
    if out.is_empty()
        && let Some(input) = &fields.raw_input
        && let Ok(pretty) = serde_json::to_string_pretty(input)
    {
        for line in pretty.lines() {
            out.push((BodyKind::Text, sanitize_line(line).into_owned()));
        }
    }
    (out, picture)
}

fn kind_key(kind: PermissionOptionKind) -> Option<char> {
    match kind {
        PermissionOptionKind::AllowOnce => Some('y'),
        PermissionOptionKind::AllowAlways => Some('Y'),
        PermissionOptionKind::RejectOnce => Some('n'),
        PermissionOptionKind::RejectAlways => Some('N'),
        _ => None,
    }
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
        let mut used = Vec::new();
        let mut digit = 0u32;
        let options = request
            .options
            .iter()
            .map(|o| {
                let key = kind_key(o.kind)
                    .filter(|k| !used.contains(k))
                    .unwrap_or_else(|| {
                        digit += 1;
                        char::from_digit(digit % 10, 10).unwrap_or('0')
                    });
                used.push(key);
                let mut o = o.clone();
                o.name = sanitize_line(&o.name).into_owned();
                (key, o)
            })
            .collect();
        let (body, picture) = body_of(&request);
        PermissionModal {
            id,
            request,
            title,
            kind,
            options,
            selected: 0,
            body,
            picture,
            scroll: 0,
            page: std::cell::Cell::new(1),
        }
    }

    /// Scrolls the body (what the call would do); whether it moved.
    pub(crate) fn scroll(&mut self, scroll: crate::scroll::Scroll) -> bool {
        use crate::scroll::Scroll;
        let last = self.body.len().saturating_sub(self.page.get());
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

    /// The tool call this request is about.
    /// What the request is about, as shown.
    pub(crate) fn title(&self) -> &str {
        &self.title
    }

    /// The agent's option of `kind`, as an answer.
    pub(crate) fn option_of(&self, kind: PermissionOptionKind) -> Option<RequestPermissionOutcome> {
        self.options
            .iter()
            .find(|(_, o)| o.kind == kind)
            .map(|(_, o)| {
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                    o.option_id.clone(),
                ))
            })
    }

    /// Whether `outcome` turns the call down (one of the agent's reject options).
    pub(crate) fn rejects(&self, outcome: &RequestPermissionOutcome) -> bool {
        let RequestPermissionOutcome::Selected(selected) = outcome else {
            return false;
        };
        self.options.iter().any(|(_, o)| {
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

    fn choose(&self, i: usize) -> ModalKey {
        match self.options.get(i) {
            Some((_, o)) => ModalKey::Answered(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(o.option_id.clone()),
            )),
            None => ModalKey::Ignored,
        }
    }

    /// Handles a key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> ModalKey {
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
            KeyCode::Char(c) => match self.options.iter().position(|(k, _)| *k == c) {
                Some(i) => self.choose(i),
                None => ModalKey::Ignored,
            },
            _ => ModalKey::Ignored,
        }
    }

    /// Enter: the highlighted option.
    pub(crate) fn accept(&self) -> ModalKey {
        self.choose(self.selected)
    }

    fn move_by(&mut self, delta: isize) {
        let n = self.options.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    /// Draws the modal centred in `area`; `waiting` more requests are queued behind it. With
    /// a body (a diff, a command, arguments) it takes most of the pane and shows a window
    /// of the body: only the rows on screen are drawn, however long the diff. Where some
    /// terminal shows `pictures`, the call's picture goes under the title (its placement
    /// returned).
    pub(crate) fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        waiting: usize,
        pictures: bool,
    ) -> Option<Placement> {
        let has_body = !self.body.is_empty();
        let width = if has_body {
            area.width.saturating_sub(4).min(120)
        } else {
            area.width.saturating_sub(4).min(64)
        };
        if width < 12 || area.height < 5 {
            return None;
        }
        let inner_w = usize::from(width - 4);
        let body = theme.style(Slot::Modal);
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
        title.truncate(3);
        head.extend(title);
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
        // A blank line between the body and the options; without a body the title's does.
        let mut tail: Vec<Line<'static>> = Vec::new();
        if has_body {
            tail.push(Line::default());
        }
        for (i, (key, option)) in self.options.iter().enumerate() {
            let style = if i == self.selected {
                body.patch(theme.style(Slot::Selection))
            } else {
                body
            };
            let mut b = LineBuilder::new(&[]);
            b.push(&format!(" {key} "), style.patch(theme.style(Slot::Hint)));
            b.push(" ", style);
            b.push(
                &wrap::truncate(&option.name, inner_w.saturating_sub(5)),
                style,
            );
            b.pad_to(inner_w, style);
            tail.push(b.finish());
        }
        tail.push(Line::default());
        let mut hint = "↑↓ enter choose · esc cancel turn".to_string();
        if has_body {
            hint.push_str(" · pgup pgdn scroll");
        }
        if waiting > 0 {
            hint = format!("{hint} · {waiting} more waiting");
        }
        tail.push(Line::from(Span::styled(
            wrap::truncate(&hint, inner_w),
            body.patch(theme.style(Slot::TextDim)),
        )));

        let fixed = head.len() + tail.len();
        let height = if has_body {
            area.height.saturating_sub(2)
        } else {
            u16::try_from(fixed)
                .unwrap_or(u16::MAX)
                .saturating_add(2)
                .min(area.height)
        };
        // Rows for the body: what the frame leaves after the title, the options and the hint.
        let room = usize::from(height.saturating_sub(2)).saturating_sub(fixed);
        // A body longer than the room gives its last row to "lines a–b of n".
        let rows = if self.body.len() > room {
            room.saturating_sub(1)
        } else {
            room
        };
        self.page.set(rows.max(1));
        let mut lines = head;
        if has_body && room > 0 {
            let start = self.scroll.min(self.body.len().saturating_sub(1));
            let end = (start + rows).min(self.body.len());
            for (kind, text) in &self.body[start..end] {
                let slot = match kind {
                    BodyKind::Heading | BodyKind::Hunk => Slot::DiffHeader,
                    BodyKind::Added => Slot::DiffAdded,
                    BodyKind::Removed => Slot::DiffRemoved,
                    BodyKind::Context => Slot::DiffContext,
                    BodyKind::Text => Slot::Text,
                };
                let style = body.patch(theme.style(slot));
                let mut b = LineBuilder::new(&[]);
                b.push(&wrap::truncate(text, inner_w), style);
                if matches!(kind, BodyKind::Added | BodyKind::Removed) {
                    b.pad_to(inner_w, style);
                }
                lines.push(b.finish());
            }
            // The rest of the rows stays blank, so the options do not jump while scrolling.
            for _ in end - start..rows {
                lines.push(Line::default());
            }
            if rows < room {
                let note = format!("lines {}–{end} of {}", start + 1, self.body.len());
                lines.push(Line::from(Span::styled(
                    note,
                    body.patch(theme.style(Slot::TextDim)),
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
mod tests {
    use agent_client_protocol::v1::schema::{ToolCallUpdate, ToolCallUpdateFields};
    use crossterm::event::KeyModifiers;

    use super::*;

    fn request() -> RequestPermissionRequest {
        RequestPermissionRequest::new(
            "s1",
            ToolCallUpdate::new(
                "call-9",
                ToolCallUpdateFields::new()
                    .title("bash: rm -rf build".to_string())
                    .kind(ToolKind::Execute),
            ),
            vec![
                PermissionOption::new("allow", "Allow once", PermissionOptionKind::AllowOnce),
                PermissionOption::new("always", "Allow always", PermissionOptionKind::AllowAlways),
                PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
                PermissionOption::new("never", "Reject always", PermissionOptionKind::RejectAlways),
            ],
        )
    }

    fn press(m: &mut PermissionModal, code: KeyCode) -> ModalKey {
        m.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn selected(id: &str) -> ModalKey {
        ModalKey::Answered(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(id.to_string()),
        ))
    }

    #[test]
    fn keys_follow_option_kinds() {
        let mut m = PermissionModal::new(PermissionId(1), request(), None);
        assert_eq!(press(&mut m, KeyCode::Char('Y')), selected("always"));
        assert_eq!(press(&mut m, KeyCode::Char('n')), selected("no"));
        assert_eq!(press(&mut m, KeyCode::Char('N')), selected("never"));
        assert_eq!(press(&mut m, KeyCode::Char('y')), selected("allow"));
        // The old letters answer nothing.
        assert_eq!(press(&mut m, KeyCode::Char('a')), ModalKey::Ignored);
        assert_eq!(press(&mut m, KeyCode::Char('r')), ModalKey::Ignored);
    }

    #[test]
    fn arrows_enter_and_escape() {
        let mut m = PermissionModal::new(PermissionId(1), request(), None);
        assert_eq!(press(&mut m, KeyCode::Down), ModalKey::Moved);
        assert_eq!(press(&mut m, KeyCode::Down), ModalKey::Moved);
        assert_eq!(press(&mut m, KeyCode::Enter), selected("no"));
        assert_eq!(
            press(&mut m, KeyCode::Esc),
            ModalKey::Answered(RequestPermissionOutcome::Cancelled)
        );
    }

    #[test]
    fn repeated_kinds_get_digits() {
        let mut r = request();
        r.options = vec![
            PermissionOption::new("x", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("y", "Allow here", PermissionOptionKind::AllowOnce),
        ];
        let mut m = PermissionModal::new(PermissionId(1), r, None);
        assert_eq!(press(&mut m, KeyCode::Char('1')), selected("y"));
    }

    #[test]
    fn title_falls_back_to_the_transcript() {
        let mut r = request();
        r.tool_call.fields = ToolCallUpdateFields::new();
        let m = PermissionModal::new(
            PermissionId(1),
            r,
            Some(("edit: a.rs".to_string(), ToolKind::Edit)),
        );
        assert_eq!(m.title, "edit: a.rs");
        assert_eq!(m.kind, Some(ToolKind::Edit));
    }
}
