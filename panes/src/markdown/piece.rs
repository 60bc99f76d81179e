//! Markdown rendered as one piece of a longer text, for laying out a message while it
//! streams: the finished top-level blocks are kept and only the open one is redone.
//!
//! Splitting is left to the parser. When a top-level block starts after others, the ones
//! before it are closed for good (CommonMark decides block structure line by line and never
//! reopens a closed block), so the text up to the line it starts on renders the same alone
//! as inside the whole. Link reference definitions are the exception, they reach across the
//! whole text, so a piece reports them and the caller renders the whole instead.

use pulldown_cmark::Event;
use ratatui::style::Style;
use ratatui::text::Line;

use super::{Renderer, parser};
use crate::highlight::Highlighter;
use crate::theme::Theme;

/// One rendered piece of markdown and where its top-level blocks start.
#[derive(Debug, Default)]
pub(crate) struct Piece {
    /// The lines, including the blank line before the first block when it continues lines.
    pub lines: Vec<Line<'static>>,
    /// Per top-level block that can be split off (see [`line_start`]): the byte offset of
    /// its line and how many of `lines` come before the block.
    pub starts: Vec<(usize, usize)>,
    /// The text defines link references, which can change how any other piece renders.
    pub has_refs: bool,
}

#[cfg(test)]
thread_local! {
    /// Bytes handed to [`render_piece`] on this thread, for tests bounding streaming work.
    pub(crate) static RENDERED_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `text` rendered like [`super::render_markdown`]; `after_lines` says lines ending in a
/// finished block come before it, so its first block is separated by a blank line.
pub(crate) fn render_piece(
    text: &str,
    width: u16,
    base: Style,
    theme: &Theme,
    highlighter: &Highlighter,
    after_lines: bool,
) -> Piece {
    #[cfg(test)]
    RENDERED_BYTES.with(|b| b.set(b.get() + text.len()));
    let mut r = Renderer::new(theme, highlighter, width, base, after_lines);
    let mut starts = Vec::new();
    let mut depth = 0usize;
    let mut events = parser(text).into_offset_iter();
    for (event, range) in events.by_ref() {
        let top = depth == 0 && matches!(event, Event::Start(_) | Event::Rule);
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if top {
            // Before the block's own start the renderer holds nothing but finished lines.
            if let Some(at) = line_start(text, range.start) {
                starts.push((at, r.out.len()));
            }
        }
        r.event(event);
    }
    r.flush_inline();
    let has_refs = events.reference_definitions().iter().next().is_some();
    Piece {
        lines: r.out,
        starts,
        has_refs,
    }
}

/// Where the line holding byte `at` starts, when the block there can be split off: only
/// spaces or tabs come before `at` on its line, a blank line comes before it, and its line
/// is complete. A line still arriving can turn out to continue the block above ("|" is a
/// paragraph, "| 1 |" a table row; "-" a list item, "-x" lazy text of a quote), and after
/// a blank line only indented lines continue a block, which the parser sees at once.
fn line_start(text: &str, at: usize) -> Option<usize> {
    let before = text.get(..at)?;
    let start = before.rfind('\n')? + 1;
    let prev = &before[..start - 1];
    let prev = &prev[prev.rfind('\n').map_or(0, |i| i + 1)..];
    let blank = |s: &str| s.bytes().all(|b| b == b' ' || b == b'\t');
    let complete = text[at..].contains('\n');
    (blank(&before[start..]) && blank(prev) && complete).then_some(start)
}
