//! The diff pane's view: the files a session changed with their counts above, the selected
//! file's change below, unified or side by side, the words that changed inside a changed line
//! marked. Text from files is sanitized before it is drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::model::{DiffLine, FileDiff, LineKind, NoDiff};
use crate::chrome::pane_block;
use crate::highlight::{HighlightedLines, Highlighter};
use crate::sanitize::sanitize_line;
use crate::scroll::Scroll;
use crate::theme::{Slot, Theme};

/// How a file's change is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLayout {
    /// One column: removed lines above the added ones.
    Unified,
    /// Old text on the left, new on the right, changed lines side by side.
    SideBySide,
}

/// Files listed above the change at most.
const LIST_ROWS: usize = 6;

/// One row of the change as drawn.
#[derive(Debug, Clone, PartialEq)]
enum Row {
    /// A hunk's header.
    Header(String),
    /// A line, in the unified layout, of the hunk numbered first.
    Line(usize, DiffLine),
    /// Old and new, in the side-by-side layout, of the hunk numbered first.
    Pair(usize, Option<DiffLine>, Option<DiffLine>),
    /// Why there is nothing to show.
    Note(String),
}

/// A diff pane.
#[derive(Debug, Clone)]
pub struct DiffView {
    title: String,
    files: Vec<FileDiff>,
    selected: usize,
    layout: DiffLayout,
    /// The first row of the change shown.
    scroll: usize,
    rows: Vec<Row>,
    /// Rows of the change the last draw had room for.
    height: usize,
    /// Newer changes are being diffed.
    pending: bool,
    /// What the pane says when there are no files.
    empty_note: String,
    /// A file asked for by [`select_path`](Self::select_path) before it was listed.
    wanted: Option<String>,
    /// The selected file's hunks highlighted, each side as one block (old, new), once
    /// looked up: `None` inside when the file's language is not known.
    syntax: Option<Vec<Option<(HighlightedLines, HighlightedLines)>>>,
}

impl DiffView {
    /// A view of `files` (in the order changed), titled `title`.
    pub fn new(title: &str, files: Vec<FileDiff>) -> DiffView {
        let mut view = DiffView {
            title: title.to_string(),
            files,
            selected: 0,
            layout: DiffLayout::Unified,
            scroll: 0,
            rows: Vec::new(),
            height: 0,
            pending: false,
            wanted: None,
            empty_note: "no file changes yet".to_string(),
            syntax: None,
        };
        view.build();
        view
    }

    /// Shows `files` instead (the session changed more), keeping the selected file, where
    /// it still is, and the layout.
    pub fn set_files(&mut self, files: Vec<FileDiff>) {
        let wanted = self.wanted.take();
        let current = self.selected().map(|f| f.path.clone());
        let scroll = self.scroll;
        self.files = files;
        if let Some(wanted) = wanted
            && self.select_path(&wanted)
        {
            return;
        }
        let kept = current.and_then(|p| self.files.iter().position(|f| f.path == p));
        self.selected = kept.unwrap_or(0);
        self.build();
        if kept.is_some() {
            self.scroll = scroll.min(self.rows.len().saturating_sub(1));
        }
    }

    /// Selects the file shown as `path`, now or as soon as it is among the files; whether
    /// it is there now.
    pub fn select_path(&mut self, path: &str) -> bool {
        match self.files.iter().position(|f| f.path == path) {
            Some(i) => {
                self.selected = i;
                self.build();
                true
            }
            None => {
                self.wanted = Some(path.to_string());
                false
            }
        }
    }

    /// What to say when there are no files (why there are none).
    pub fn set_empty_note(&mut self, note: &str) {
        self.empty_note = note.to_string();
    }

    /// Titles the view `title`.
    pub fn set_title(&mut self, title: &str) {
        title.clone_into(&mut self.title);
    }

    /// Says newer changes are being diffed (shown in the title until they come).
    pub fn set_pending(&mut self, pending: bool) {
        self.pending = pending;
    }

    /// The files shown.
    pub fn files(&self) -> &[FileDiff] {
        &self.files
    }

    /// The selected file, if any.
    pub fn selected(&self) -> Option<&FileDiff> {
        self.files.get(self.selected)
    }

    /// The selected file's place in the list.
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// The hunk at the top of the view (the last one starting at or above it).
    pub fn current_hunk(&self) -> Option<usize> {
        let headers = self.rows[..=self.scroll.min(self.rows.len().saturating_sub(1))]
            .iter()
            .filter(|r| matches!(r, Row::Header(_)))
            .count();
        let hunks = self.selected()?.hunks.len();
        (hunks > 0).then(|| headers.saturating_sub(1).min(hunks - 1))
    }

