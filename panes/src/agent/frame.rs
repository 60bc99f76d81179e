//! Drawing the pane: border with title and status, transcript, separator, prompt, and the
//! overlays on top.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use ratatui::style::{Modifier, Style};

use super::AgentPane;
use super::blocks::BlockContext;
use super::copy::TranscriptLines;
use crate::avatar;
use crate::chrome::pane_block;
use crate::copy::CopyMark;
use crate::highlight::Highlighter;
use crate::theme::{Slot, Theme};
use crate::wrap;

impl AgentPane {
    /// Draws the pane into `area`: border with title and status, transcript, prompt, and
    /// on top the completion popup, the permission modal or the picker.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        highlighter: &Highlighter,
        focused: bool,
    ) {
        self.focused = focused;
        self.cursor = None;
        self.forget_placements();
        if focused {
            self.unread = false;
        }
        let area = area.intersection(buf.area);
        if area.width < 4 || area.height < 3 {
            return;
        }
        highlighter.set_theme(theme);
        let inner = self.render_frame(area, buf, theme, focused);
        // A column of air on each side, when there is room for it.
        let pad = u16::from(inner.width > 20);
        let content = Rect::new(
            inner.x + pad,
            inner.y,
            inner.width.saturating_sub(2 * pad),
            inner.height,
        );
        // The prompt needs its separator and a row, and leaves the transcript one.
        let prompt_rows = if inner.height >= 3 {
            let cap = (inner.height / 3).max(1);
            self.prompt.rows(content.width.saturating_sub(2), cap)
        } else {
            0
        };
        // Prompts waiting for the turn show under the editor, up to three rows.
        let queued_rows = if prompt_rows > 0 && inner.height >= 8 {
            u16::try_from(self.queued.len().min(3)).unwrap_or(3)
        } else {
            0
        };
        let attached_rows = if prompt_rows > 0 && inner.height >= 6 {
            self.pictures.rows()
        } else {
            0
        };
        let chrome = if prompt_rows > 0 {
            prompt_rows + 1 + queued_rows + attached_rows
        } else {
            0
        };
        let transcript_rows = inner.height.saturating_sub(chrome);
        let transcript_area = Rect::new(content.x, content.y, content.width, transcript_rows);
        self.resolve_reveal();
        let ctx = BlockContext {
            theme,
            highlighter,
            width: content.width,
            tools_expanded: self.tools_expanded,
            thinking_expanded: self.thinking_expanded,
            expanded: &self.expanded,
            pictures: self.pictures.shown(),
        };
        // Copy mode keeps its places on their text when blocks are laid out anew.
        let before = self.copy.as_ref().map(|_| self.scroll.heights());
        self.scroll
            .draw(&mut self.transcript, transcript_area, buf, &ctx);
        self.place_pictures(transcript_area, buf);
        if let (Some(before), Some(state)) = (before, self.copy.as_mut()) {
            let scroll = &self.scroll;
            state.mode.remap(|line| scroll.relocate(&before, line));
            self.draw_copy_marks(transcript_area, buf, theme);
        }
        let modal_open =
            !self.permissions.is_empty() || self.picker.is_some() || self.tree.is_some();
        let sep_y = inner.y + transcript_rows;
        if prompt_rows > 0 {
            self.render_separator(Rect::new(inner.x, sep_y, inner.width, 1), buf, theme);
            let prompt_area = Rect::new(
                content.x + 2,
                sep_y + 1,
                content.width.saturating_sub(2),
                prompt_rows,
            );
            let marker = Line::from(Span::styled("› ", theme.style(Slot::UserMarker)));
            buf.set_line(content.x, sep_y + 1, &marker, content.width.min(2));
            self.cursor = self
                .prompt
                .render(prompt_area, buf, theme, focused && !modal_open);
            self.pictures.render(
                Rect::new(
                    content.x,
                    prompt_area.bottom(),
                    content.width,
                    attached_rows,
                ),
                buf,
                theme,
            );
            let first = prompt_area.bottom() + attached_rows;
            self.render_queued(
                Rect::new(content.x, first, content.width, queued_rows),
                buf,
                theme,
            );
        }

        if self.mentions.is_open() && !modal_open {
            let h = self.mentions.height().min(transcript_rows);
            let popup = Rect::new(inner.x, sep_y.saturating_sub(h), inner.width, h);
            self.mentions.render(popup, buf, theme);
        } else if self.completion.is_open() && !modal_open {
            let h = self.completion.height().min(transcript_rows);
            let popup = Rect::new(inner.x, sep_y.saturating_sub(h), inner.width, h);
            self.completion.render(popup, buf, theme);
        }
        if let Some(modal) = self.permissions.front() {
            let waiting = self.permissions.len() - 1;
            let shown = self.pictures_shown();
            let held = !self.permissions.armed(std::time::Instant::now());
            // Over the transcript, so what is typed meanwhile shows in the editor below;
            // the whole pane when the transcript's rows are too few for a question.
            let above = sep_y.saturating_sub(inner.y);
            let area = if above >= 12 {
                Rect::new(inner.x, inner.y, inner.width, above)
            } else {
                inner
            };
            if let Some(placed) = modal.render(area, buf, theme, waiting, held, shown) {
                self.picture_found(placed);
            }
        } else if let Some(tree) = &self.tree {
            tree.render(inner, buf, theme);
        } else if let Some(picker) = &self.picker {
            picker.render(inner, buf, theme);
        }
        self.placed_pictures(buf);
    }

    /// Copy mode's cursor, selection and search matches over the transcript.
    fn draw_copy_marks(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(state) = self.copy.as_ref() else {
            return;
        };
        let lines = TranscriptLines {
            scroll: &mut self.scroll,
            blocks: self.transcript.blocks(),
        };
        let selected = theme.style(Slot::Selection);
        let found = theme.style(Slot::Warning).add_modifier(Modifier::REVERSED);
        let cursor = Style::default().add_modifier(Modifier::REVERSED);
        for row in 0..area.height {
            let matches = state.mode.matches_on_row(&lines, row);
            for col in 0..area.width {
                let style = match state.mode.mark(&lines, row, col) {
                    Some(CopyMark::Cursor) => Some(cursor),
                    Some(CopyMark::Selected) => Some(selected),
                    Some(CopyMark::Match) | None => matches
                        .iter()
                        .any(|(a, b)| col >= *a && col <= *b)
                        .then_some(found),
                };
                if let Some(style) = style
                    && let Some(cell) = buf.cell_mut((area.x + col, area.y + row))
                {
                    cell.set_style(style);
                }
            }
        }
    }

    /// Copy mode's status line (position, search being typed), while it is on.
    pub(crate) fn copy_status(&mut self) -> Option<String> {
        let state = self.copy.as_ref()?;
        let lines = TranscriptLines {
            scroll: &mut self.scroll,
            blocks: self.transcript.blocks(),
        };
        Some(state.mode.status(&lines))
    }

    /// The border, the title on the left and the status on the right; returns the inside.
    fn render_frame(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) -> Rect {
        let status = self.status();
        let mut right = status.summary();
        if status.waiting_for_permission {
            right = format!("? permission · {right}");
        } else if status.busy {
            right = format!("● working · {right}");
        }
        let right = right.trim_end_matches([' ', '·']).to_string();
        // The avatar goes first in the title, in the room of its cells and a space.
        let avatar = self.has_avatar() && area.width >= 16;
        let lead = if avatar {
            " ".repeat(usize::from(avatar::WIDTH) + 1)
        } else {
            String::new()
        };
        let (title, right) = share_border(
            &format!("{lead}{}", self.border_title()),
            &right,
            usize::from(area.width),
        );
        let mut block = pane_block(&title, focused, theme);
        if !right.is_empty() {
            block = block.title(
                Line::from(Span::styled(
                    format!(" {right} "),
                    theme.style(Slot::TextDim),
                ))
                .right_aligned(),
            );
        }
        let inner = block.inner(area);
        block.render(area, buf);
        if avatar {
            // Where the title's text starts: past the corner and the space before it.
            let at = (area.x + 2, area.y);
            let base = buf[at].style();
            self.render_avatar(at, buf, theme, base);
        }
        inner
    }

    /// The queued prompts, one row each (the last row counts those that do not fit).
    fn render_queued(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rows = usize::from(area.height);
        for (i, q) in self.queued.iter().take(rows).enumerate() {
            let more = self.queued.len() - i - 1;
            let line = if i + 1 == rows && more > 0 {
                format!(
                    "⧗ queued: {} more (↑ on an empty prompt takes the last back)",
                    more + 1
                )
            } else {
                let first = q.text.lines().next().unwrap_or_default();
                format!("⧗ {}: {}", q.label(), crate::sanitize::sanitize_line(first))
            };
            let line = wrap::truncate(&line, usize::from(area.width));
            let y = area.y + u16::try_from(i).unwrap_or(u16::MAX);
            buf.set_line(
                area.x,
                y,
                &Line::from(Span::styled(line, theme.style(Slot::TextDim))),
                area.width,
            );
        }
    }

    fn render_separator(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rule = "─".repeat(usize::from(area.width));
        buf.set_line(
            area.x,
            area.y,
            &Line::from(Span::styled(rule, theme.style(Slot::Border))),
            area.width,
        );
        let search = self.prompt.search_state().map(|(query, found)| {
            let miss = if found { "" } else { " (no match)" };
            format!("history search: {query}{miss} · enter keeps · esc")
        });
        if let Some(status) = self.copy_status().or(search) {
            let status = wrap::truncate(&format!(" {status} "), usize::from(area.width));
            let w = wrap::width(&status) as u16;
            let x = area.x + area.width.saturating_sub(w + 1);
            let line = Line::from(Span::styled(status, theme.style(Slot::StatusBarAccent)));
            buf.set_line(x, area.y, &line, w.min(area.width));
            return;
        }
        // Every running turn shows as working, with its elapsed time; waiting on the model
        // says so with how long it has been silent.
        let elapsed = self
            .turn_since()
            .map(|since| elapsed_text(since.elapsed().as_secs()));
        let queued = if self.queued.is_empty() {
            String::new()
        } else {
            format!(" · {} queued", self.queued.len())
        };
        let hint = match (self.model_wait(), elapsed) {
            (Some(since), Some(elapsed)) => {
                let secs = since.elapsed().as_secs();
                let long = format!(
                    " working {elapsed} · waiting for the model {secs} s{queued} · esc cancels "
                );
                if wrap::width(&long) + 2 <= usize::from(area.width) {
                    long
                } else {
                    format!(" model {secs} s · esc ")
                }
            }
            (None, Some(elapsed)) => {
                let long = format!(" working {elapsed}{queued} · esc cancels ");
                if wrap::width(&long) + 2 <= usize::from(area.width) {
                    long
                } else {
                    format!(" working {elapsed} · esc ")
                }
            }
            _ => String::new(),
        };
        if !hint.is_empty() {
            let w = wrap::width(&hint) as u16;
            let x = area.x + area.width.saturating_sub(w + 1);
            let line = Line::from(Span::styled(hint, theme.style(Slot::Hint)));
            buf.set_line(x, area.y, &line, w.min(area.width));
        }
    }
}

