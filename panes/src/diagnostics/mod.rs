//! The diagnostics pane: what the project's language servers report, grouped by file, worst
//! first, filtered by severity, with a selection to jump from.

use std::path::{Path, PathBuf};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::chrome::pane_block;
use crate::sanitize::sanitize_line;
use crate::scroll::Scroll;
use crate::theme::{Slot, Theme};

#[cfg(test)]
mod tests;

/// How bad a diagnostic is, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

impl Severity {
    fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }

    fn slot(self) -> Slot {
        match self {
            Severity::Error => Slot::Error,
            Severity::Warning => Slot::Warning,
            Severity::Information => Slot::Info,
            Severity::Hint => Slot::TextDim,
        }
    }
}

/// One diagnostic as the pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticItem {
    /// Line (1-based).
    pub line: u32,
    /// Column (1-based).
    pub column: u32,
    /// How bad.
    pub severity: Severity,
    /// What the server said.
    pub message: String,
    /// Who said it.
    pub source: String,
    /// The rule or error code.
    pub code: Option<String>,
}

/// A file's diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileItems {
    /// The file.
    pub path: PathBuf,
    /// Its diagnostics, by position.
    pub items: Vec<DiagnosticItem>,
}

/// Errors, warnings and the rest, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Information and hints.
    pub others: usize,
}

impl Counts {
    /// Counts of `files`.
    pub fn of(files: &[FileItems]) -> Counts {
        let mut c = Counts::default();
        for item in files.iter().flat_map(|f| &f.items) {
            match item.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                _ => c.others += 1,
            }
        }
        c
    }
}

/// One row of the pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    /// A file's header (index into the files).
    File(usize),
    /// A diagnostic (file, item).
    Item(usize, usize),
}

/// A diagnostics pane.
#[derive(Debug, Clone)]
pub struct DiagnosticsView {
    title: String,
    project: PathBuf,
    files: Vec<FileItems>,
    /// Least severe kind shown.
    filter: Severity,
    rows: Vec<Row>,
    /// Index into `rows` of the selected item row.
    selected: usize,
    scroll: usize,
    height: usize,
    /// Where the rows were last drawn.
    body: Rect,
    notices: Vec<String>,
}

impl DiagnosticsView {
    /// An empty pane for `project`, titled `title`, showing warnings and errors.
    pub fn new(title: &str, project: &Path) -> Self {
        DiagnosticsView {
            title: title.to_string(),
            project: project.to_path_buf(),
            files: Vec::new(),
            filter: Severity::Warning,
            rows: Vec::new(),
            selected: 0,
            scroll: 0,
            height: 0,
            body: Rect::default(),
            notices: Vec::new(),
        }
    }

    /// Shows `files` (sorted by path here), keeping the selected diagnostic where it still is.
    pub fn set_files(&mut self, mut files: Vec<FileItems>) {
        let keep = self
            .selected_item()
            .map(|(p, i)| (p.to_path_buf(), i.clone()));
        files.retain(|f| !f.items.is_empty());
        files.sort_by(|a, b| a.path.cmp(&b.path));
        self.files = files;
        self.build();
        if let Some((path, item)) = keep {
            let at = self.rows.iter().position(|r| match *r {
                Row::Item(f, i) => self.files[f].path == path && self.files[f].items[i] == item,
                Row::File(_) => false,
            });
            if let Some(at) = at {
                self.selected = at;
            }
        }
        self.clamp();
    }

    /// The language servers' latest notices (shown under the title).
    pub fn set_notices(&mut self, notices: Vec<String>) {
        self.notices = notices;
    }

    /// The least severe kind shown.
    pub fn filter(&self) -> Severity {
        self.filter
    }

    /// Shows errors only, then warnings too, then everything, then errors only again.
    pub fn cycle_filter(&mut self) {
        self.filter = match self.filter {
            Severity::Error => Severity::Warning,
            Severity::Warning => Severity::Hint,
            _ => Severity::Error,
        };
        self.build();
        self.clamp();
    }

    /// Counts of everything the servers reported (whatever the filter).
    pub fn counts(&self) -> Counts {
        Counts::of(&self.files)
    }

    fn build(&mut self) {
        self.rows.clear();
        for (f, file) in self.files.iter().enumerate() {
            let shown: Vec<usize> = (0..file.items.len())
                .filter(|&i| file.items[i].severity <= self.filter)
                .collect();
            if shown.is_empty() {
                continue;
            }
            self.rows.push(Row::File(f));
            self.rows.extend(shown.into_iter().map(|i| Row::Item(f, i)));
        }
    }

    /// Keep the selection on an item row, and in sight.
    fn clamp(&mut self) {
        if self.rows.is_empty() {
            self.selected = 0;
            self.scroll = 0;
            return;
        }
        self.selected = self.selected.min(self.rows.len() - 1);
        if matches!(self.rows[self.selected], Row::File(_)) {
            self.selected = (self.selected + 1).min(self.rows.len() - 1);
        }
        self.keep_in_sight();
    }

    fn keep_in_sight(&mut self) {
        // Not drawn yet: the first draw places it.
        if self.height == 0 {
            return;
        }
        let height = self.height;
        // The file header above the first item stays visible with it.
        let top = self.selected.saturating_sub(1);
        if top < self.scroll {
            self.scroll = top;
        } else if self.selected >= self.scroll + height {
            self.scroll = self.selected + 1 - height;
        }
    }

