//! The session tree in the pane (`/tree`, pi's tree selector) and the rewind list (`/rewind`,
//! Esc Esc: the user messages of the current path). Choosing an entry moves the session's
//! leaf there; leaving a branch that holds conversation first asks whether to summarise it.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use crate::chrome::draw_modal;
use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// What a tree entry records, as the pane shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeNodeKind {
    /// A user message (choosing it puts its text back in the editor).
    User,
    /// The model's answer.
    Assistant,
    /// A tool's result.
    ToolResult,
    /// A command the user ran.
    Bash,
    /// An extension's message (chosen like a user message).
    CustomMessage,
    /// The summary of a branch left.
    BranchSummary,
    /// A compaction.
    Compaction,
    /// A model, thinking level or tools change.
    Settings,
    /// A label, leaf move, name or extension state.
    Meta,
    /// Anything else.
    Other,
}

impl TreeNodeKind {
    /// Whether leaving it loses conversation.
    fn is_conversation(self) -> bool {
        matches!(
            self,
            Self::User
                | Self::Assistant
                | Self::Bash
                | Self::CustomMessage
                | Self::BranchSummary
                | Self::Compaction
        )
    }

    /// Whether choosing it puts the leaf on its parent and its text in the editor.
    fn resubmits(self) -> bool {
        matches!(self, Self::User | Self::CustomMessage)
    }

    fn tag(self) -> &'static str {
        match self {
            Self::User => "you",
            Self::Assistant => "agent",
            Self::ToolResult => "tool",
            Self::Bash => "shell",
            Self::CustomMessage => "note",
            Self::BranchSummary => "summary",
            Self::Compaction => "compacted",
            Self::Settings | Self::Meta | Self::Other => "·",
        }
    }
}

/// One entry of a session's tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    /// The entry id.
    pub id: String,
    /// Its parent; `None` for a root.
    pub parent_id: Option<String>,
    /// What it records.
    pub kind: TreeNodeKind,
    /// One line of its text (sanitised when drawn).
    pub text: String,
    /// Its label, if any.
    pub label: Option<String>,
    /// When it was written (ms since the epoch), when known.
    pub at_ms: Option<u64>,
}

/// One file a rewind would restore, as listed before asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreLine {
    /// What would happen to it.
    pub text: String,
    /// It would be left as it is (changed since, too large).
    pub refused: bool,
}

/// A move chosen in the tree, for the app to make (`_march/session/navigate`).
#[derive(Debug, Clone, PartialEq)]
pub struct TreeMove {
    /// The chosen entry.
    pub entry_id: String,
    /// Summarise the branch left.
    pub summarize: bool,
    /// The summary's focus.
    pub instructions: Option<String>,
    /// Chosen from the rewind list.
    pub rewind: bool,
    /// When the chosen entry was written (ms since the epoch), when known.
    pub at_ms: Option<u64>,
    /// Restore the project's files to that time too.
    pub restore: bool,
}

/// What a key did to the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TreeKey {
    Ignored,
    Redraw,
    Closed,
    Chosen(TreeMove),
    /// A rewind target: the app looks at the files changed since before going.
    Check(TreeMove),
    Label(String, Option<String>),
}

/// Which entries the tree shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    /// The conversation: no tool results, settings or bookkeeping.
    Default,
    /// What the user said, and summaries.
    UserOnly,
    /// Entries with a label.
    Labelled,
    /// Everything.
    All,
}

impl Filter {
    fn next(self) -> Self {
        match self {
            Self::Default => Self::UserOnly,
            Self::UserOnly => Self::Labelled,
            Self::Labelled => Self::All,
            Self::All => Self::Default,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Default => "conversation",
            Self::UserOnly => "your messages",
            Self::Labelled => "labelled",
            Self::All => "everything",
        }
    }

    fn shows(self, node: &TreeNode) -> bool {
        use TreeNodeKind as K;
        match self {
            Self::Default => !matches!(node.kind, K::ToolResult | K::Settings | K::Meta),
            Self::UserOnly => matches!(node.kind, K::User | K::CustomMessage | K::BranchSummary),
            Self::Labelled => node.label.is_some(),
            Self::All => true,
        }
    }
}