    /// The layout.
    pub fn layout(&self) -> DiffLayout {
        self.layout
    }

    /// Switches between unified and side by side.
    pub fn toggle_layout(&mut self) {
        self.layout = match self.layout {
            DiffLayout::Unified => DiffLayout::SideBySide,
            DiffLayout::SideBySide => DiffLayout::Unified,
        };
        self.build();
    }

    /// Selects the file `delta` places on (clamped), showing its start.
    pub fn select_file(&mut self, delta: isize) {
        if self.files.is_empty() {
            return;
        }
        let last = self.files.len() - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
        self.build();
    }

    /// Moves to the next hunk (`forward`) or the previous one; past the last hunk of a file,
    /// on to the next file's first (and back).
    pub fn jump_hunk(&mut self, forward: bool) {
        let headers: Vec<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Row::Header(_)))
            .map(|(i, _)| i)
            .collect();
        let target = if forward {
            headers.iter().find(|&&i| i > self.scroll).copied()
        } else {
            headers.iter().rev().find(|&&i| i < self.scroll).copied()
        };
        match target {
            Some(row) => self.scroll = row,
            None if forward && self.selected + 1 < self.files.len() => self.select_file(1),
            None if !forward && self.selected > 0 => {
                self.select_file(-1);
                let last = self.rows.iter().rposition(|r| matches!(r, Row::Header(_)));
                self.scroll = last.unwrap_or(0);
            }
            None => {}
        }
    }

    /// Scrolls the change.
    pub fn scroll(&mut self, scroll: Scroll) {
        let lines = isize::try_from(scroll.lines(self.height)).unwrap_or(isize::MAX);
        let last = self.rows.len().saturating_sub(self.height.max(1));
        self.scroll = self.scroll.saturating_add_signed(lines).min(last);
    }

    /// Rows of the selected file's change as laid out now.
    fn build(&mut self) {
        self.scroll = 0;
        self.rows.clear();
        self.syntax = None;
        let Some(file) = self.files.get(self.selected) else {
            return;
        };
        if let Some(none) = file.none {
            self.rows.push(Row::Note(match none {
                NoDiff::Unchanged => "no change".to_string(),
                NoDiff::Binary => "binary file: not shown".to_string(),
                NoDiff::TooLarge(before, after) => format!(
                    "too large to diff here: {} before, {} after",
                    bytes(before),
                    bytes(after)
                ),
            }));
            return;
        }
        for (n, hunk) in file.hunks.iter().enumerate() {
            self.rows.push(Row::Header(hunk.header()));
            match self.layout {
                DiffLayout::Unified => {
                    let lines = hunk.lines.iter().cloned().map(|l| Row::Line(n, l));
                    self.rows.extend(lines);
                }
                DiffLayout::SideBySide => pair_up(n, &hunk.lines, &mut self.rows),
            }
        }
    }

    /// Draws the pane into `area`.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        highlighter: &Highlighter,
        focused: bool,
    ) {
        let mut title = match self.files.len() {
            1 => format!("{} · 1 file changed", self.title),
            n => format!("{} · {n} files changed", self.title),
        };
        if self.pending {
            title.push_str(" · diffing…");
        }
        let block = pane_block(&sanitize_line(&title), focused, theme);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        if self.files.is_empty() {
            let note = if self.pending {
                "diffing…"
            } else {
                self.empty_note.as_str()
            };
            Line::styled(note, theme.style(Slot::Hint)).render(inner, buf);
            return;
        }
        // The file list, scrolled to keep the selection in sight.
        let list = self
            .files
            .len()
            .min(LIST_ROWS)
            .min(usize::from(inner.height) / 3)
            .max(1);
        let first = self.selected.saturating_sub(list - 1);
        for (row, (i, file)) in self
            .files
            .iter()
            .enumerate()
            .skip(first)
            .take(list)
            .enumerate()
        {
            let y = inner.y + u16::try_from(row).unwrap_or(u16::MAX);
            let mark = if i == self.selected { "▸ " } else { "  " };
            let mut spans = vec![
                Span::styled(mark, theme.style(Slot::TitleFocused)),
                Span::styled(
                    sanitize_line(&file.path).into_owned(),
                    theme.style(Slot::Text),
                ),
                Span::raw(" "),
                Span::styled(format!("+{}", file.added), theme.style(Slot::DiffAdded)),
                Span::raw(" "),
                Span::styled(format!("-{}", file.removed), theme.style(Slot::DiffRemoved)),
            ];
            if file.created {
                spans.push(Span::styled(" new", theme.style(Slot::Hint)));
            } else if file.deleted {
                spans.push(Span::styled(" deleted", theme.style(Slot::Hint)));
            }
            let mut line = Line::from(spans);
            if i == self.selected {
                line = line.style(theme.style(Slot::Selection));
            }
            line.render(Rect::new(inner.x, y, inner.width, 1), buf);
        }
        let top = inner.y + u16::try_from(list).unwrap_or(u16::MAX);
        if top >= inner.bottom() {
            return;
        }
        let rule = "─".repeat(usize::from(inner.width));
        Line::styled(rule, theme.style(Slot::Border))
            .render(Rect::new(inner.x, top, inner.width, 1), buf);
        let body = Rect::new(
            inner.x,
            top + 1,
            inner.width,
            inner.bottom().saturating_sub(top + 1),
        );
        self.height = usize::from(body.height);
        self.scroll = self.scroll.min(self.rows.len().saturating_sub(1));
        let gutter = self.gutter_width();
        self.highlight(highlighter);
        let syntax = self.syntax.as_deref().unwrap_or_default();
        let hunks = self
            .files
            .get(self.selected)
            .map(|f| f.hunks.as_slice())
            .unwrap_or_default();
        // The colours of a line's code: its side's highlighted block, at its place there.
        let code = |hunk: usize, l: &DiffLine, old_side: bool| -> Option<Line<'static>> {
            let (old, new) = syntax.get(hunk)?.as_ref()?;
            let number = |l: &DiffLine| if old_side { l.old } else { l.new };
            let index = number(l)?;
            let first = hunks.get(hunk)?.lines.iter().find_map(number)?;
            let block = if old_side { old } else { new };
            block.get(index.checked_sub(first)?).cloned()
        };
        for (i, row) in self
            .rows
            .iter()
            .skip(self.scroll)
            .take(self.height)
            .enumerate()
        {
            let y = body.y + u16::try_from(i).unwrap_or(u16::MAX);
            let at = Rect::new(body.x, y, body.width, 1);
            match row {
                Row::Header(h) => {
                    Line::styled(h.clone(), theme.style(Slot::DiffHeader)).render(at, buf);
                }
                Row::Note(n) => Line::styled(n.clone(), theme.style(Slot::Hint)).render(at, buf),
                Row::Line(hunk, l) => {
                    let colours = code(*hunk, l, l.kind == LineKind::Removed);
                    unified_line(l, gutter, theme, colours.as_ref()).render(at, buf);
                }
                Row::Pair(hunk, old, new) => {
                    let half = body.width / 2;
                    let left = Rect::new(body.x, y, half, 1);
                    let right = Rect::new(body.x + half, y, body.width - half, 1);
                    if let Some(l) = old {
                        let colours = code(*hunk, l, true);
                        side_line(l, l.old, gutter, theme, colours.as_ref()).render(left, buf);
                    }
                    if let Some(l) = new {
                        let colours = code(*hunk, l, false);
                        side_line(l, l.new, gutter, theme, colours.as_ref()).render(right, buf);
                    }
                }
            }
        }
    }

    /// Highlights the selected file's hunks, once per file and layout.
    fn highlight(&mut self, highlighter: &Highlighter) {
        if self.syntax.is_some() {
            return;
        }
        let Some(file) = self.files.get(self.selected) else {
            return;
        };
        let lang = std::path::Path::new(&file.path)
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default();
        let side = |hunk: &super::model::Hunk, old: bool| -> String {
            hunk.lines
                .iter()
                .filter(|l| {
                    if old {
                        l.old.is_some()
                    } else {
                        l.new.is_some()
                    }
                })
                .map(|l| format!("{}\n", l.text))
                .collect()
        };
        let syntax = file
            .hunks
            .iter()
            .map(|hunk| {
                if lang.is_empty() {
                    return None;
                }
                let old = highlighter.highlight_known(&side(hunk, true), &lang)?;
                let new = highlighter.highlight_known(&side(hunk, false), &lang)?;
                Some((old, new))
            })
            .collect();
        self.syntax = Some(syntax);
    }

    /// Columns for line numbers: as many as the largest number in the file needs.
    fn gutter_width(&self) -> usize {
        let largest = self
            .selected()
            .and_then(|f| f.hunks.last())
            .and_then(|h| h.lines.iter().filter_map(|l| l.old.max(l.new)).max())
            .unwrap_or(1);
        largest.to_string().len()
    }
}

