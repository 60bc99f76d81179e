//! Pictures in an agent pane: those attached to the prompt being written (by a pasted
//! path, `/image PATH` or the clipboard, all read by the app), and where the transcript's
//! pictures were drawn, for the terminals that show them.

use std::path::PathBuf;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::AgentPane;
use super::blocks::USER_PICTURE_INDENT;
use super::events::PaneEvent;
use super::transcript::{Block, Role};
use crate::picture::{Picture, Placement};
use crate::theme::{Slot, Theme};
use crate::wrap;

/// Pictures attached to one prompt at most.
pub const MAX_ATTACHED: usize = 8;
/// Bytes of pictures one prompt carries at most: as base64 in one ACP message they stay
/// under the 32 MiB a line may have.
pub const MAX_ATTACHED_BYTES: usize = 20 << 20;
/// File name endings of the pictures a pasted path attaches.
const PICTURE_ENDINGS: [&str; 5] = [".png", ".jpg", ".jpeg", ".gif", ".webp"];

/// The pane's pictures.
#[derive(Debug, Default)]
pub(crate) struct Pictures {
    /// Some attached terminal shows pictures: the transcript leaves them room.
    shown: bool,
    /// Where the last frame drew the transcript's pictures (wholly in view only).
    placements: Vec<Placement>,
    /// The pictures in view found while drawing the transcript, kept once the whole pane
    /// is drawn if nothing covers them.
    found: Vec<Placement>,
    /// The avatar's picture in the header, drawn this frame.
    header: Option<Placement>,
    /// The agent's avatar the header shows, in the session's attention state.
    avatar: Option<crate::avatar::AvatarBadge>,
    /// Attached to the prompt being written, in order.
    attached: Vec<Arc<Picture>>,
    /// The last prompt sent with pictures, until the agent answers anything: a prompt the
    /// agent refuses (a model without images) comes back to the editor.
    sent: Option<(String, Vec<Arc<Picture>>)>,
}

impl Pictures {
    pub(crate) fn shown(&self) -> bool {
        self.shown
    }

    /// Rows the attachments line takes under the editor.
    pub(crate) fn rows(&self) -> u16 {
        u16::from(!self.attached.is_empty())
    }

    /// The attachments line: each picture's label, and how to take the last back.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        if area.height == 0 || self.attached.is_empty() {
            return;
        }
        let labels: Vec<String> = self.attached.iter().map(|p| p.label()).collect();
        let text = format!(
            "📎 {}  (Backspace on an empty prompt takes the last off)",
            labels.join(" ")
        );
        let text = wrap::truncate(&text, usize::from(area.width));
        let line = Line::from(Span::styled(text, theme.style(Slot::TextDim)));
        buf.set_line(area.x, area.y, &line, area.width);
    }
}

/// The picture file a paste names, when it is one path and nothing else: what terminals
/// send when a file is dropped on them (quoted, `file://`, or with blanks escaped).
pub fn pasted_picture_path(pasted: &str) -> Option<PathBuf> {
    let text = pasted.trim();
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let quoted = ['\'', '"']
        .iter()
        .find_map(|q| text.strip_prefix(*q)?.strip_suffix(*q));
    let path = match quoted.unwrap_or(text).strip_prefix("file://") {
        // `file://localhost/…` names this machine too.
        Some(rest) => percent_decode(rest.strip_prefix("localhost").unwrap_or(rest))?,
        // Inside quotes a backslash is itself; outside it escapes a blank.
        None if quoted.is_some() => quoted.unwrap_or(text).to_string(),
        None => unescape_blanks(text),
    };
    if path.contains(['\'', '"']) {
        // Several files dropped at once, or not a path at all.
        return None;
    }
    let lower = path.to_lowercase();
    let is_path = path.starts_with('/') || path.starts_with("~/");
    (is_path && PICTURE_ENDINGS.iter().any(|e| lower.ends_with(e))).then(|| {
        match path.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(rest))
                .unwrap_or_else(|| PathBuf::from(&path)),
            None => PathBuf::from(path),
        }
    })
}