/// What the tree is doing.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Browse,
    /// Leaving a branch with conversation: how to summarise it.
    Summary {
        target: usize,
        choice: usize,
    },
    /// Typing the summary's focus.
    Focus {
        target: usize,
        text: String,
    },
    /// Typing a label.
    Label {
        target: usize,
        text: String,
    },
    /// Rewinding: the app looks at the files changed since.
    Checking,
    /// Rewinding: restore the files listed, or only go back in the conversation.
    Restore {
        target: usize,
        lines: Vec<RestoreLine>,
        choice: usize,
    },
}

const RESTORE_CHOICES: [&str; 3] = [
    "Go back and restore the files",
    "Go back, keep the files as they are",
    "Cancel",
];

const SUMMARY_CHOICES: [&str; 3] = [
    "No summary",
    "Summarize the branch you leave",
    "Summarize, with a focus…",
];

/// One visible line: an entry, how deep, and its branch mark (last sibling or not).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Row {
    node: usize,
    depth: u16,
    mark: Option<bool>,
}

/// The open tree (or rewind list).
#[derive(Debug, Clone)]
pub(crate) struct TreeView {
    nodes: Vec<TreeNode>,
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    leaf: Option<usize>,
    on_path: Vec<bool>,
    rewind: bool,
    filter: Filter,
    rows: Vec<Row>,
    selected: usize,
    stage: Stage,
}

