//! The virtualised scrollback: only the blocks on screen are laid out, and what was laid out
//! is kept until its block changes or the layout does (width, toggles, theme).
//!
//! The view is anchored to a block, not to a line number: following the bottom it is drawn
//! upwards from the last block; scrolled up it is drawn downwards from the block at its top.
//! So a frame touches the blocks it shows, whatever the transcript's length, and text
//! arriving below does not move what the reader is looking at. Heights of blocks never
//! shown are estimates, kept in a prefix-sum tree for the position shown while scrolled up.
//!
//! Scrolling is requested by the pane's input handlers and resolved at the next frame,
//! where blocks can be measured.
//!
//! A message that is streaming changes every frame; its finished top-level blocks are kept
//! by a [`Stream`] so only its open block is laid out again (see [`super::stream`]).

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::blocks::{BlockContext, render_block, wants_gap};
use super::heights::Heights;
use super::stream::{self, Laid, Stream};
use super::transcript::{Block, Role, Transcript};
use crate::theme::Slot;
use crate::wrap;

/// Laid-out blocks kept beyond the ones on screen.
const CACHE_BLOCKS: usize = 256;
/// More changed blocks than this in one frame are estimated rather than measured.
const MEASURE_CHANGED_LIMIT: usize = 64;

type Lines = Arc<Laid>;

/// What the layout of every block depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Layout {
    width: u16,
    tools_expanded: bool,
    thinking_expanded: bool,
    theme: String,
    pictures: bool,
}

/// The scroll state and the layout caches of one transcript view.
#[derive(Debug, Default)]
pub(crate) struct Scrollback {
    layout: Layout,
    heights: Heights,
    measured: Vec<bool>,
    cache: HashMap<usize, Lines>,
    /// What streaming messages keep between frames, kept as long as their cached lines.
    streams: HashMap<usize, Stream>,
    /// Following the bottom (the default), or anchored at `anchor` (block, line in block).
    scrolled: bool,
    anchor: (usize, usize),
    /// Lines to move at the next frame (negative: up).
    pending: i64,
    /// The top of the last frame, where scrolling up from the bottom starts.
    last_top: (usize, usize),
    viewport: usize,
    /// Lines that arrived below while scrolled up.
    unseen: usize,
    /// Where the last frame was drawn, and the block each of its rows belongs to.
    drawn: (Rect, Vec<usize>),
    /// The line of its block the last frame's first row shows.
    drawn_first_line: usize,
    /// Blocks laid out since creation (cache misses), for tests of the virtualisation.
    renders: u64,
    /// Copy mode is on: every block is laid out and kept, so lines have fixed numbers.
    keep_all: bool,
}

impl Scrollback {
    /// Blocks laid out so far.
    #[cfg(test)]
    pub(crate) fn renders(&self) -> u64 {
        self.renders
    }

