//! One transcript block drawn as lines at a width: messages (the agent's as markdown),
//! thinking (one line until expanded), tool calls (one line, or their output; diffs always
//! inline), plans, notices and compactions.
//!
//! Extreme sizes are cut before layout: a message shows its first [`MAX_RENDER_BYTES`] and
//! says how much more there is; tool output shows [`MAX_OUTPUT_LINES`] lines.

use agent_client_protocol::v1::schema::{CompactionStatus, PlanEntryStatus, ToolKind};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::diff::{self, DiffLineKind};
use super::transcript::{
    Block, Compaction, ImageView, Message, PlanItem, Role, Severity, ToolBody, ToolCallView,
    ToolState,
};
use crate::highlight::Highlighter;
use crate::markdown::{CUT_MARKER, render_markdown};
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// Bytes of a message laid out; the rest is summarised in one line (copy gets all of it).
pub(crate) const MAX_RENDER_BYTES: usize = 256 * 1024;
/// Lines of tool output shown when tool calls are expanded.
pub(crate) const MAX_OUTPUT_LINES: usize = 20;
/// Diff lines shown while tool calls are collapsed (all diff lines up to
/// [`MAX_DIFF_LINES`] when expanded).
pub(crate) const COLLAPSED_DIFF_LINES: usize = 12;
/// Lines of a running command's terminal shown under a collapsed tool call.
const LIVE_TAIL_LINES: usize = 5;

/// Last lines of a failed call's output shown while tool calls are collapsed: why it failed
/// (a command's error, the sandbox's refusal) without expanding.
const FAILED_TAIL_LINES: usize = 3;

/// Diff lines shown when tool calls are expanded.
pub(crate) const MAX_DIFF_LINES: usize = 200;

/// What a block's look depends on besides the block itself.
pub(crate) struct BlockContext<'a> {
    pub theme: &'a Theme,
    pub highlighter: &'a Highlighter,
    pub width: u16,
    pub tools_expanded: bool,
    pub thinking_expanded: bool,
    /// Blocks expanded or collapsed one by one, by index, over the toggles above.
    pub expanded: &'a std::collections::HashMap<usize, bool>,
    /// An attached terminal shows pictures: they get their rows under their label.
    pub pictures: bool,
}

impl<'a> BlockContext<'a> {
    /// The context block `i` is laid out in: its own expansion when it has one.
    pub(crate) fn for_block(&self, i: usize) -> BlockContext<'a> {
        let own = self.expanded.get(&i).copied();
        BlockContext {
            theme: self.theme,
            highlighter: self.highlighter,
            width: self.width,
            tools_expanded: own.unwrap_or(self.tools_expanded),
            thinking_expanded: own.unwrap_or(self.thinking_expanded),
            expanded: self.expanded,
            pictures: self.pictures,
        }
    }
}

impl BlockContext<'_> {
    fn style(&self, slot: Slot) -> Style {
        self.theme.style(slot)
    }

    fn cols(&self) -> usize {
        usize::from(self.width).max(1)
    }
}

/// The lines of `block`; `gap` puts a blank line before it.
pub(crate) fn render_block(block: &Block, gap: bool, ctx: &BlockContext<'_>) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if gap {
        out.push(Line::default());
    }
    match block {
        Block::Message(m) => message(m, ctx, &mut out),
        Block::Image(i) => picture(i, ctx, &mut out),
        Block::Tool(t) => tool(t, ctx, &mut out),
        Block::Plan(items) => plan(items, ctx, &mut out),
        Block::Notice {
            severity,
            title,
            detail,
        } => notice(*severity, title, detail.as_deref(), ctx, &mut out),
        Block::Compaction(c) => compaction(c, ctx, &mut out),
    }
    out
}

/// Whether a blank line separates `block` from the one before it. Consecutive tool calls
/// sit together while collapsed, like a list.
pub(crate) fn wants_gap(prev: Option<&Block>, block: &Block, tools_expanded: bool) -> bool {
    match prev {
        None => false,
        Some(Block::Tool(_)) if matches!(block, Block::Tool(_)) => tools_expanded,
        // A message's pictures sit under its text.
        Some(prev) if matches!(block, Block::Image(i) if role_of(prev) == Some(i.role)) => false,
        Some(_) => true,
    }
}