/// Pairs a hunk's lines for the side-by-side layout: context on both sides; a run of removed
/// lines beside the added lines that follow it.
fn pair_up(hunk: usize, lines: &[DiffLine], rows: &mut Vec<Row>) {
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind == LineKind::Context {
            rows.push(Row::Pair(
                hunk,
                Some(lines[i].clone()),
                Some(lines[i].clone()),
            ));
            i += 1;
            continue;
        }
        let removed: Vec<&DiffLine> = lines[i..]
            .iter()
            .take_while(|l| l.kind == LineKind::Removed)
            .collect();
        i += removed.len();
        let added: Vec<&DiffLine> = lines[i..]
            .iter()
            .take_while(|l| l.kind == LineKind::Added)
            .collect();
        i += added.len();
        for k in 0..removed.len().max(added.len()) {
            rows.push(Row::Pair(
                hunk,
                removed.get(k).map(|l| (*l).clone()),
                added.get(k).map(|l| (*l).clone()),
            ));
        }
    }
}

/// The style and sign of a line of kind `kind`.
fn look(kind: LineKind, theme: &Theme) -> (Style, &'static str) {
    match kind {
        LineKind::Added => (theme.style(Slot::DiffAdded), "+"),
        LineKind::Removed => (theme.style(Slot::DiffRemoved), "-"),
        LineKind::Context => (theme.style(Slot::DiffContext), " "),
    }
}

