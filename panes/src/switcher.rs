//! The session switcher: every session of every project (open ones and those saved on
//! disk), filtered by a fuzzy query as the user types (nucleo's matcher, as in helix), with
//! title, project, state, last activity and a preview of the last message.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::avatar::AvatarBadge;
use crate::chrome::draw_modal;
use crate::picture::Placement;
use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::{truncate, width};

/// One session offered.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitcherEntry {
    /// The caller's handle for it.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its project's name.
    pub project: String,
    /// A glyph for its state and the theme slot to draw it in.
    pub glyph: (&'static str, Slot),
    /// Its agent's avatar in its state, drawn in the glyph's place (an open session's).
    pub avatar: Option<AvatarBadge>,
    /// Its state in a word or two (working, needs you, saved…).
    pub state: String,
    /// When it was last active, as shown.
    pub activity: Option<String>,
    /// The start of its last message.
    pub preview: Option<String>,
    /// The panes showing it (their numbers in the tab), if any.
    pub panes: Vec<usize>,
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitcherKey {
    /// Nothing.
    Ignored,
    /// The query or selection changed.
    Changed,
    /// Closed without a choice.
    Closed,
    /// This entry (by id) was chosen: to show in the focused pane, or in a new split.
    Chosen {
        /// The entry's id.
        id: u64,
        /// In a new split rather than the focused pane.
        split: bool,
    },
}

/// The open switcher.
pub struct Switcher {
    entries: Vec<SwitcherEntry>,
    query: String,
    /// Matching entries: index, and the matched character positions in `haystack`.
    matches: Vec<(usize, Vec<u32>)>,
    selected: usize,
    matcher: Matcher,
    /// Saved sessions are still being listed.
    loading: bool,
    /// `entries[0]` is pinned: always listed first, whatever the query.
    pinned: bool,
    /// The border's name for the list.
    title: String,
    /// The key hints at the bottom.
    footer: String,
    /// Turns whose text matched the query (found by the caller's search): listed after
    /// the entries matched by title, whatever their titles.
    found: Vec<SwitcherEntry>,
}

impl std::fmt::Debug for Switcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switcher")
            .field("entries", &self.entries.len())
            .field("query", &self.query)
            .field("selected", &self.selected)
            .finish()
    }
}

/// What the query is matched against: the title, then the project.
fn haystack(e: &SwitcherEntry) -> String {
    format!("{} {}", e.title, e.project)
}

impl Switcher {
    /// A switcher over `entries` (in the order to show them when nothing is typed).
    pub fn new(entries: Vec<SwitcherEntry>) -> Self {
        let mut s = Switcher {
            entries,
            query: String::new(),
            matches: Vec::new(),
            selected: 0,
            matcher: Matcher::new(Config::DEFAULT),
            loading: false,
            pinned: false,
            title: "Sessions".to_string(),
            footer: " enter show here · alt-enter/ctrl-s in a split · ↑↓ select · esc close"
                .to_string(),
            found: Vec::new(),
        };
        s.refilter();
        s
    }

    /// Names the list in its border (default: Sessions).
    pub fn set_title(&mut self, title: impl Into<String>) {
        self.title = title.into();
    }

    /// Sets the key hints at the bottom.
    pub fn set_footer(&mut self, footer: impl Into<String>) {
        self.footer = footer.into();
    }

    /// Says whether more entries are on their way (drawn as a note).
    pub fn set_loading(&mut self, loading: bool) {
        self.loading = loading;
    }

    /// Adds entries (saved sessions, once listed), keeping the selection on its entry.
    pub fn extend(&mut self, entries: impl IntoIterator<Item = SwitcherEntry>) {
        let keep = self.selected_id();
        self.entries.extend(entries);
        self.refilter_keeping(keep);
    }

    /// Filters again, the selection staying on entry `keep` when it still matches.
    fn refilter_keeping(&mut self, keep: Option<u64>) {
        self.refilter();
        if let Some(id) = keep
            && let Some(at) = self
                .matches
                .iter()
                .position(|(i, _)| self.entry(*i).id == id)
        {
            self.selected = at;
        }
    }

    /// Puts `entry` first whatever the query (or removes the pinned one): for a choice
    /// made from the query itself, such as a typed path.
    pub fn set_pinned(&mut self, entry: Option<SwitcherEntry>) {
        if self.pinned {
            self.entries.remove(0);
        }
        self.pinned = entry.is_some();
        if let Some(entry) = entry {
            self.entries.insert(0, entry);
        }
        self.refilter();
    }

