//! Layout of messages that grow while the agent streams them.
//!
//! Every chunk changes its message, and laying the whole markdown out again each frame
//! would cost the message's length per frame. Instead the top-level blocks that can no
//! longer change are kept as laid-out pieces (see [`crate::markdown::render_piece`]) and
//! only the text after them, the block still open, is laid out again. A block's lines are
//! then those pieces plus a few lines of its own, shared rather than copied, and a frame
//! copies only the lines it shows.

use std::sync::Arc;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::blocks::{BlockContext, capped, indented, more_bytes_line};
use super::transcript::{Message, Role};
use crate::markdown::{Piece, render_piece};
use crate::theme::Slot;

/// Lines laid out once and shared between a stream and the blocks built from it.
type Part = Arc<Vec<Line<'static>>>;

/// Where top-level markdown blocks start: (line, byte of the text).
type Starts = Vec<(usize, usize)>;

/// A block's lines: its own first lines, the pieces shared with a stream, its last lines.
#[derive(Debug, Default)]
pub(crate) struct Laid {
    head: Vec<Line<'static>>,
    parts: Arc<Vec<Part>>,
    tail: Vec<Line<'static>>,
    len: usize,
    /// For a message's markdown: where each top-level block starts, as (line of this
    /// block, byte of the message's text), so copying can give the text as written.
    pub(crate) sources: Starts,
}

impl From<Vec<Line<'static>>> for Laid {
    fn from(lines: Vec<Line<'static>>) -> Self {
        Laid::new(lines, Arc::default(), Vec::new())
    }
}

impl Laid {
    fn new(head: Vec<Line<'static>>, parts: Arc<Vec<Part>>, tail: Vec<Line<'static>>) -> Self {
        let len = head.len() + parts.iter().map(|p| p.len()).sum::<usize>() + tail.len();
        Laid {
            head,
            parts,
            tail,
            len,
            sources: Vec::new(),
        }
    }

    /// Line `i`, if there is one.
    pub(crate) fn get(&self, i: usize) -> Option<&Line<'static>> {
        if i < self.head.len() {
            return self.head.get(i);
        }
        let mut i = i - self.head.len();
        for part in self.parts.iter() {
            if i < part.len() {
                return part.get(i);
            }
            i -= part.len();
        }
        self.tail.get(i)
    }

    /// Number of lines.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The lines in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Line<'static>> + '_ {
        self.head
            .iter()
            .chain(self.parts.iter().flat_map(|p| p.iter()))
            .chain(self.tail.iter())
    }
}

/// What is kept of one message's markdown between frames.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    /// Bytes of the text whose lines are kept in `parts`; a line start.
    done: usize,
    parts: Arc<Vec<Part>>,
    /// Lines in `parts`.
    lines: usize,
    /// The text defines link references, so it is laid out whole every time.
    whole: bool,
    /// Where the top-level blocks in `parts` start: (line in `parts`, byte of the text).
    starts: Starts,
}

impl Stream {
    /// The lines of `text`, which only grows between calls: the pieces kept, then the rest
    /// laid out now by `render(text, after_lines)`.
    fn lay_out(
        &mut self,
        text: &str,
        render: impl Fn(&str, bool) -> Piece,
    ) -> (Arc<Vec<Part>>, Vec<Line<'static>>, Starts) {
        if self.whole {
            let piece = render(text, false);
            return (Arc::default(), piece.lines, piece.starts);
        }
        // Text that no longer extends what was kept cannot reuse it.
        let open = match text.get(self.done..) {
            Some(open) if self.done == 0 || text[..self.done].ends_with('\n') => open,
            _ => {
                *self = Stream::default();
                text
            }
        };
        let piece = render(open, self.lines > 0);
        if piece.has_refs {
            let kept = self.done > 0;
            *self = Stream {
                whole: true,
                ..Stream::default()
            };
            let piece = if kept { render(text, false) } else { piece };
            return (Arc::default(), piece.lines, piece.starts);
        }
        let mut lines = piece.lines;
        let (done, kept) = (self.done, self.lines);
        let mut starts = self.starts.clone();
        starts.extend(piece.starts.iter().map(|&(at, n)| (kept + n, done + at)));
        // Everything before the last block to start is final: keep it.
        if let Some(&(at, n)) = piece.starts.last() {
            let rest = lines.split_off(n.min(lines.len()));
            if !lines.is_empty() {
                self.lines += lines.len();
                Arc::make_mut(&mut self.parts).push(Arc::new(lines));
            }
            // The open block's start stays known: its next piece begins there.
            self.starts.clone_from(&starts);
            self.done += at;
            lines = rest;
        }
        (Arc::clone(&self.parts), lines, starts)
    }
}

/// Whether `m` is laid out through a [`Stream`] (its markdown is shown).
pub(crate) fn streams(m: &Message, ctx: &BlockContext<'_>) -> bool {
    match m.role {
        Role::Agent => true,
        Role::Thought => ctx.thinking_expanded,
        Role::User => false,
    }
}

/// The lines of message `m` (one that [`streams`]), as [`super::blocks::render_block`]
/// gives them, reusing what `stream` kept from earlier frames.
pub(crate) fn message(m: &Message, gap: bool, ctx: &BlockContext<'_>, stream: &mut Stream) -> Laid {
    let (text, rest) = capped(&m.text);
    let mut head = Vec::new();
    if gap {
        head.push(Line::default());
    }
    let (parts, mut tail, starts) = if m.role == Role::Thought {
        let style = ctx.theme.style(Slot::Thinking);
        head.push(Line::from(Span::styled("✻ Thinking", style)));
        let width = ctx.width.saturating_sub(2);
        stream.lay_out(text, |t, after| {
            let piece = render_piece(t, width, style, ctx.theme, ctx.highlighter, after);
            let mut lines = Vec::with_capacity(piece.lines.len());
            indented(piece.lines, "  ", Style::default(), &mut lines);
            Piece { lines, ..piece }
        })
    } else {
        let style = ctx.theme.style(Slot::Agent);
        stream.lay_out(text, |t, after| {
            render_piece(t, ctx.width, style, ctx.theme, ctx.highlighter, after)
        })
    };
    if rest > 0 {
        tail.push(more_bytes_line(rest, ctx));
    }
    let lines_before = head.len();
    let mut laid = Laid::new(head, parts, tail);
    laid.sources = starts
        .into_iter()
        .map(|(line, byte)| (lines_before + line, byte))
        .collect();
    laid
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