/// Who wrote `block`, when it is a message or a picture.
fn role_of(block: &Block) -> Option<Role> {
    match block {
        Block::Message(m) => Some(m.role),
        Block::Image(i) => Some(i.role),
        _ => None,
    }
}

/// `text` cut to [`MAX_RENDER_BYTES`] on a character boundary, and how many bytes were left.
pub(crate) fn capped(text: &str) -> (&str, usize) {
    if text.len() <= MAX_RENDER_BYTES {
        return (text, 0);
    }
    let mut end = MAX_RENDER_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text.len() - end)
}

/// The line saying how much of a message is not laid out.
pub(crate) fn more_bytes_line(rest: usize, ctx: &BlockContext<'_>) -> Line<'static> {
    let text = format!(
        "… {} more (copy the message to get all of it)",
        human_bytes(rest)
    );
    Line::from(Span::styled(
        wrap::truncate(&text, ctx.cols()),
        ctx.style(Slot::TextDim),
    ))
}

/// Columns a user's picture is indented by (under the prompt marker's text).
pub(crate) const USER_PICTURE_INDENT: u16 = 2;

/// A picture: its label, then, when a terminal shows pictures, the blank rows it is drawn
/// over (the last rows of the block: see [`super::AgentPane::placements`]).
fn picture(i: &ImageView, ctx: &BlockContext<'_>, out: &mut Vec<Line<'static>>) {
    let (marker, indent) = match i.role {
        Role::User => ("› ", USER_PICTURE_INDENT),
        _ => ("", 0),
    };
    let label = wrap::truncate(
        &i.picture.label(),
        ctx.cols().saturating_sub(usize::from(indent)),
    );
    out.push(Line::from(vec![
        Span::styled(marker, ctx.style(Slot::UserMarker)),
        Span::styled(label, ctx.style(Slot::TextDim)),
    ]));
    if ctx.pictures {
        let (_, rows) = i.picture.cells(ctx.width.saturating_sub(indent));
        out.extend((0..rows).map(|_| Line::default()));
    }
}

fn message(m: &Message, ctx: &BlockContext<'_>, out: &mut Vec<Line<'static>>) {
    let (text, rest) = capped(&m.text);
    match m.role {
        Role::User => {
            let body = text.trim_end_matches('\n');
            let first = [Span::styled("› ", ctx.style(Slot::UserMarker))];
            let indent = [Span::raw("  ")];
            let spans = [(body.to_string(), ctx.style(Slot::User))];
            out.extend(wrap::wrap(&spans, ctx.cols(), &first, &indent));
        }
        Role::Agent => out.extend(render_markdown(
            text,
            ctx.width,
            ctx.style(Slot::Agent),
            ctx.theme,
            ctx.highlighter,
        )),
        Role::Thought => {
            let style = ctx.style(Slot::Thinking);
            if !ctx.thinking_expanded {
                let n = m.text.lines().count();
                let label = format!("✻ Thinking… ({n} line{})", if n == 1 { "" } else { "s" });
                out.push(Line::from(Span::styled(
                    wrap::truncate(&label, ctx.cols()),
                    style,
                )));
                return;
            }
            out.push(Line::from(Span::styled("✻ Thinking", style)));
            indented(
                render_markdown(
                    text,
                    ctx.width.saturating_sub(2),
                    style,
                    ctx.theme,
                    ctx.highlighter,
                ),
                "  ",
                Style::default(),
                out,
            );
        }
    }
    if rest > 0 {
        out.push(more_bytes_line(rest, ctx));
    }
}

/// `lines` each behind `prefix`.
pub(crate) fn indented(
    lines: Vec<Line<'static>>,
    prefix: &str,
    style: Style,
    out: &mut Vec<Line<'static>>,
) {
    for line in lines {
        let mut b = LineBuilder::new(&[Span::styled(prefix.to_string(), style)]);
        for span in line.spans {
            b.push(&span.content, span.style);
        }
        out.push(b.finish());
    }
}

/// The short word a tool kind is shown as.
pub(crate) fn kind_label(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Edit => "edit",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Search => "search",
        ToolKind::Execute => "run",
        ToolKind::Think => "think",
        ToolKind::Fetch => "fetch",
        ToolKind::SwitchMode => "mode",
        _ => "tool",
    }
}