/// Cuts the border's title and status so both fit in a border `width` wide, each with an
/// ellipsis where cut: the title keeps at least half of the room (all it needs when the
/// status is short), the status the rest, and goes when fewer than 6 columns are left.
pub(crate) fn share_border(title: &str, status: &str, width: usize) -> (String, String) {
    // Two corners, and a space either side of each text.
    let room = width.saturating_sub(4);
    let (title_w, status_w) = (wrap::width(title), wrap::width(status));
    // Whole, they may touch (two spaces apart); cut, a piece of border parts them.
    if status_w == 0 || title_w + status_w + 2 <= room {
        return (wrap::truncate(title, room), status.to_string());
    }
    let title_room = title_w.min(room.saturating_sub(status_w + 3).max(room / 2));
    let cut = wrap::truncate(title, title_room);
    let status_room = room.saturating_sub(wrap::width(&cut) + 3);
    if status_room < 6 {
        // No room worth having for the status: the title takes it all.
        return (wrap::truncate(title, room), String::new());
    }
    (cut, wrap::truncate(status, status_room))
}

/// `42 s`, `3 m 05 s`, `1 h 02 m`.
fn elapsed_text(secs: u64) -> String {
    match (secs / 3600, secs / 60 % 60, secs % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} m {s:02} s"),
        (h, m, _) => format!("{h} h {m:02} m"),
    }
}