    /// Moves the selection by `delta` diagnostics.
    pub fn move_selection(&mut self, delta: isize) {
        let items: Vec<usize> = (0..self.rows.len())
            .filter(|&r| matches!(self.rows[r], Row::Item(..)))
            .collect();
        let Some(now) = items.iter().position(|&r| r == self.selected) else {
            self.clamp();
            return;
        };
        let next = now.saturating_add_signed(delta).min(items.len() - 1);
        self.selected = items[next];
        self.keep_in_sight();
    }

    /// A click at screen position `x`, `y`: the diagnostic there is selected (a file's
    /// first, on its name). Whether one was.
    pub fn click(&mut self, x: u16, y: u16) -> bool {
        if !self.body.contains(ratatui::layout::Position::new(x, y)) {
            return false;
        }
        let row = self.scroll + usize::from(y - self.body.y);
        let item = match self.rows.get(row) {
            Some(Row::Item(..)) => row,
            Some(Row::File(_)) => row + 1,
            None => return false,
        };
        if !matches!(self.rows.get(item), Some(Row::Item(..))) {
            return false;
        }
        self.selected = item;
        self.keep_in_sight();
        true
    }

    /// Moves the selection as a scroll would move the view (a page is the height less a
    /// line; top and bottom are the first and last diagnostic).
    pub fn scroll(&mut self, scroll: Scroll) {
        let delta = isize::try_from(scroll.lines(self.height)).unwrap_or(isize::MAX);
        self.move_selection(delta);
    }

    /// The selected diagnostic and its file.
    pub fn selected_item(&self) -> Option<(&Path, &DiagnosticItem)> {
        match self.rows.get(self.selected)? {
            Row::Item(f, i) => {
                let file = &self.files[*f];
                Some((&file.path, &file.items[*i]))
            }
            Row::File(_) => None,
        }
    }

    fn shown_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.project)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Draws the pane into `area`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        let c = self.counts();
        let filter = match self.filter {
            Severity::Error => "errors",
            Severity::Warning => "errors, warnings",
            _ => "all",
        };
        let title = format!(
            "{} · {} E {} W {} other · showing {filter}",
            self.title, c.errors, c.warnings, c.others
        );
        let block = pane_block(&sanitize_line(&title), focused, theme);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let mut y = inner.y;
        for notice in self.notices.iter().rev().take(2).rev() {
            if y >= inner.bottom() {
                return;
            }
            Line::styled(
                format!("! {}", sanitize_line(notice)),
                theme.style(Slot::Warning),
            )
            .render(Rect::new(inner.x, y, inner.width, 1), buf);
            y += 1;
        }
        let body = Rect::new(inner.x, y, inner.width, inner.bottom().saturating_sub(y));
        if body.height == 0 {
            return;
        }
        self.height = usize::from(body.height);
        self.body = body;
        if self.rows.is_empty() {
            let note = if self.files.is_empty() {
                "no diagnostics (the language servers report here as agents edit files)"
            } else {
                "nothing at this severity (f shows more)"
            };
            Line::styled(note, theme.style(Slot::Hint)).render(body, buf);
            return;
        }
        self.keep_in_sight();
        for (n, row) in self
            .rows
            .iter()
            .enumerate()
            .skip(self.scroll)
            .take(self.height)
        {
            let at = Rect::new(
                body.x,
                body.y + u16::try_from(n - self.scroll).unwrap_or(u16::MAX),
                body.width,
                1,
            );
            let line = match *row {
                Row::File(f) => {
                    let file = &self.files[f];
                    let c = Counts::of(std::slice::from_ref(file));
                    let mut spans = vec![Span::styled(
                        sanitize_line(&self.shown_path(&file.path)).into_owned(),
                        theme.style(Slot::Title),
                    )];
                    if c.errors > 0 {
                        spans.push(Span::styled(
                            format!("  {} E", c.errors),
                            theme.style(Slot::Error),
                        ));
                    }
                    if c.warnings > 0 {
                        spans.push(Span::styled(
                            format!("  {} W", c.warnings),
                            theme.style(Slot::Warning),
                        ));
                    }
                    Line::from(spans)
                }
                Row::Item(f, i) => {
                    let item = &self.files[f].items[i];
                    let message = item
                        .message
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .collect::<Vec<_>>()
                        .join(" / ");
                    let code = item
                        .code
                        .as_ref()
                        .map(|c| format!(" [{c}]"))
                        .unwrap_or_default();
                    let mut line = Line::from(vec![
                        Span::styled(
                            format!("  {:>4}:{:<3} ", item.line, item.column),
                            theme.style(Slot::TextDim),
                        ),
                        Span::styled(
                            format!("{:<7} ", item.severity.label()),
                            theme.style(item.severity.slot()),
                        ),
                        Span::styled(
                            sanitize_line(&message).into_owned(),
                            theme.style(Slot::Text),
                        ),
                        Span::styled(
                            sanitize_line(&format!("{code} {}", item.source)).into_owned(),
                            theme.style(Slot::TextDim),
                        ),
                    ]);
                    if n == self.selected {
                        line = line.style(theme.style(Slot::Selection));
                    }
                    line
                }
            };
            line.render(at, buf);
        }
    }
}