fn state_look(state: ToolState) -> (&'static str, &'static str, Slot) {
    match state {
        ToolState::Pending => ("○", "pending", Slot::ToolPending),
        ToolState::Running => ("◐", "running", Slot::ToolRunning),
        ToolState::Done => ("✓", "done", Slot::ToolDone),
        ToolState::Failed => ("✗", "failed", Slot::ToolFailed),
        ToolState::Rejected => ("✗", "rejected", Slot::TextDim),
        ToolState::Cancelled => ("⊘", "cancelled", Slot::TextDim),
    }
}

/// `1.2s`, `45s`, `3m 05s`, `120ms`.
pub(crate) fn human_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        format!("{}m {:02}s", s / 60, s % 60)
    }
}

/// `812 B`, `4.2 KB`, `4.8 MB`.
pub(crate) fn human_bytes(n: usize) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if f < KB {
        format!("{n} B")
    } else if f < KB * KB {
        format!("{:.1} KB", f / KB)
    } else {
        format!("{:.1} MB", f / (KB * KB))
    }
}

fn tool(t: &ToolCallView, ctx: &BlockContext<'_>, out: &mut Vec<Line<'static>>) {
    let diffs: Vec<(&str, diff::UnifiedDiff)> = t
        .body
        .iter()
        .filter_map(|b| match b {
            ToolBody::Diff { path, old, new } => {
                Some((path.as_str(), diff::unified(old.as_deref(), new)))
            }
            _ => None,
        })
        .collect();
    out.push(tool_header(t, &diffs, ctx));
    let gutter = [Span::styled("  │ ", ctx.style(Slot::Border))];
    let diff_cap = if ctx.tools_expanded {
        MAX_DIFF_LINES
    } else {
        COLLAPSED_DIFF_LINES
    };
    for (path, d) in &diffs {
        diff_lines(path, d, diff_cap, &gutter, ctx, out);
    }
    let live = matches!(t.state, ToolState::Pending | ToolState::Running);
    if !ctx.tools_expanded {
        // A command running in a terminal shows its last lines as they come.
        if live {
            let from = t.terminal_tail.len().saturating_sub(LIVE_TAIL_LINES);
            for line in &t.terminal_tail[from..] {
                out.push(gutter_line(&gutter, line, ctx.style(Slot::TextDim), ctx));
            }
        }
        if t.state == ToolState::Failed {
            // A command run in a terminal reports its output (and any note) as raw output.
            let text = t
                .body
                .iter()
                .rev()
                .find_map(|b| match b {
                    ToolBody::Text(text) => Some(text.as_str()),
                    _ => None,
                })
                .or(t.raw_output.as_deref());
            let lines: Vec<&str> = text
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect();
            let from = lines.len().saturating_sub(FAILED_TAIL_LINES);
            for line in &lines[from..] {
                out.push(gutter_line(&gutter, line, ctx.style(Slot::TextDim), ctx));
            }
        }
        return;
    }
    // The whole command, which the one-line title may cut.
    if let Some(command) = t.command.as_deref().filter(|c| !title_shows(&t.title, c)) {
        let spans = [(format!("$ {command}"), ctx.style(Slot::Text))];
        out.extend(wrap::wrap(&spans, ctx.cols(), &gutter, &gutter));
    }
    let mut shown_text = false;
    for body in &t.body {
        match body {
            ToolBody::Text(text) => {
                shown_text = true;
                output_lines(text, t.kind == ToolKind::Execute, &gutter, ctx, out);
            }
            ToolBody::Terminal(id) if t.terminal_tail.is_empty() || t.raw_output.is_some() => {
                let line = format!("terminal {id}");
                out.push(gutter_line(&gutter, &line, ctx.style(Slot::TextDim), ctx));
            }
            ToolBody::Terminal(_) => {
                for line in &t.terminal_tail {
                    out.push(gutter_line(&gutter, line, ctx.style(Slot::TextDim), ctx));
                }
            }
            ToolBody::Diff { .. } => {}
        }
    }
    if let (Some(raw), false) = (&t.raw_output, shown_text) {
        output_lines(raw, true, &gutter, ctx, out);
    }
}

/// Whether a call's title already shows its whole command.
fn title_shows(title: &str, command: &str) -> bool {
    !command.contains('\n') && title.ends_with(command)
}