    /// Sets the turns whose text matched the current query (each entry's preview is what
    /// matched); they follow the entries matched by title.
    pub fn set_found(&mut self, found: Vec<SwitcherEntry>) {
        let keep = self.selected_id();
        self.found = found;
        self.refilter_keeping(keep);
    }

    /// Entry `i`: the entries, then the found turns.
    fn entry(&self, i: usize) -> &SwitcherEntry {
        match self.entries.get(i) {
            Some(e) => e,
            None => &self.found[i - self.entries.len()],
        }
    }

    /// The query typed so far.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The ids of the matching entries, best first.
    pub fn matching(&self) -> Vec<u64> {
        self.matches
            .iter()
            .map(|(i, _)| self.entry(*i).id)
            .collect()
    }

    fn selected_id(&self) -> Option<u64> {
        self.matches
            .get(self.selected)
            .map(|(i, _)| self.entry(*i).id)
    }

    fn refilter(&mut self) {
        let pattern = Pattern::parse(&self.query, CaseMatching::Smart, Normalization::Smart);
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, usize, Vec<u32>)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            if self.pinned && i == 0 {
                scored.push((u32::MAX, 0, Vec::new()));
                continue;
            }
            let hay = haystack(e);
            let mut indices = Vec::new();
            if let Some(score) = pattern.indices(
                Utf32Str::new(&hay, &mut buf),
                &mut self.matcher,
                &mut indices,
            ) {
                indices.sort_unstable();
                indices.dedup();
                scored.push((score, i, indices));
            }
        }
        // Best score first; ties keep the given order.
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        self.matches = scored.into_iter().map(|(_, i, ind)| (i, ind)).collect();
        let n = self.entries.len();
        self.matches
            .extend((0..self.found.len()).map(|k| (n + k, Vec::new())));
        self.selected = self.selected.min(self.matches.len().saturating_sub(1));
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) -> SwitcherKey {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => SwitcherKey::Closed,
            KeyCode::Enter => match self.selected_id() {
                Some(id) => SwitcherKey::Chosen {
                    id,
                    split: alt || key.modifiers.contains(KeyModifiers::SHIFT),
                },
                None => SwitcherKey::Ignored,
            },
            // Ctrl-s like a split in many pickers (and helix's).
            KeyCode::Char('s') if ctrl => match self.selected_id() {
                Some(id) => SwitcherKey::Chosen { id, split: true },
                None => SwitcherKey::Ignored,
            },
            KeyCode::Up | KeyCode::BackTab => self.move_by(-1),
            KeyCode::Char('p') if ctrl => self.move_by(-1),
            KeyCode::Down | KeyCode::Tab => self.move_by(1),
            KeyCode::Char('n') if ctrl => self.move_by(1),
            KeyCode::Backspace => {
                if self.query.pop().is_some() {
                    self.selected = 0;
                    self.refilter();
                    SwitcherKey::Changed
                } else {
                    SwitcherKey::Ignored
                }
            }
            KeyCode::Char('u') if ctrl => {
                self.query.clear();
                self.selected = 0;
                self.refilter();
                SwitcherKey::Changed
            }
            KeyCode::Char(c) if !ctrl && !alt && !c.is_control() => {
                self.query.push(c);
                self.selected = 0;
                self.refilter();
                SwitcherKey::Changed
            }
            _ => SwitcherKey::Ignored,
        }
    }

    /// Inserts pasted text into the query (its first line, ended by CR, LF or CRLF).
    pub fn paste(&mut self, text: &str) -> SwitcherKey {
        let line: String = crate::paste::paste_lines(text)
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .collect();
        if line.is_empty() {
            return SwitcherKey::Ignored;
        }
        self.query.push_str(&line);
        self.selected = 0;
        self.refilter();
        SwitcherKey::Changed
    }

    fn move_by(&mut self, delta: isize) -> SwitcherKey {
        let n = self.matches.len();
        if n == 0 {
            return SwitcherKey::Ignored;
        }
        self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        SwitcherKey::Changed
    }

    /// Draws the switcher centred in `area`; where its avatars' pictures go, for terminals
    /// that show `pictures`.
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        pictures: bool,
    ) -> Vec<Placement> {
        let mut placed = Vec::new();
        let w = area.width.saturating_sub(4).min(110);
        if w < 24 || area.height < 6 {
            return placed;
        }
        let h = area.height.saturating_sub(4).min(24);
        let rect = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        );
        let body = theme.style(Slot::Modal);
        let dim = body.patch(theme.style(Slot::TextDim));
        // Sessions matched by title of all sessions; turns found by their text apart.
        let turns = match self.found.len() {
            0 => String::new(),
            1 => " · 1 turn".to_string(),
            n => format!(" · {n} turns"),
        };
        let title = format!(
            "{} · {} of {}{turns}{}",
            self.title,
            self.matches.len() - self.found.len(),
            self.entries.len(),
            if self.loading {
                " · listing saved…"
            } else {
                ""
            }
        );
        let inner = draw_modal(rect, &title, buf, theme);
        let iw = usize::from(inner.width);
        let query = sanitize_line(&self.query);
        buf.set_line(
            inner.x,
            inner.y,
            &Line::from(vec![
                Span::styled(" › ", theme.style(Slot::UserMarker)),
                Span::styled(truncate(&query, iw.saturating_sub(4)), body),
            ]),
            inner.width,
        );
        buf.set_line(
            inner.x,
            inner.bottom().saturating_sub(1),
            &Line::styled(truncate(&self.footer, iw), theme.style(Slot::Hint)),
            inner.width,
        );
        let rows = usize::from(inner.height.saturating_sub(2));
        if self.matches.is_empty() {
            let note = if self.entries.is_empty() {
                " No sessions."
            } else {
                " Nothing matches."
            };
            buf.set_line(inner.x, inner.y + 1, &Line::styled(note, dim), inner.width);
            return placed;
        }
        // Avatars take a column more than glyphs: every row makes room when one has one.
        let avatars = self
            .matches
            .iter()
            .any(|(i, _)| self.entry(*i).avatar.is_some());
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        for (row, (at, (i, indices))) in self
            .matches
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .enumerate()
        {
            let e = &self.entry(*i);
            let selected = at == self.selected;
            let base = if selected {
                body.patch(theme.style(Slot::Selection))
            } else {
                body
            };
            let line = entry_line(e, indices, iw, base, theme, avatars);
            let y = inner.y + 1 + row as u16;
            buf.set_line(inner.x, y, &line, inner.width);
            // The avatar takes the glyph's two cells.
            if let Some(badge) = &e.avatar {
                placed.extend(badge.draw((inner.x + 1, y), buf, theme, base, pictures));
            }
        }
        placed
    }
}