impl TreeView {
    /// The tree of `nodes` (file order: parents first) with the leaf at `leaf`, or with
    /// `rewind` the user messages of the current path; none when there is nothing to show.
    pub(crate) fn new(nodes: Vec<TreeNode>, leaf: Option<&str>, rewind: bool) -> Option<Self> {
        let index: HashMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let mut parent = vec![None; nodes.len()];
        let mut children = vec![Vec::new(); nodes.len()];
        let mut roots = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            let p = node
                .parent_id
                .as_deref()
                .and_then(|p| index.get(p).copied())
                .filter(|&p| p != i);
            parent[i] = p;
            match p.and_then(|p| children.get_mut(p)) {
                Some(siblings) => siblings.push(i),
                None => roots.push(i),
            }
        }
        let leaf = leaf.and_then(|l| index.get(l).copied());
        drop(index);
        let mut view = TreeView {
            on_path: vec![false; nodes.len()],
            nodes,
            parent,
            children,
            roots,
            leaf,
            rewind,
            filter: Filter::Default,
            rows: Vec::new(),
            selected: 0,
            stage: Stage::Browse,
        };
        for i in view.path(leaf) {
            view.on_path[i] = true;
        }
        view.rebuild();
        if view.rows.is_empty() {
            return None;
        }
        if rewind {
            // The newest message first under the cursor.
            view.selected = view.rows.len() - 1;
        }
        Some(view)
    }

    /// The same view over a newer copy of the session's tree: the filter and the entry under
    /// the cursor stay. None while a question is open (its answer is about the old copy) or
    /// when there is nothing to show.
    pub(crate) fn refreshed(&self, nodes: Vec<TreeNode>, leaf: Option<&str>) -> Option<Self> {
        if self.stage != Stage::Browse {
            return None;
        }
        let under_cursor = self
            .rows
            .get(self.selected)
            .and_then(|r| self.nodes.get(r.node))
            .map(|n| n.id.clone());
        let mut view = TreeView::new(nodes, leaf, self.rewind)?;
        view.filter = self.filter;
        let keep = under_cursor.and_then(|id| view.nodes.iter().position(|n| n.id == id));
        view.rebuild_keeping(keep);
        if view.rows.is_empty() {
            return None;
        }
        Some(view)
    }

    /// Positions from the root down to `at`; stops at a cycle.
    fn path(&self, at: Option<usize>) -> Vec<usize> {
        let mut path = Vec::new();
        let mut seen = vec![false; self.nodes.len()];
        let mut current = at;
        while let Some(i) = current {
            if seen.get(i).copied().unwrap_or(true) {
                break;
            }
            seen[i] = true;
            path.push(i);
            current = self.parent.get(i).copied().flatten();
        }
        path.reverse();
        path
    }

    /// The visible rows for the filter; the cursor stays on its entry, else goes to the
    /// leaf's nearest visible ancestor.
    fn rebuild(&mut self) {
        self.rebuild_keeping(self.rows.get(self.selected).map(|r| r.node));
    }

    /// [`Self::rebuild`], with the cursor on `keep` when it is shown.
    fn rebuild_keeping(&mut self, keep: Option<usize>) {
        self.rows.clear();
        if self.rewind {
            for i in self.path(self.leaf) {
                if self.nodes[i].kind == TreeNodeKind::User {
                    self.rows.push(Row {
                        node: i,
                        depth: 0,
                        mark: None,
                    });
                }
            }
            let at = keep.and_then(|w| self.rows.iter().position(|r| r.node == w));
            self.selected = at.unwrap_or(self.selected.min(self.rows.len().saturating_sub(1)));
            return;
        }
        // Depth grows only at branch points, so a long conversation stays at the left.
        let mut stack: Vec<(usize, u16, Option<bool>)> = Vec::new();
        let many_roots = self.roots.len() > 1;
        for (n, &root) in self.roots.iter().enumerate().rev() {
            let mark = many_roots.then_some(n + 1 == self.roots.len());
            stack.push((root, u16::from(many_roots), mark));
        }
        while let Some((i, depth, mark)) = stack.pop() {
            let shown = self.filter.shows(&self.nodes[i]);
            if shown {
                self.rows.push(Row {
                    node: i,
                    depth,
                    mark,
                });
            }
            let kids = &self.children[i];
            if kids.len() > 1 {
                for (n, &child) in kids.iter().enumerate().rev() {
                    stack.push((child, depth.saturating_add(1), Some(n + 1 == kids.len())));
                }
            } else if let Some(&child) = kids.first() {
                // A hidden entry hands its branch mark to what follows it.
                stack.push((child, depth, if shown { None } else { mark }));
            }
        }
        let want = keep.or_else(|| {
            self.path(self.leaf)
                .into_iter()
                .rev()
                .find(|&i| self.filter.shows(&self.nodes[i]))
        });
        self.selected = want
            .and_then(|w| self.rows.iter().position(|r| r.node == w))
            .unwrap_or(self.rows.len().saturating_sub(1));
    }

    /// Handles a key.
    pub(crate) fn key(&mut self, key: KeyEvent) -> TreeKey {
        match self.stage.clone() {
            Stage::Browse => self.browse_key(key),
            Stage::Summary { target, choice } => match key.code {
                KeyCode::Esc => self.back(),
                KeyCode::Up | KeyCode::BackTab => self.choose(target, choice, -1),
                KeyCode::Down | KeyCode::Tab => self.choose(target, choice, 1),
                KeyCode::Enter => match choice {
                    0 | 1 => TreeKey::Chosen(self.move_to(target, choice == 1, None)),
                    _ => {
                        self.stage = Stage::Focus {
                            target,
                            text: String::new(),
                        };
                        TreeKey::Redraw
                    }
                },
                _ => TreeKey::Ignored,
            },
            Stage::Focus { target, text } => match edit(key, text) {
                Edited::Back => self.back(),
                Edited::Text(text) => {
                    self.stage = Stage::Focus { target, text };
                    TreeKey::Redraw
                }
                Edited::Done(text) => TreeKey::Chosen(self.move_to(target, true, Some(text))),
                Edited::Ignored => TreeKey::Ignored,
            },
            Stage::Checking => match key.code {
                KeyCode::Esc => TreeKey::Closed,
                _ => TreeKey::Ignored,
            },
            Stage::Restore {
                target,
                lines,
                choice,
            } => {
                let n = RESTORE_CHOICES.len() as isize;
                let step = |delta: isize| (choice as isize + delta).rem_euclid(n) as usize;
                match key.code {
                    KeyCode::Esc => self.back(),
                    KeyCode::Up | KeyCode::BackTab | KeyCode::Down | KeyCode::Tab => {
                        let up = matches!(key.code, KeyCode::Up | KeyCode::BackTab);
                        let choice = step(if up { -1 } else { 1 });
                        self.stage = Stage::Restore {
                            target,
                            lines,
                            choice,
                        };
                        TreeKey::Redraw
                    }
                    KeyCode::Enter if choice == 2 => self.back(),
                    KeyCode::Enter => {
                        let mut chosen = self.move_to(target, false, None);
                        chosen.restore = choice == 0;
                        TreeKey::Chosen(chosen)
                    }
                    _ => TreeKey::Ignored,
                }
            }
            Stage::Label { target, text } => match edit(key, text) {
                Edited::Back => self.back(),
                Edited::Text(text) => {
                    self.stage = Stage::Label { target, text };
                    TreeKey::Redraw
                }
                Edited::Done(text) => {
                    let label = Some(text.trim().to_string()).filter(|l| !l.is_empty());
                    self.nodes[target].label.clone_from(&label);
                    self.stage = Stage::Browse;
                    TreeKey::Label(self.nodes[target].id.clone(), label)
                }
                Edited::Ignored => TreeKey::Ignored,
            },
        }
    }

    fn browse_key(&mut self, key: KeyEvent) -> TreeKey {
        let page = 10;
        match key.code {
            KeyCode::Esc => TreeKey::Closed,
            KeyCode::Up | KeyCode::Char('k') => self.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_by(1),
            KeyCode::PageUp => self.move_by(-page),
            KeyCode::PageDown => self.move_by(page),
            KeyCode::Home | KeyCode::Char('g') => self.move_by(-(self.rows.len() as isize)),
            KeyCode::End | KeyCode::Char('G') => self.move_by(self.rows.len() as isize),
            KeyCode::Tab if !self.rewind => {
                self.filter = self.filter.next();
                self.rebuild();
                TreeKey::Redraw
            }
            KeyCode::Char('l') if !self.rewind && key.modifiers.is_empty() => {
                let Some(row) = self.rows.get(self.selected) else {
                    return TreeKey::Ignored;
                };
                let text = self.nodes[row.node].label.clone().unwrap_or_default();
                self.stage = Stage::Label {
                    target: row.node,
                    text,
                };
                TreeKey::Redraw
            }
            KeyCode::Enter => self.enter(),
            _ => TreeKey::Ignored,
        }
    }

    fn move_by(&mut self, delta: isize) -> TreeKey {
        let last = self.rows.len().saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last) as usize;
        TreeKey::Redraw
    }

    fn back(&mut self) -> TreeKey {
        self.stage = Stage::Browse;
        TreeKey::Redraw
    }

    fn choose(&mut self, target: usize, choice: usize, delta: isize) -> TreeKey {
        let n = SUMMARY_CHOICES.len() as isize;
        let choice = (choice as isize + delta).rem_euclid(n) as usize;
        self.stage = Stage::Summary { target, choice };
        TreeKey::Redraw
    }

    /// Enter on an entry: the move, or first the summary question.
    fn enter(&mut self) -> TreeKey {
        let Some(target) = self.rows.get(self.selected).map(|r| r.node) else {
            return TreeKey::Ignored;
        };
        if self.rewind {
            self.stage = Stage::Checking;
            return TreeKey::Check(self.move_to(target, false, None));
        }
        let kind = self.nodes[target].kind;
        let new_leaf = if kind.resubmits() {
            self.parent[target]
        } else {
            Some(target)
        };
        if new_leaf == self.leaf && !kind.resubmits() {
            return TreeKey::Closed;
        }
        if self.left_behind_holds_conversation(target) {
            self.stage = Stage::Summary { target, choice: 0 };
            TreeKey::Redraw
        } else {
            TreeKey::Chosen(self.move_to(target, false, None))
        }
    }

    /// Whether the entries from the leaf back to where its path meets `target`'s hold
    /// conversation (what a summary would be made of).
    fn left_behind_holds_conversation(&self, target: usize) -> bool {
        let mut on_target = vec![false; self.nodes.len()];
        for i in self.path(Some(target)) {
            on_target[i] = true;
        }
        self.path(self.leaf)
            .into_iter()
            .filter(|&i| !on_target[i])
            .any(|i| self.nodes[i].kind.is_conversation())
    }

    fn move_to(&self, target: usize, summarize: bool, instructions: Option<String>) -> TreeMove {
        TreeMove {
            entry_id: self.nodes[target].id.clone(),
            summarize,
            instructions: instructions.filter(|t| !t.trim().is_empty()),
            rewind: self.rewind,
            at_ms: self.nodes[target].at_ms,
            restore: false,
        }
    }

    /// The files a rewind to `entry_id` would restore arrived: ask.
    pub(crate) fn offer_restore(&mut self, entry_id: &str, lines: Vec<RestoreLine>) -> bool {
        let Some(target) = self.nodes.iter().position(|n| n.id == entry_id) else {
            return false;
        };
        self.stage = Stage::Restore {
            target,
            lines,
            choice: 0,
        };
        true
    }

    /// Draws the tree over most of `area`.
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = area.width.saturating_sub(2).min(120);
        let height = area.height.saturating_sub(2);
        if width < 20 || height < 5 {
            return;
        }
        let rect = Rect::new(area.x + (area.width - width) / 2, area.y + 1, width, height);
        let title = if self.rewind {
            "Rewind to one of your messages".to_string()
        } else {
            format!("Session tree · {}", self.filter.name())
        };
        let inner = draw_modal(rect, &title, buf, theme);
        let body = theme.style(Slot::Modal);
        let w = usize::from(inner.width);
        let list_rows = usize::from(inner.height.saturating_sub(1));
        let first = self
            .selected
            .saturating_sub(list_rows / 2)
            .min(self.rows.len().saturating_sub(list_rows));
        for (line, (i, row)) in self
            .rows
            .iter()
            .enumerate()
            .skip(first)
            .take(list_rows)
            .enumerate()
        {
            let b = self.row_line(row, i == self.selected, w, body, theme);
            buf.set_line(inner.x, inner.y + line as u16, &b.finish(), inner.width);
        }
        let hint = match &self.stage {
            Stage::Browse if self.rewind => {
                "Enter: go back to this message · Esc: close".to_string()
            }
            Stage::Browse => "Enter: go here · l: label · Tab: filter · Esc: close".to_string(),
            Stage::Summary { .. } | Stage::Restore { .. } => {
                "Enter: choose · Esc: back".to_string()
            }
            Stage::Checking => "Looking at the files changed since…".to_string(),
            Stage::Focus { text, .. } => format!("Focus of the summary: {text}▏"),
            Stage::Label { text, .. } => format!("Label (empty clears): {text}▏"),
        };
        let mut b = LineBuilder::new(&[]);
        b.push(
            &wrap::truncate(&sanitize_line(&hint), w),
            body.patch(theme.style(Slot::Hint)),
        );
        b.pad_to(w, body);
        let bottom = inner.y + inner.height.saturating_sub(1);
        buf.set_line(inner.x, bottom, &b.finish(), inner.width);
        match &self.stage {
            Stage::Summary { choice, .. } => {
                let choices = SUMMARY_CHOICES.map(str::to_string);
                question(
                    inner,
                    "Leave this branch",
                    &[],
                    &choices,
                    *choice,
                    buf,
                    theme,
                );
            }
            Stage::Restore { lines, choice, .. } => {
                let restorable = lines.iter().filter(|l| !l.refused).count();
                let mut choices = RESTORE_CHOICES.map(str::to_string);
                choices[0] = match restorable {
                    1 => "Go back and restore 1 file".to_string(),
                    n => format!("Go back and restore {n} files"),
                };
                let title = "The session changed files since";
                question(inner, title, lines, &choices, *choice, buf, theme);
            }
            _ => {}
        }
    }

    fn row_line(
        &self,
        row: &Row,
        selected: bool,
        w: usize,
        body: Style,
        theme: &Theme,
    ) -> LineBuilder {
        let node = &self.nodes[row.node];
        let mut style = if self.on_path[row.node] {
            body
        } else {
            body.patch(theme.style(Slot::TextDim))
        };
        if selected {
            style = style.patch(theme.style(Slot::Selection));
        }
        let mut b = LineBuilder::new(&[]);
        let indent = usize::from(row.depth.min(16)) * 2;
        let mut lead =
            " ".repeat(1 + indent.saturating_sub(if row.mark.is_some() { 2 } else { 0 }));
        match row.mark {
            Some(true) => lead.push_str("└ "),
            Some(false) => lead.push_str("├ "),
            None => {}
        }
        b.push(&lead, style.patch(theme.style(Slot::Hint)));
        let tag_slot = match node.kind {
            TreeNodeKind::User => Slot::User,
            TreeNodeKind::Assistant => Slot::Agent,
            TreeNodeKind::BranchSummary | TreeNodeKind::Compaction => Slot::Info,
            _ => Slot::Hint,
        };
        b.push(
            &format!("{} ", node.kind.tag()),
            style.patch(theme.style(tag_slot)),
        );
        let mut tail = String::new();
        if let Some(label) = &node.label {
            tail.push_str(&format!(" [{}]", sanitize_line(label)));
        }
        if Some(row.node) == self.leaf {
            tail.push_str(" ◀ here");
        }
        let used = lead.chars().count() + node.kind.tag().chars().count() + 1;
        let room = w.saturating_sub(used + tail.chars().count());
        b.push(&wrap::truncate(&sanitize_line(&node.text), room), style);
        b.push(&tail, style.patch(theme.style(Slot::Warning)));
        b.pad_to(w, style);
        b
    }
}

