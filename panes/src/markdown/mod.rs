//! Markdown to terminal lines, wrapped to a width.
//!
//! Headings, paragraphs, emphasis, strong, strikethrough, inline code, links (text, then the
//! address dimmed), nested bullet and ordered lists with hanging indents, task lists, block
//! quotes, rules, tables and fenced code blocks. Code is highlighted and never wrapped: a
//! line wider than the pane is cut and ends in a dim `…`, so indentation stays readable; the
//! whole block is one copy away (`last_code_block`). Every style comes from the theme.

pub(crate) mod piece;
mod table;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::highlight::Highlighter;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};
pub(crate) use piece::{Piece, render_piece};
use table::{Table, TableStyle};

/// Marks the end of a code line cut at the pane's edge.
pub const CUT_MARKER: char = '…';

fn parser(text: &str) -> Parser<'_> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    Parser::new_ext(text, options)
}

/// `text` rendered as lines at most `width` columns wide; `base` is the style plain text
/// gets (the agent's or the thinking style), markdown styles go on top of it.
pub fn render_markdown(
    text: &str,
    width: u16,
    base: Style,
    theme: &Theme,
    highlighter: &Highlighter,
) -> Vec<Line<'static>> {
    let mut r = Renderer::new(theme, highlighter, width, base, false);
    for event in parser(text) {
        r.event(event);
    }
    r.flush_inline();
    r.out
}

/// The fenced and indented code blocks in `text`, in order, as written.
pub fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in parser(text) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(code) = current.as_mut() {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}

enum Container {
    Quote,
    List { next: Option<u64>, depth: usize },
    Item { marker: String, pending: bool },
}

struct Code {
    lang: String,
    text: String,
}

struct Renderer<'a> {
    theme: &'a Theme,
    highlighter: &'a Highlighter,
    width: usize,
    base: Style,
    out: Vec<Line<'static>>,
    /// The paragraph being collected.
    inline: Vec<(String, Style)>,
    /// Inline styles in effect, innermost last.
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Open links: address and where their text starts in `inline`.
    links: Vec<(String, usize)>,
    code: Option<Code>,
    table: Option<Table>,
    /// A blank line goes before the next block.
    blank_pending: bool,
    /// Lines come before these (this text continues a longer one laid out in pieces).
    before: bool,
}