/// `old new +text` for the unified layout.
fn unified_line(
    l: &DiffLine,
    gutter: usize,
    theme: &Theme,
    code: Option<&Line<'static>>,
) -> Line<'static> {
    let (style, sign) = look(l.kind, theme);
    let number =
        |n: Option<usize>| n.map_or_else(|| " ".repeat(gutter), |n| format!("{n:>gutter$}"));
    let mut spans = vec![Span::styled(
        format!("{} {} ", number(l.old), number(l.new)),
        theme.style(Slot::Hint),
    )];
    spans.push(Span::styled(sign, style));
    spans.extend(text_spans(l, style, code));
    Line::from(spans)
}

/// `n +text` for one side of the side-by-side layout.
fn side_line(
    l: &DiffLine,
    number: Option<usize>,
    gutter: usize,
    theme: &Theme,
    code: Option<&Line<'static>>,
) -> Line<'static> {
    let (style, sign) = look(l.kind, theme);
    let number = number.map_or_else(|| " ".repeat(gutter), |n| format!("{n:>gutter$}"));
    let mut spans = vec![Span::styled(format!("{number} "), theme.style(Slot::Hint))];
    spans.push(Span::styled(sign, style));
    spans.extend(text_spans(l, style, code));
    Line::from(spans)
}

/// The line's text in `style` (its foreground from `code`'s syntax colours where given), the
/// words that changed reversed; each piece sanitized and its tabs widened.
fn text_spans(l: &DiffLine, style: Style, code: Option<&Line<'static>>) -> Vec<Span<'static>> {
    // Where the colour changes: (byte offset, foreground) along the highlighted line, whose
    // text is the line's own (anything else is not used).
    let mut colours: Vec<(usize, Option<ratatui::style::Color>)> = Vec::new();
    if let Some(code) = code {
        let mut at = 0;
        for span in &code.spans {
            colours.push((at, span.style.fg));
            at += span.content.len();
        }
        if at != l.text.len() {
            colours.clear();
        }
    }
    // Cut points: colour changes and the ends of changed words.
    let mut cuts: Vec<usize> = colours.iter().map(|(at, _)| *at).collect();
    for r in &l.changed {
        cuts.push(r.start);
        cuts.push(r.end);
    }
    cuts.push(0);
    cuts.push(l.text.len());
    cuts.retain(|&c| c <= l.text.len() && l.text.is_char_boundary(c));
    cuts.sort_unstable();
    cuts.dedup();
    let mut spans = Vec::new();
    for pair in cuts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let mut piece = style;
        if let Some((_, Some(fg))) = colours.iter().rev().find(|(at, _)| *at <= start) {
            piece = piece.fg(*fg);
        }
        if l.changed.iter().any(|r| r.start <= start && end <= r.end) {
            piece = piece.add_modifier(Modifier::REVERSED);
        }
        let clean = sanitize_line(&l.text[start..end]).replace('\t', "    ");
        spans.push(Span::styled(clean, piece));
    }
    spans
}

/// `n` bytes, readably.
fn bytes(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20))
    } else if n >= 1 << 10 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}