/// A question over the tree: `lines` (a list to read first), then `choices`, `choice`
/// highlighted.
fn question(
    inner: Rect,
    title: &str,
    lines: &[RestoreLine],
    choices: &[String],
    choice: usize,
    buf: &mut Buffer,
    theme: &Theme,
) {
    let width = inner.width.min(if lines.is_empty() { 44 } else { 80 });
    let room = usize::from(inner.height.saturating_sub(choices.len() as u16 + 4));
    let shown = lines.len().min(room);
    let gap = u16::from(shown > 0);
    let height = (shown + choices.len()) as u16 + gap + 2;
    if inner.height < height || width < 12 {
        return;
    }
    let rect = Rect::new(
        inner.x + (inner.width - width) / 2,
        inner.y + (inner.height - height) / 2,
        width,
        height,
    );
    let area = draw_modal(rect, title, buf, theme);
    let body = theme.style(Slot::Modal);
    let w = usize::from(area.width);
    let mut y = area.y;
    for line in lines.iter().take(shown) {
        let style = if line.refused {
            body.patch(theme.style(Slot::Warning))
        } else {
            body
        };
        let mut b = LineBuilder::new(&[]);
        let text = format!(" {}", sanitize_line(&line.text));
        b.push(&wrap::truncate(&text, w), style);
        b.pad_to(w, body);
        buf.set_line(area.x, y, &b.finish(), area.width);
        y += 1;
    }
    y += gap;
    for (i, text) in choices.iter().enumerate() {
        let style = if i == choice {
            body.patch(theme.style(Slot::Selection))
        } else {
            body
        };
        let mut b = LineBuilder::new(&[]);
        b.push(
            &format!(" {}", wrap::truncate(text, w.saturating_sub(1))),
            style,
        );
        b.pad_to(w, style);
        buf.set_line(area.x, y, &b.finish(), area.width);
        y += 1;
    }
}

/// What a key did to a line being typed.
enum Edited {
    Ignored,
    Back,
    Text(String),
    Done(String),
}

fn edit(key: KeyEvent, mut text: String) -> Edited {
    match key.code {
        KeyCode::Esc => Edited::Back,
        KeyCode::Enter => Edited::Done(text),
        KeyCode::Backspace => {
            text.pop();
            Edited::Text(text)
        }
        KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            Edited::Text(String::new())
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
            text.push(c);
            Edited::Text(text)
        }
        _ => Edited::Ignored,
    }
}