    /// The blocks the last frame showed, bottom row first (a block once per row it has).
    pub(crate) fn drawn_blocks(&self) -> impl Iterator<Item = usize> + '_ {
        self.drawn.1.iter().rev().copied()
    }

    /// The block drawn at screen position (`x`, `y`) in the last frame.
    pub(crate) fn block_at(&self, x: u16, y: u16) -> Option<usize> {
        let (area, owners) = &self.drawn;
        if !area.contains(ratatui::layout::Position::new(x, y)) {
            return None;
        }
        owners.get(usize::from(y - area.y)).copied()
    }

    /// The block heights now, to find lines again after a layout (see [`Self::relocate`]).
    pub(crate) fn heights(&self) -> Heights {
        self.heights.clone()
    }

    /// Line `line` as numbered by `before`, numbered now: same block, same line in it.
    pub(crate) fn relocate(&self, before: &Heights, line: usize) -> usize {
        match before.find(line) {
            Some((block, at)) => {
                let h = self.heights.get(block);
                self.heights.prefix(block) + at.min(h.saturating_sub(1))
            }
            None => line,
        }
    }

    /// Each block the last frame showed from its first row, top first: the block, the
    /// screen row it starts on, its first line there and how many of its rows show.
    pub(crate) fn drawn_spans(&self) -> Vec<(usize, u16, usize, usize)> {
        let (area, owners) = &self.drawn;
        let mut spans: Vec<(usize, u16, usize, usize)> = Vec::new();
        for (y, &b) in owners.iter().enumerate() {
            match spans.last_mut() {
                Some(last) if last.0 == b => last.3 += 1,
                _ => {
                    let line = if spans.is_empty() {
                        self.drawn_first_line
                    } else {
                        0
                    };
                    let row = area.y + u16::try_from(y).unwrap_or(u16::MAX);
                    spans.push((b, row, line, 1));
                }
            }
        }
        spans
    }

    /// Whether the last frame's bottom row shows the position (scrolled up).
    pub(crate) fn shows_position(&self) -> bool {
        self.scrolled && !self.keep_all
    }

    /// Where the last frame was drawn.
    pub(crate) fn area(&self) -> Rect {
        self.drawn.0
    }

    /// The height of the last frame.
    pub(crate) fn viewport(&self) -> usize {
        self.viewport
    }

    /// Keeps every block laid out from the next frame on (copy mode), or goes back to
    /// laying out only what shows.
    pub(crate) fn keep_all(&mut self, on: bool) {
        self.keep_all = on;
    }

    /// Lines of the whole transcript (exact once [`Self::all_laid_out`]).
    pub(crate) fn total_lines(&self) -> usize {
        self.heights.total()
    }

    /// The block holding transcript line `line`, and the line within it; `None` past the
    /// end (rows below a short transcript).
    pub(crate) fn locate(&self, line: usize) -> Option<(usize, usize)> {
        if line >= self.heights.total() {
            return None;
        }
        self.heights.find(line)
    }

    /// Block `block` as laid out, when it is kept.
    pub(crate) fn laid(&self, block: usize) -> Option<&Laid> {
        self.cache.get(&block).map(|l| &**l)
    }

    /// The width blocks are laid out at.
    pub(crate) fn width(&self) -> u16 {
        self.layout.width
    }

    /// The transcript line on the first row of the last frame.
    pub(crate) fn top_line(&self) -> usize {
        if self.scrolled {
            self.heights.prefix(self.anchor.0) + self.anchor.1
        } else {
            self.heights.total().saturating_sub(self.viewport)
        }
    }

    /// Shows transcript line `line` on the first row from the next frame (the bottom is
    /// followed when the rest fits).
    pub(crate) fn show_from(&mut self, line: usize) {
        self.pending = 0;
        if line + self.viewport >= self.heights.total() {
            self.scroll_to_bottom();
            return;
        }
        if let Some(at) = self.heights.find(line) {
            self.scrolled = true;
            self.anchor = at;
        }
    }

    /// Moves by `lines` at the next frame (negative: up).
    pub(crate) fn scroll_by(&mut self, lines: i64) {
        self.pending = self.pending.saturating_add(lines);
    }

    /// Shows block `block` at the top from the next frame.
    pub(crate) fn show_block(&mut self, block: usize) {
        self.scrolled = true;
        self.anchor = (block, 0);
        self.pending = 0;
    }

    /// Jumps to the start of the transcript.
    pub(crate) fn scroll_to_top(&mut self) {
        self.scrolled = true;
        self.anchor = (0, 0);
        self.pending = 0;
    }

    /// Follows the bottom again.
    pub(crate) fn scroll_to_bottom(&mut self) {
        self.scrolled = false;
        self.pending = 0;
        self.unseen = 0;
    }

    fn estimate(block: &Block, gap: bool, layout: &Layout) -> usize {
        let cols = usize::from(layout.width).max(1);
        let body = match block {
            Block::Message(m) if m.role == Role::Thought && !layout.thinking_expanded => 1,
            Block::Message(m) => 1 + m.text.len().min(super::blocks::MAX_RENDER_BYTES) / cols,
            Block::Tool(_) if !layout.tools_expanded => 1,
            Block::Tool(t) => 1 + t.body.len() * 4,
            Block::Plan(items) => 1 + items.len(),
            Block::Image(i) if layout.pictures => 1 + usize::from(i.picture.cells(layout.width).1),
            _ => 1,
        };
        body + usize::from(gap)
    }

    /// Brings caches in line with the transcript and the layout.
    fn sync(&mut self, transcript: &mut Transcript, layout: Layout, ctx: &BlockContext<'_>) {
        let (changed, reset) = transcript.take_changes();
        let blocks = transcript.blocks();
        if reset || layout != self.layout || self.heights.len() > blocks.len() {
            self.layout = layout;
            self.cache.clear();
            self.streams.clear();
            self.measured = vec![false; blocks.len()];
            let estimates = (0..blocks.len())
                .map(|i| self.estimate_at(blocks, i))
                .collect();
            self.heights = Heights::from_values(estimates);
            if reset {
                self.scroll_to_bottom();
                self.anchor = (0, 0);
            }
            return;
        }
        let known = self.heights.len();
        for i in known..blocks.len() {
            let h = self.estimate_at(blocks, i);
            self.heights.push(h);
            self.measured.push(false);
        }
        let measure = self.keep_all || (self.scrolled && changed.len() <= MEASURE_CHANGED_LIMIT);
        for i in changed {
            let old = if i < known { self.heights.get(i) } else { 0 };
            self.cache.remove(&i);
            self.measured[i] = false;
            let new = if measure {
                self.lines(blocks, i, ctx).len()
            } else {
                let h = self.estimate_at(blocks, i);
                self.heights.set(i, h);
                h
            };
            // Growth below the anchor is what a reader scrolled up has not seen.
            if self.scrolled && i >= self.anchor.0 {
                self.unseen += new.saturating_sub(old);
            }
        }
    }

    fn estimate_at(&self, blocks: &[Block], i: usize) -> usize {
        let prev = i.checked_sub(1).and_then(|p| blocks.get(p));
        let gap = wants_gap(prev, &blocks[i], self.layout.tools_expanded);
        Self::estimate(&blocks[i], gap, &self.layout)
    }

    /// Block `i` laid out, from the cache or now (then its height is exact).
    fn lines(&mut self, blocks: &[Block], i: usize, ctx: &BlockContext<'_>) -> Lines {
        if let Some(lines) = self.cache.get(&i) {
            return Arc::clone(lines);
        }
        let ctx = &ctx.for_block(i);
        let prev = i.checked_sub(1).and_then(|p| blocks.get(p));
        let gap = wants_gap(prev, &blocks[i], self.layout.tools_expanded);
        let lines = Arc::new(match &blocks[i] {
            Block::Message(m) if stream::streams(m, ctx) => {
                stream::message(m, gap, ctx, self.streams.entry(i).or_default())
            }
            block => Laid::from(render_block(block, gap, ctx)),
        });
        self.renders += 1;
        self.heights.set(i, lines.len());
        self.measured[i] = true;
        self.cache.insert(i, Arc::clone(&lines));
        lines
    }

    /// Applies the scrolling requested since the last frame.
    fn resolve_scroll(&mut self, blocks: &[Block], ctx: &BlockContext<'_>) {
        let pending = std::mem::take(&mut self.pending);
        if pending == 0 || blocks.is_empty() {
            return;
        }
        if !self.scrolled {
            if pending > 0 {
                return;
            }
            self.scrolled = true;
            self.anchor = self.last_top;
            self.unseen = 0;
        }
        let (mut b, mut l) = self.anchor;
        b = b.min(blocks.len() - 1);
        let mut k = pending.unsigned_abs() as usize;
        if pending < 0 {
            while k > 0 {
                if l >= k {
                    l -= k;
                    break;
                }
                k -= l;
                if b == 0 {
                    l = 0;
                    break;
                }
                b -= 1;
                l = self.lines(blocks, b, ctx).len();
            }
        } else {
            while k > 0 {
                let h = self.lines(blocks, b, ctx).len();
                if l + k < h {
                    l += k;
                    break;
                }
                k -= h - l;
                b += 1;
                l = 0;
                if b >= blocks.len() {
                    self.scroll_to_bottom();
                    return;
                }
            }
        }
        self.anchor = (b, l);
    }

    /// Draws the transcript into `area`.
    pub(crate) fn draw(
        &mut self,
        transcript: &mut Transcript,
        area: Rect,
        buf: &mut Buffer,
        ctx: &BlockContext<'_>,
    ) {
        let layout = Layout {
            width: area.width,
            tools_expanded: ctx.tools_expanded,
            thinking_expanded: ctx.thinking_expanded,
            theme: ctx.theme.name.clone(),
            pictures: ctx.pictures,
        };
        self.sync(transcript, layout, ctx);
        let blocks = transcript.blocks();
        if self.keep_all {
            for i in 0..blocks.len() {
                if !self.cache.contains_key(&i) {
                    self.lines(blocks, i, ctx);
                }
            }
        }
        self.viewport = usize::from(area.height);
        self.resolve_scroll(blocks, ctx);
        self.drawn = (area, Vec::new());
        if blocks.is_empty() || area.height == 0 {
            return;
        }
        let h = usize::from(area.height);
        let mut rows: Vec<Line<'static>> = Vec::with_capacity(h);
        let mut owners: Vec<usize> = Vec::with_capacity(h);
        let mut shown = Vec::new();
        if self.scrolled {
            let (mut b, mut l) = self.anchor;
            b = b.min(blocks.len() - 1);
            let mut first = true;
            while rows.len() < h && b < blocks.len() {
                let lines = self.lines(blocks, b, ctx);
                l = l.min(lines.len().saturating_sub(1));
                if first {
                    self.drawn_first_line = l;
                    first = false;
                }
                let before = rows.len();
                rows.extend(lines.iter().skip(l).take(h - rows.len()).cloned());
                owners.resize(rows.len().max(before), b);
                shown.push(b);
                b += 1;
                l = 0;
            }
            if rows.len() < h {
                // The end came into view: follow it again.
                self.scroll_to_bottom();
                return self.draw(transcript, area, buf, ctx);
            }
        } else {
            let mut stack = Vec::new();
            let mut have = 0;
            let mut i = blocks.len();
            while i > 0 && have < h {
                i -= 1;
                let lines = self.lines(blocks, i, ctx);
                have += lines.len();
                stack.push((i, lines));
            }
            let mut skip = have.saturating_sub(h);
            if let Some((top, _)) = stack.last() {
                self.last_top = (*top, skip);
                self.drawn_first_line = skip;
            }
            for (i, lines) in stack.into_iter().rev() {
                rows.extend(lines.iter().skip(skip).cloned());
                owners.resize(rows.len(), i);
                skip = skip.saturating_sub(lines.len());
                shown.push(i);
            }
        }
        owners.truncate(h);
        self.drawn = (area, owners);
        for (y, line) in rows.iter().take(h).enumerate() {
            crate::cells::put_line(buf, area.x, area.y + y as u16, line, area.width);
        }
        if self.scrolled && !self.keep_all {
            self.draw_position(area, buf, ctx);
        }
        self.trim_cache(&shown);
    }

    /// The position and the new-lines indicator on the bottom row while scrolled up.
    fn draw_position(&self, area: Rect, buf: &mut Buffer, ctx: &BlockContext<'_>) {
        let total = self.heights.total().max(1);
        let seen = self.heights.prefix(self.anchor.0) + self.anchor.1 + self.viewport;
        let percent = (seen.min(total) * 100) / total;
        let mut text = format!(" {percent}% ");
        if self.unseen > 0 {
            let s = if self.unseen == 1 { "" } else { "s" };
            text = format!(" {percent}% · ↓ {} new line{s} ", self.unseen);
        }
        let text = wrap::truncate(&text, usize::from(area.width));
        let w = wrap::width(&text) as u16;
        let x = area.x + area.width.saturating_sub(w);
        let y = area.y + area.height.saturating_sub(1);
        let line = Line::from(Span::styled(text, ctx.theme.style(Slot::Hint)));
        buf.set_line(x, y, &line, w);
    }

    fn trim_cache(&mut self, shown: &[usize]) {
        if self.keep_all || self.cache.len() <= CACHE_BLOCKS && self.streams.len() <= CACHE_BLOCKS {
            return;
        }
        let (lo, hi) = match (shown.iter().min(), shown.iter().max()) {
            (Some(lo), Some(hi)) => (*lo, *hi),
            _ => (0, 0),
        };
        let keep = CACHE_BLOCKS / 2;
        self.cache.retain(|&i, _| i + keep >= lo && i <= hi + keep);
        self.streams
            .retain(|&i, _| i + keep >= lo && i <= hi + keep);
    }
}