impl<'a> Renderer<'a> {
    /// A renderer; `after_lines` says the text continues one whose lines end in a
    /// finished block, so the first block gets the blank line a whole render would give it.
    fn new(
        theme: &'a Theme,
        highlighter: &'a Highlighter,
        width: u16,
        base: Style,
        after_lines: bool,
    ) -> Self {
        Renderer {
            theme,
            highlighter,
            width: usize::from(width).max(1),
            base,
            out: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            containers: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_pending: after_lines,
            before: after_lines,
        }
    }
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.base)
    }

    fn slot(&self, slot: Slot) -> Style {
        self.theme.style(slot)
    }

    fn push_style(&mut self, patch: Style) {
        let next = self.style().patch(patch);
        self.styles.push(next);
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if let Some(table) = self.table.as_mut() {
            table.push(text);
        } else if let Some(code) = self.code.as_mut() {
            code.text.push_str(text);
        } else {
            self.inline.push((text.to_string(), style));
        }
    }

    fn in_item(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    /// The prefixes for the first and the other lines of a block: quote bars, list markers
    /// (once per item) and hanging indents.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let quote = self.slot(Slot::Quote);
        let marker_style = self.slot(Slot::ListMarker);
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        for c in &mut self.containers {
            match c {
                Container::Quote => {
                    first.push(Span::styled("│ ", quote));
                    rest.push(Span::styled("│ ", quote));
                }
                Container::List { .. } => {}
                Container::Item { marker, pending } => {
                    let indent = " ".repeat(wrap::width(marker));
                    if *pending {
                        first.push(Span::styled(marker.clone(), marker_style));
                        *pending = false;
                    } else {
                        first.push(Span::raw(indent.clone()));
                    }
                    rest.push(Span::raw(indent));
                }
            }
        }
        (first, rest)
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::List { .. } => 0,
                Container::Item { marker, .. } => wrap::width(marker),
            })
            .sum()
    }

    fn flush_inline(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        let lines = wrap::wrap(&spans, self.width, &first, &rest);
        self.out.extend(lines);
    }

    /// Starts a block: what was collected is written, and a blank line separates it from
    /// the block before.
    fn block_start(&mut self) {
        self.flush_inline();
        if self.blank_pending && (self.before || !self.out.is_empty()) {
            // Quote bars continue through the blank line; list indents need not.
            let quote = self.slot(Slot::Quote);
            let bars = self
                .containers
                .iter()
                .filter(|c| matches!(c, Container::Quote))
                .count();
            let line = if bars == 0 {
                Line::default()
            } else {
                Line::from(Span::styled(
                    "│ ".repeat(bars).trim_end().to_string(),
                    quote,
                ))
            };
            self.out.push(line);
        }
        self.blank_pending = false;
    }

    fn block_end(&mut self) {
        self.flush_inline();
        self.blank_pending = true;
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.push_text(&t, self.style()),
            Event::Code(t) | Event::InlineMath(t) => {
                let style = self.style().patch(self.slot(Slot::InlineCode));
                self.push_text(&t, style);
            }
            Event::DisplayMath(t) => {
                let style = self.style().patch(self.slot(Slot::InlineCode));
                self.push_text(&t, style);
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let style = self.style().patch(self.slot(Slot::TextDim));
                self.push_text(t.trim_end_matches('\n'), style);
            }
            Event::SoftBreak => self.push_text(" ", self.style()),
            Event::HardBreak => self.push_text("\n", self.style()),
            Event::Rule => {
                self.block_start();
                let (first, _) = self.prefixes();
                let mut b = LineBuilder::new(&first);
                let n = self.width.saturating_sub(b.width());
                b.push(&"─".repeat(n), self.slot(Slot::Rule));
                self.out.push(b.finish());
                self.blank_pending = true;
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.push_text(mark, self.slot(Slot::ListMarker));
            }
            Event::FootnoteReference(name) => {
                self.push_text(&format!("[^{name}]"), self.slot(Slot::TextDim));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                self.push_style(self.slot(Slot::Heading));
                let hashes = "#".repeat(heading_level(level));
                self.push_text(&format!("{hashes} "), self.style());
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
                self.push_style(self.slot(Slot::Quote));
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(Code {
                    lang,
                    text: String::new(),
                });
            }
            Tag::List(first) => {
                let depth = self
                    .containers
                    .iter()
                    .filter(|c| matches!(c, Container::List { .. }))
                    .count();
                if self.in_item() {
                    self.flush_inline();
                } else {
                    self.block_start();
                }
                self.containers.push(Container::List { next: first, depth });
            }
            Tag::Item => {
                self.flush_inline();
                let marker = match self.containers.last_mut() {
                    Some(Container::List {
                        next: Some(n),
                        depth: _,
                    }) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    Some(Container::List { next: None, depth }) => {
                        format!("{} ", ["•", "◦", "▪"][*depth % 3])
                    }
                    _ => "• ".to_string(),
                };
                self.containers.push(Container::Item {
                    marker,
                    pending: true,
                });
            }
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(Table::new(aligns));
            }
            Tag::TableHead => self.with_table(|t| t.start_row(true)),
            Tag::TableRow => self.with_table(|t| t.start_row(false)),
            Tag::TableCell => self.with_table(Table::start_cell),
            Tag::Emphasis => self.push_style(self.slot(Slot::Emphasis)),
            Tag::Strong => self.push_style(self.slot(Slot::Strong)),
            Tag::Strikethrough => {
                self.push_style(Style::default().add_modifier(Modifier::CROSSED_OUT))
            }
            Tag::Link { dest_url, .. } => {
                self.push_style(self.slot(Slot::Link));
                self.links.push((dest_url.to_string(), self.inline.len()));
            }
            Tag::Image { dest_url, .. } => {
                self.push_text("[image: ", self.slot(Slot::TextDim));
                self.push_style(self.slot(Slot::Link));
                self.links.push((dest_url.to_string(), self.inline.len()));
            }
            _ => self.push_style(Style::default()),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.block_end(),
            TagEnd::Heading(_) => {
                self.block_end();
                self.styles.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.styles.pop();
                self.blank_pending = true;
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::List(_) => {
                self.flush_inline();
                self.containers.pop();
                if !self.in_item() {
                    self.blank_pending = true;
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let style = TableStyle {
                        text: self.base,
                        header: self.base.patch(self.slot(Slot::Strong)),
                        rule: self.slot(Slot::Rule),
                    };
                    let (first, rest) = self.prefixes();
                    let width = self.width.saturating_sub(self.prefix_width());
                    for (i, line) in table.render(width, &style).into_iter().enumerate() {
                        let mut b = LineBuilder::new(if i == 0 { &first } else { &rest });
                        for span in line.spans {
                            b.push(&span.content, span.style);
                        }
                        self.out.push(b.finish());
                    }
                }
                self.blank_pending = true;
            }
            TagEnd::TableHead | TagEnd::TableRow | TagEnd::TableCell => {}
            TagEnd::Link => self.end_link(false),
            TagEnd::Image => self.end_link(true),
            _ => {
                self.styles.pop();
            }
        }
    }

    fn with_table(&mut self, f: impl FnOnce(&mut Table)) {
        if let Some(t) = self.table.as_mut() {
            f(t);
        }
    }

    fn end_link(&mut self, image: bool) {
        self.styles.pop();
        let Some((url, start)) = self.links.pop() else {
            return;
        };
        let dim = self.slot(Slot::TextDim);
        if image {
            self.push_text("]", dim);
        }
        let text: String = self
            .inline
            .get(start..)
            .unwrap_or_default()
            .iter()
            .map(|(t, _)| t.as_str())
            .collect();
        let bare = url.strip_prefix("mailto:").unwrap_or(&url);
        if !url.is_empty() && !url.starts_with('#') && text != url && text != bare {
            self.push_text(&format!(" ({url})"), dim);
        }
    }

    fn end_code(&mut self) {
        let Some(code) = self.code.take() else {
            return;
        };
        let lines = self.highlighter.highlight(&code.text, &code.lang);
        let code_style = self.slot(Slot::CodeBlock);
        let marker_style = self.slot(Slot::TextDim);
        let (first, rest) = self.prefixes();
        let avail = self.width.saturating_sub(self.prefix_width());
        let empty = [Line::default()];
        let source: &[Line<'static>] = if lines.is_empty() { &empty } else { &lines };
        for (i, line) in source.iter().enumerate() {
            let (cut, _) = wrap::cut_line(line, avail, CUT_MARKER, marker_style);
            let mut b = LineBuilder::new(if i == 0 { &first } else { &rest });
            for span in cut.spans {
                b.push(&span.content, span.style);
            }
            // Padding to the edge makes the code background a block, not ragged lines.
            b.pad_to(self.width, code_style);
            self.out.push(b.finish());
        }
        self.blank_pending = true;
    }
}

fn heading_level(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests;