fn tool_header(
    t: &ToolCallView,
    diffs: &[(&str, diff::UnifiedDiff)],
    ctx: &BlockContext<'_>,
) -> Line<'static> {
    let (icon, word, slot) = state_look(t.state);
    let state_style = ctx.style(slot);
    let mut right = if t.outside {
        format!("⚠ unsandboxed · {word}")
    } else {
        word.to_string()
    };
    // A cancelled call never finished, so how long it had run says little.
    if let (Some(d), false) = (t.duration(), t.state == ToolState::Cancelled) {
        right.push(' ');
        right.push_str(&human_duration(d));
    }
    let (added, removed) = diffs
        .iter()
        .fold((0, 0), |(a, r), (_, d)| (a + d.added, r + d.removed));
    let counts = if diffs.is_empty() {
        String::new()
    } else {
        format!("+{added} -{removed} ")
    };
    let label = format!("{:<6} ", kind_label(t.kind));
    let cols = ctx.cols();
    let fixed = 2 + wrap::width(&label) + 2 + wrap::width(&counts) + wrap::width(&right);
    let title = wrap::truncate(&t.title, cols.saturating_sub(fixed).max(1));
    let mut b = LineBuilder::new(&[]);
    b.push(&format!("{icon} "), state_style);
    b.push(&label, ctx.style(Slot::Tool));
    b.push(&title, ctx.style(Slot::Text));
    let tail = wrap::width(&counts) + wrap::width(&right);
    let target = cols.saturating_sub(tail).max(b.width() + 2);
    b.pad_to(target, Style::default());
    if !counts.is_empty() {
        b.push(&format!("+{added}"), ctx.style(Slot::DiffAdded));
        b.push(" ", Style::default());
        b.push(&format!("-{removed}"), ctx.style(Slot::DiffRemoved));
        b.push(" ", Style::default());
    }
    b.push(&right, state_style);
    b.finish()
}

fn gutter_line(
    gutter: &[Span<'static>],
    text: &str,
    style: Style,
    ctx: &BlockContext<'_>,
) -> Line<'static> {
    let mut b = LineBuilder::new(gutter);
    let room = ctx.cols().saturating_sub(b.width()).max(1);
    b.push(&wrap::truncate(text, room), style);
    b.finish()
}