/// `text` with `\` escapes removed (`a\ b.png` is `a b.png`).
fn unescape_blanks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// A `file://` URI's path, `%XX` decoded; `None` when that is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

impl AgentPane {
    /// Whether some attached terminal shows pictures: the transcript then leaves each
    /// picture its rows under its label.
    pub fn show_pictures(&mut self, shown: bool) {
        self.pictures.shown = shown;
    }

    /// The avatar the header shows and the state it shows it in; `None`: no avatar.
    pub fn set_avatar(&mut self, badge: Option<crate::avatar::AvatarBadge>) {
        self.pictures.avatar = badge;
    }

    /// Draws the avatar at `(x, y)` of the header, when the pane has one.
    pub(crate) fn render_avatar(
        &mut self,
        at: (u16, u16),
        buf: &mut Buffer,
        theme: &Theme,
        base: ratatui::style::Style,
    ) {
        let Some(badge) = &self.pictures.avatar else {
            return;
        };
        let shown = self.pictures.shown;
        self.pictures.header = badge.avatar.draw(badge.state, at, buf, theme, base, shown);
    }

    /// Whether some attached terminal shows pictures.
    pub(crate) fn pictures_shown(&self) -> bool {
        self.pictures.shown
    }

    /// A picture drawn this frame outside the transcript (a permission request's).
    pub(crate) fn picture_found(&mut self, placed: Placement) {
        self.pictures.found.push(placed);
    }

    /// Whether the header shows an avatar.
    pub(crate) fn has_avatar(&self) -> bool {
        self.pictures.avatar.is_some()
    }

    /// Where the last frame drew the transcript's pictures (only those wholly in view).
    pub fn placements(&self) -> &[Placement] {
        &self.pictures.placements
    }

    /// Forgets where pictures were drawn (a frame starts).
    pub(crate) fn forget_placements(&mut self) {
        self.pictures.found.clear();
        self.pictures.header = None;
        self.pictures.placements.clear();
    }

    /// Keeps the pictures found in this frame that nothing drawn after the transcript (a
    /// popup, a dialog, copy mode's marks) covers on `buf`.
    pub(crate) fn placed_pictures(&mut self, buf: &Buffer) {
        let mut found = std::mem::take(&mut self.pictures.found);
        found.extend(self.pictures.header.take());
        found.retain(|p| p.uncovered(buf));
        self.pictures.placements = found;
    }

    /// Attaches `picture` to the prompt being written; false (and a notice) when the prompt
    /// has [`MAX_ATTACHED`] already.
    pub fn attach(&mut self, picture: Arc<Picture>) -> bool {
        if self.pictures.attached.len() >= MAX_ATTACHED {
            self.set_error(format!("a prompt takes at most {MAX_ATTACHED} images"));
            return false;
        }
        let bytes: usize = self.pictures.attached.iter().map(|p| p.bytes().len()).sum();
        if bytes + picture.bytes().len() > MAX_ATTACHED_BYTES {
            self.set_error(format!(
                "a prompt takes at most {} MB of images",
                MAX_ATTACHED_BYTES >> 20
            ));
            return false;
        }
        self.pictures.attached.push(picture);
        true
    }

    /// Attaches `picture` read from a path pasted as `pasted`: the pasted text, which went
    /// into the prompt meanwhile, is taken out again. When the prompt has its fill of
    /// pictures the text stays.
    pub fn attach_pasted(&mut self, picture: Arc<Picture>, pasted: &str) -> bool {
        if !self.attach(picture) {
            return false;
        }
        self.prompt.remove_last(pasted);
        true
    }

    /// The pictures attached to the prompt, which go with it.
    pub fn attached(&self) -> &[Arc<Picture>] {
        &self.pictures.attached
    }

    /// Takes the attached pictures, to send with the prompt just submitted.
    pub fn take_attached(&mut self) -> Vec<Arc<Picture>> {
        std::mem::take(&mut self.pictures.attached)
    }

    /// Puts pictures back on the prompt (a prompt that could not be sent).
    pub fn restore_attached(&mut self, pictures: Vec<Arc<Picture>>) {
        let mut pictures = pictures;
        pictures.append(&mut self.pictures.attached);
        pictures.truncate(MAX_ATTACHED);
        self.pictures.attached = pictures;
    }