/// One entry's row: glyph, title (matched characters marked), project, state, panes,
/// activity, then the preview in what room is left.
fn entry_line(
    e: &SwitcherEntry,
    indices: &[u32],
    iw: usize,
    base: Style,
    theme: &Theme,
    avatars: bool,
) -> Line<'static> {
    let dim = base.patch(theme.style(Slot::TextDim));
    // The cells before the title: a space, the glyph (or avatar) and the space after.
    let lead = if avatars { 5 } else { 4 };
    let mark = base
        .patch(theme.style(Slot::Strong))
        .patch(theme.style(Slot::Warning));
    let mut spans = vec![
        Span::styled(" ", base),
        Span::styled(
            format!("{}{}", e.glyph.0, if avatars { "  " } else { " " }),
            base.patch(theme.style(e.glyph.1)),
        ),
    ];
    let title = sanitize_line(&e.title).into_owned();
    let title_w = 36.min(iw / 3).max(8);
    let shown = truncate(&title, title_w);
    let mut used = 0;
    for (ci, ch) in shown.chars().enumerate() {
        let style = if indices.binary_search(&(ci as u32)).is_ok() {
            mark
        } else {
            base
        };
        spans.push(Span::styled(ch.to_string(), style));
        used += width(&ch.to_string());
    }
    spans.push(Span::styled(
        " ".repeat(title_w.saturating_sub(used) + 1),
        base,
    ));
    let mut facts = vec![sanitize_line(&e.project).into_owned(), e.state.clone()];
    if !e.panes.is_empty() {
        let panes: Vec<String> = e.panes.iter().map(|p| p.to_string()).collect();
        facts.push(format!("pane {}", panes.join(",")));
    }
    if let Some(a) = &e.activity {
        facts.push(sanitize_line(a).into_owned());
    }
    let facts = truncate(
        &facts.join(" · "),
        44.min(iw.saturating_sub(title_w + lead)),
    );
    let fw = width(&facts);
    spans.push(Span::styled(facts, base));
    let left = iw.saturating_sub(title_w + lead + fw + 3);
    if let Some(p) = &e.preview
        && left > 8
    {
        spans.push(Span::styled(" — ", dim));
        spans.push(Span::styled(truncate(&sanitize_line(p), left), dim));
    }
    let total: usize = spans.iter().map(|s| width(&s.content)).sum();
    spans.push(Span::styled(" ".repeat(iw.saturating_sub(total)), base));
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::test_support::dark;

    fn entry(id: u64, title: &str, project: &str, state: &str) -> SwitcherEntry {
        SwitcherEntry {
            id,
            title: title.into(),
            project: project.into(),
            glyph: ("●", Slot::Info),
            state: state.into(),
            activity: Some("07:12".into()),
            preview: Some("The tests pass now; I changed the parser to keep comments.".into()),
            panes: if id == 1 { vec![1] } else { vec![] },
            avatar: None,
        }
    }

    fn entries() -> Vec<SwitcherEntry> {
        vec![
            entry(1, "Fix the parser", "api", "working"),
            entry(2, "Write the release notes", "docs", "idle"),
            entry(3, "Parser benchmarks", "api", "saved"),
        ]
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(s: &mut Switcher, text: &str) {
        for c in text.chars() {
            s.key(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn typing_filters_fuzzily_and_enter_chooses() {
        let mut s = Switcher::new(entries());
        assert_eq!(s.matching(), [1, 2, 3]);
        typed(&mut s, "prsr");
        assert_eq!(s.matching().len(), 2, "{:?}", s.matching());
        assert!(!s.matching().contains(&2));
        s.key(key(KeyCode::Backspace));
        assert_eq!(s.query(), "prs");
        s.key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        typed(&mut s, "docs");
        assert_eq!(s.matching(), [2], "the project is matched too");
        assert_eq!(
            s.key(key(KeyCode::Enter)),
            SwitcherKey::Chosen {
                id: 2,
                split: false
            }
        );
        assert_eq!(
            s.key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)),
            SwitcherKey::Chosen { id: 2, split: true }
        );
        typed(&mut s, "zzz");
        assert_eq!(s.key(key(KeyCode::Enter)), SwitcherKey::Ignored);
        assert_eq!(s.key(key(KeyCode::Esc)), SwitcherKey::Closed);
    }

    #[test]
    fn arrows_wrap_and_added_entries_keep_the_selection() {
        let mut s = Switcher::new(entries());
        s.key(key(KeyCode::Up));
        assert_eq!(s.selected_id(), Some(3));
        s.extend([entry(4, "Older session", "web", "saved")]);
        assert_eq!(s.selected_id(), Some(3));
        assert_eq!(s.matching().len(), 4);
        assert_eq!(s.paste("web\nignored"), SwitcherKey::Changed);
        assert_eq!(s.matching(), [4]);
    }

    #[test]
    fn a_paste_gives_the_query_its_first_line_whatever_the_line_end() {
        for pasted in ["docs\rignored", "docs\r\nignored", "docs\nignored"] {
            let mut s = Switcher::new(entries());
            assert_eq!(s.paste(pasted), SwitcherKey::Changed);
            assert_eq!(s.query(), "docs", "{pasted:?}");
        }
    }

    #[test]
    fn a_pinned_entry_stays_first_whatever_the_query() {
        let mut s = Switcher::new(entries());
        s.set_pinned(Some(entry(9, "open /tmp/x", "", "path")));
        typed(&mut s, "docs");
        assert_eq!(s.matching(), [9, 2]);
        s.set_pinned(None);
        assert_eq!(s.matching(), [2]);
    }

    #[test]
    fn snapshot() {
        let mut s = Switcher::new(entries());
        s.set_loading(true);
        typed(&mut s, "par");
        let mut t = Terminal::new(TestBackend::new(100, 12)).unwrap();
        t.draw(|f| {
            s.render(f.area(), f.buffer_mut(), &dark(), false);
        })
        .unwrap();
        insta::assert_snapshot!(t.backend());
    }

    #[test]
    fn open_sessions_show_their_agents_avatar_in_their_state_with_and_without_pictures() {
        use crate::attention::Attention;
        use crate::avatar::{AvatarBadge, testing};
        let theme = dark();
        let avatar = testing::avatar(&theme);
        let mut list: Vec<SwitcherEntry> = Attention::ALL
            .iter()
            .enumerate()
            .map(|(i, state)| SwitcherEntry {
                avatar: Some(AvatarBadge {
                    avatar: avatar.clone(),
                    state: *state,
                }),
                glyph: (state.glyph(), state.slot()),
                ..entry(i as u64 + 1, "Fix the parser", "api", state.words())
            })
            .collect();
        // A saved session has no state: its glyph.
        list.push(entry(6, "Parser benchmarks", "api", "saved"));
        let s = Switcher::new(list);
        let mut shown = Vec::new();
        for pictures in [false, true] {
            let mut buf = Buffer::empty(Rect::new(0, 0, 64, 14));
            let placed = s.render(buf.area, &mut buf, &theme, pictures);
            shown.push(format!("pictures {pictures}:"));
            shown.extend((4..10).map(|y| testing::shown_row(&buf, y, &placed, &avatar)));
        }
        insta::assert_snapshot!(shown.join("\n"));
    }
}