fn diff_lines(
    path: &str,
    d: &diff::UnifiedDiff,
    cap: usize,
    gutter: &[Span<'static>],
    ctx: &BlockContext<'_>,
    out: &mut Vec<Line<'static>>,
) {
    out.push(gutter_line(gutter, path, ctx.style(Slot::DiffHeader), ctx));
    let gutter_width: usize = gutter.iter().map(|s| wrap::width(&s.content)).sum();
    let room = ctx.cols().saturating_sub(gutter_width).max(1);
    for (kind, text) in d.lines.iter().take(cap) {
        let (sign, slot) = match kind {
            DiffLineKind::Hunk => ("", Slot::DiffHeader),
            DiffLineKind::Added => ("+", Slot::DiffAdded),
            DiffLineKind::Removed => ("-", Slot::DiffRemoved),
            DiffLineKind::Context => (" ", Slot::DiffContext),
        };
        let style = ctx.style(slot);
        let line = Line::from(Span::styled(format!("{sign}{text}"), style));
        let (cut, _) = wrap::cut_line(&line, room, CUT_MARKER, ctx.style(Slot::TextDim));
        let mut b = LineBuilder::new(gutter);
        for span in cut.spans {
            b.push(&span.content, span.style);
        }
        // Added and removed lines are coloured to the edge, like a diff viewer.
        if matches!(kind, DiffLineKind::Added | DiffLineKind::Removed) {
            b.pad_to(ctx.cols(), style);
        }
        out.push(b.finish());
    }
    if d.lines.len() > cap {
        let more = format!("… {} more diff lines", d.lines.len() - cap);
        out.push(gutter_line(gutter, &more, ctx.style(Slot::TextDim), ctx));
    }
}

/// Tool output, [`MAX_OUTPUT_LINES`] of it: the end for commands (errors come last), the
/// start otherwise.
fn output_lines(
    text: &str,
    tail: bool,
    gutter: &[Span<'static>],
    ctx: &BlockContext<'_>,
    out: &mut Vec<Line<'static>>,
) {
    let text = text.trim_end_matches('\n');
    if text.is_empty() {
        return;
    }
    let total = text.lines().count();
    let hidden = total.saturating_sub(MAX_OUTPUT_LINES);
    let dim = ctx.style(Slot::TextDim);
    let style = ctx.style(Slot::Text);
    let more =
        |n: usize, which: &str| format!("… {n} {which} line{}", if n == 1 { "" } else { "s" });
    if tail && hidden > 0 {
        out.push(gutter_line(gutter, &more(hidden, "earlier"), dim, ctx));
    }
    let skip = if tail { hidden } else { 0 };
    for line in text.lines().skip(skip).take(MAX_OUTPUT_LINES) {
        out.push(gutter_line(gutter, line, style, ctx));
    }
    if !tail && hidden > 0 {
        out.push(gutter_line(gutter, &more(hidden, "more"), dim, ctx));
    }
}

fn plan(items: &[PlanItem], ctx: &BlockContext<'_>, out: &mut Vec<Line<'static>>) {
    out.push(Line::from(Span::styled("Plan", ctx.style(Slot::Heading))));
    for item in items {
        let (mark, slot) = match item.status {
            PlanEntryStatus::Completed => ("☑ ", Slot::ToolDone),
            PlanEntryStatus::InProgress => ("◐ ", Slot::ToolRunning),
            _ => ("☐ ", Slot::TextDim),
        };
        let first = [Span::styled(mark, ctx.style(slot))];
        let rest = [Span::raw("  ")];
        let spans = [(item.text.clone(), ctx.style(Slot::Text))];
        out.extend(wrap::wrap(&spans, ctx.cols(), &first, &rest));
    }
}

fn notice(
    severity: Severity,
    title: &str,
    detail: Option<&str>,
    ctx: &BlockContext<'_>,
    out: &mut Vec<Line<'static>>,
) {
    let (icon, slot) = match severity {
        Severity::Info => ("ℹ ", Slot::Info),
        Severity::Warning => ("⚠ ", Slot::Warning),
        Severity::Error => ("✗ ", Slot::Error),
    };
    let style = ctx.style(slot);
    let first = [Span::styled(icon, style)];
    let rest = [Span::raw("  ")];
    out.extend(wrap::wrap(
        &[(title.to_string(), style)],
        ctx.cols(),
        &first,
        &rest,
    ));
    if let Some(detail) = detail {
        let (text, _) = capped(detail);
        let spans = [(text.trim_end().to_string(), ctx.style(Slot::TextDim))];
        out.extend(wrap::wrap(&spans, ctx.cols(), &rest, &rest));
    }
}

fn compaction(c: &Compaction, ctx: &BlockContext<'_>, out: &mut Vec<Line<'static>>) {
    let n = c.summary.lines().count();
    let (title, slot) = match &c.status {
        CompactionStatus::InProgress => ("⟳ Compacting context…".to_string(), Slot::Notice),
        CompactionStatus::Completed => (
            format!(
                "✓ Compacted context (summary: {n} line{})",
                if n == 1 { "" } else { "s" }
            ),
            Slot::Notice,
        ),
        CompactionStatus::Failed => (
            format!(
                "✗ Compaction failed{}",
                c.error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
            Slot::Error,
        ),
        _ => ("⊘ Compaction cancelled".to_string(), Slot::TextDim),
    };
    let style = ctx.style(slot);
    out.extend(wrap::wrap(
        &[(title, style)],
        ctx.cols(),
        &[],
        &[Span::raw("  ")],
    ));
    // The summary is detail, shown with thinking.
    if ctx.thinking_expanded && !c.summary.is_empty() {
        let (text, _) = capped(&c.summary);
        let lines = render_markdown(
            text,
            ctx.width.saturating_sub(2),
            ctx.style(Slot::TextDim),
            ctx.theme,
            ctx.highlighter,
        );
        indented(lines, "  ", Style::default(), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_read_well() {
        use std::time::Duration;
        assert_eq!(human_duration(Duration::from_millis(120)), "120ms");
        assert_eq!(human_duration(Duration::from_millis(1250)), "1.2s");
        assert_eq!(human_duration(Duration::from_secs(185)), "3m 05s");
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MB");
    }

    #[test]
    fn capping_respects_character_boundaries() {
        let text = "é".repeat(MAX_RENDER_BYTES);
        let (head, rest) = capped(&text);
        assert!(head.len() <= MAX_RENDER_BYTES);
        assert_eq!(head.len() + rest, text.len());
    }
}