    pub(crate) fn pictures_attached_empty(&self) -> bool {
        self.pictures.attached.is_empty()
    }

    /// A prompt with `pictures` was sent.
    pub(crate) fn pictures_sent(&mut self, text: &str, pictures: &[Arc<Picture>]) {
        self.pictures.sent = (!pictures.is_empty()).then(|| (text.to_string(), pictures.to_vec()));
    }

    /// The agent answered something: the prompt was taken.
    pub(crate) fn pictures_answered(&mut self) {
        self.pictures.sent = None;
    }

    /// The turn failed before the agent answered anything: a prompt sent with pictures
    /// goes back to the editor (when nothing was written there since), so neither is lost.
    pub(crate) fn unsend_pictures(&mut self) {
        let Some((text, pictures)) = self.pictures.sent.take() else {
            return;
        };
        if self.prompt.is_empty() && self.pictures.attached.is_empty() {
            self.prompt.replace(&text);
            self.pictures.attached = pictures;
        }
    }

    /// Backspace on an empty prompt: the last attached picture goes.
    pub(crate) fn detach_last(&mut self) -> Option<PaneEvent> {
        if !self.prompt.is_empty() {
            return None;
        }
        self.pictures.attached.pop().map(|_| PaneEvent::Redraw)
    }

    /// Notes where the transcript's pictures were drawn in `area` of `buf` by this frame.
    pub(crate) fn place_pictures(&mut self, area: Rect, buf: &Buffer) {
        self.pictures.found.clear();
        if !self.pictures.shown {
            return;
        }
        let blocks = self.transcript.blocks();
        for (b, row, line, visible) in self.scroll.drawn_spans() {
            let Some(Block::Image(image)) = blocks.get(b) else {
                continue;
            };
            let Some(laid) = self.scroll.laid(b) else {
                continue;
            };
            let indent = match image.role {
                Role::User => USER_PICTURE_INDENT,
                _ => 0,
            };
            let (cols, rows) = image.picture.cells(area.width.saturating_sub(indent));
            // The picture covers the block's last rows; only one wholly in view is drawn.
            let first = laid.len().saturating_sub(usize::from(rows));
            if line > first || line + visible < laid.len() {
                continue;
            }
            let y = row + u16::try_from(first - line).unwrap_or(u16::MAX);
            // The bottom row shows the position while scrolled up: nothing is drawn over it.
            let bottom = area.bottom() - u16::from(self.scroll.shows_position());
            let shown = Rect::new(area.x, area.y, area.width, bottom - area.y);
            let cell = Rect::new(area.x + indent, y, cols, rows).intersection(shown);
            if cell.width == cols && cell.height == rows {
                let placed = Placement::new(image.picture.clone(), cell, buf);
                self.pictures.found.push(placed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_picture_path_is_recognised_in_the_forms_terminals_send() {
        let p = |s: &str| pasted_picture_path(s).map(|p| p.display().to_string());
        assert_eq!(p("/tmp/shot.png").as_deref(), Some("/tmp/shot.png"));
        assert_eq!(p("'/tmp/my shot.PNG'").as_deref(), Some("/tmp/my shot.PNG"));
        assert_eq!(
            p("/tmp/my\\ shot.jpg ").as_deref(),
            Some("/tmp/my shot.jpg")
        );
        assert_eq!(
            p("file:///tmp/my%20shot.webp").as_deref(),
            Some("/tmp/my shot.webp")
        );
        // Text that merely mentions a picture stays text.
        assert!(p("see /tmp/shot.png").is_none());
        assert_eq!(
            p("file://localhost/tmp/a.png").as_deref(),
            Some("/tmp/a.png")
        );
        assert_eq!(p("'/tmp/a\\b.png'").as_deref(), Some("/tmp/a\\b.png"));
        assert!(p("'/tmp/a.png' '/tmp/b.png'").is_none());
        assert!(p("relative/shot.png").is_none());
        assert!(p("/tmp/notes.txt").is_none());
        assert!(p("/tmp/a.png\n/tmp/b.png").is_none());
    }
}
