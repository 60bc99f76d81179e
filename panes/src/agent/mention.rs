//! `@` mentions: while the word at the cursor starts with `@`, a popup offers the project's
//! files and directories matched fuzzily (nucleo's matcher, smart case) against what follows
//! it; the choice replaces the word with `@path` (quoted when it has a space), which
//! Backspace then removes whole. The app lists the files (ignore rules honoured) and sends
//! the paths mentioned as resources.

use std::sync::Arc;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use crate::sanitize::sanitize_line;
use crate::theme::{Slot, Theme};
use crate::wrap::{self, LineBuilder};

/// Matches the popup keeps, best first.
const SHOWN: usize = 50;
/// Rows the popup shows at most.
const POPUP_ROWS: usize = 8;

/// A project's files and directories (relative, `/`-separated, directories ending in
/// `/`), as the app listed them.
pub type ProjectFiles = Arc<Vec<String>>;

/// The popup's state.
#[derive(Default)]
pub(crate) struct Mentions {
    files: Option<ProjectFiles>,
    /// The app was asked for the files and has not answered yet.
    asked: bool,
    matcher: Option<Box<Matcher>>,
    /// The query shown (what follows the `@`), while the popup is open.
    query: Option<String>,
    /// Indices of files matching `query`, to narrow when it grows.
    candidates: Vec<u32>,
    /// The best matches: file index, best first.
    items: Vec<u32>,
    selected: usize,
    /// The query the popup was closed for with Esc; it stays closed until it changes.
    dismissed: Option<String>,
    /// Mentions chosen from the popup, as inserted: Backspace removes them whole.
    chosen: Vec<String>,
}

impl std::fmt::Debug for Mentions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mentions")
            .field("files", &self.files.as_ref().map(|f| f.len()))
            .field("query", &self.query)
            .field("items", &self.items.len())
            .finish_non_exhaustive()
    }
}

/// The `@` word ending at byte `cursor` of `line`: what follows the `@`, when the word
/// starts with it (at the line's start or after a blank).
pub(crate) fn word_at(line: &str, cursor: usize) -> Option<&str> {
    let before = line.get(..cursor)?;
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    before[start..].strip_prefix('@')
}

/// `path` as a mention: `@path`, quoted when it holds a blank or a quote (a quote or a
/// backslash inside escaped with a backslash).
pub(crate) fn mention_text(path: &str) -> String {
    if path.contains(|c: char| c.is_whitespace() || c == '"') {
        let escaped = path.replace('\\', "\\\\").replace('"', "\\\"");
        format!("@\"{escaped}\"")
    } else {
        format!("@{path}")
    }
}

impl Mentions {
    /// The project's files arrived; the open query is matched again.
    pub(crate) fn set_files(&mut self, files: ProjectFiles) {
        self.files = Some(files);
        self.asked = false;
        if let Some(query) = self.query.take() {
            self.candidates.clear();
            self.update(Some(&query));
        }
    }

    /// Whether the app should list the files now (the popup wants them and none are
    /// coming); true once per request.
    pub(crate) fn wants_files(&mut self) -> bool {
        if self.query.is_some() && self.files.is_none() && !self.asked {
            self.asked = true;
            return true;
        }
        false
    }

    /// Forgets the files so the next `@` lists them again (they may have changed).
    pub(crate) fn refresh_files(&mut self) {
        if self.query.is_none() && !self.asked {
            self.files = None;
        }
    }

    /// The word at the cursor changed: `query` is what follows its `@`, or `None`.
    pub(crate) fn update(&mut self, query: Option<&str>) {
        let Some(query) = query else {
            self.close();
            self.dismissed = None;
            return;
        };
        if self.dismissed.as_deref() == Some(query) {
            return;
        }
        self.dismissed = None;
        let narrowing = self
            .query
            .as_deref()
            .is_some_and(|old| query.starts_with(old) && !self.candidates.is_empty());
        self.query = Some(query.to_string());
        let Some(files) = self.files.clone() else {
            self.items.clear();
            return;
        };
        let previous = self.items.get(self.selected).copied();
        if query.is_empty() {
            self.candidates = (0..files.len() as u32).collect();
            self.items = self.candidates.iter().take(SHOWN).copied().collect();
        } else {
            self.match_files(&files, query, narrowing);
        }
        self.selected = previous
            .and_then(|p| self.items.iter().position(|&i| i == p))
            .unwrap_or(0);
    }

    /// Scores `files` (those still matching, when the query grew) against `query`.
    fn match_files(&mut self, files: &[String], query: &str, narrowing: bool) {
        let matcher = self
            .matcher
            .get_or_insert_with(|| Box::new(Matcher::new(Config::DEFAULT.match_paths())));
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let mut buf = Vec::new();
        let mut scored: Vec<(u32, u32)> = Vec::new();
        let mut score = |i: u32| -> bool {
            let path = &files[i as usize];
            match pattern.score(Utf32Str::new(path, &mut buf), matcher) {
                Some(s) => {
                    scored.push((s, i));
                    true
                }
                None => false,
            }
        };
        if narrowing {
            let old = std::mem::take(&mut self.candidates);
            self.candidates = old.into_iter().filter(|&i| score(i)).collect();
        } else {
            self.candidates = (0..files.len() as u32).filter(|&i| score(i)).collect();
        }
        // Best score first; among equals the shorter path, then the earlier.
        let key = |&(s, i): &(u32, u32)| (std::cmp::Reverse(s), files[i as usize].len(), i);
        if scored.len() > SHOWN {
            scored.select_nth_unstable_by_key(SHOWN, key);
            scored.truncate(SHOWN);
        }
        scored.sort_unstable_by_key(key);
        self.items = scored.into_iter().map(|(_, i)| i).collect();
    }

    /// Whether the popup shows (a query is open and something matches, or files are
    /// still being listed).
    pub(crate) fn is_open(&self) -> bool {
        self.query.is_some() && (!self.items.is_empty() || self.files.is_none())
    }

    /// The popup's rows: each path, and whether it is the highlighted one.
    pub(crate) fn rows(&self) -> Vec<(String, bool)> {
        match &self.files {
            None => vec![("listing the project's files…".to_string(), false)],
            Some(files) => self
                .items
                .iter()
                .enumerate()
                .map(|(n, &i)| (files[i as usize].clone(), n == self.selected))
                .collect(),
        }
    }

    /// The highlighted path.
    pub(crate) fn selected(&self) -> Option<String> {
        let files = self.files.as_ref()?;
        let i = *self.items.get(self.selected)?;
        files.get(i as usize).cloned()
    }

    /// Moves the highlight, wrapping around.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let n = self.items.len();
        if n > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(n as isize) as usize;
        }
    }

    /// Closes the popup until the query changes (Esc).
    pub(crate) fn dismiss(&mut self) {
        self.dismissed = self.query.clone();
        self.close();
    }

    /// Closes the popup.
    pub(crate) fn close(&mut self) {
        self.query = None;
        self.items.clear();
        self.candidates.clear();
        self.selected = 0;
    }

    /// Rows the popup needs.
    pub(crate) fn height(&self) -> u16 {
        self.rows().len().min(POPUP_ROWS) as u16
    }

    /// Draws the popup into `area` (the rows just above the prompt).
    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        Clear.render(area, buf);
        buf.set_style(area, theme.style(Slot::Modal));
        let rows = self.rows();
        let shown = usize::from(area.height);
        let first = self.selected.saturating_sub(shown.saturating_sub(1));
        for (y, (path, selected)) in rows.iter().skip(first).take(shown).enumerate() {
            let base = if *selected {
                theme.style(Slot::Modal).patch(theme.style(Slot::Selection))
            } else {
                theme.style(Slot::Modal)
            };
            let mut b = LineBuilder::new(&[]);
            b.push(" @", base.patch(theme.style(Slot::Hint)));
            let room = usize::from(area.width).saturating_sub(3);
            b.push(&wrap::truncate(&sanitize_line(path), room), base);
            b.pad_to(usize::from(area.width), base);
            buf.set_line(area.x, area.y + y as u16, &b.finish(), area.width);
        }
    }

    /// Remembers `text` (a mention inserted) as one unit for Backspace.
    pub(crate) fn chose(&mut self, text: String) {
        self.chosen.push(text);
    }

    /// The chosen mention that `before` (the line up to the cursor) ends with, if any.
    pub(crate) fn chosen_before(&self, before: &str) -> Option<&str> {
        self.chosen
            .iter()
            .filter(|m| {
                before.ends_with(m.as_str()) && {
                    let start = before.len() - m.len();
                    start == 0 || before[..start].ends_with(char::is_whitespace)
                }
            })
            .map(String::as_str)
            .max_by_key(|m| m.len())
    }

    /// The prompt was sent: mentions start afresh.
    pub(crate) fn sent(&mut self) {
        self.chosen.clear();
        self.close();
        self.refresh_files();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> ProjectFiles {
        Arc::new(paths.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn the_word_at_the_cursor_is_a_mention_when_it_starts_with_at() {
        assert_eq!(word_at("see @src/ma", 11), Some("src/ma"));
        assert_eq!(word_at("@", 1), Some(""));
        assert_eq!(word_at("mail me@example.com", 19), None);
        assert_eq!(word_at("see @src now", 12), None);
        assert_eq!(word_at("é @ü", "é @ü".len()), Some("ü"));
    }

    #[test]
    fn files_are_matched_fuzzily_best_first_and_narrowed_as_typed() {
        let mut m = Mentions::default();
        m.update(Some("mai"));
        assert!(m.is_open(), "open while the files are listed");
        assert!(m.wants_files());
        assert!(!m.wants_files(), "asked once");
        m.set_files(files(&[
            "README.md",
            "src/",
            "src/main.rs",
            "src/domain/mail.rs",
            "tests/main_test.rs",
        ]));
        let rows: Vec<String> = m.rows().into_iter().map(|(p, _)| p).collect();
        assert_eq!(rows[0], "src/main.rs", "{rows:?}");
        assert!(rows.contains(&"src/domain/mail.rs".to_string()));
        assert!(!rows.contains(&"README.md".to_string()));
        m.update(Some("main.r"));
        assert_eq!(m.selected().as_deref(), Some("src/main.rs"));
        m.move_by(1);
        assert_eq!(m.selected().as_deref(), Some("tests/main_test.rs"));
        m.update(Some("zzz"));
        assert!(!m.is_open(), "nothing matches");
        m.update(Some("main"));
        m.dismiss();
        m.update(Some("main"));
        assert!(!m.is_open(), "Esc closes it until the word changes");
        m.update(None);
        assert!(!m.is_open());
    }

    #[test]
    fn chosen_mentions_are_whole_units_and_quoted_when_spaced() {
        let mut m = Mentions::default();
        assert_eq!(mention_text("a b.txt"), "@\"a b.txt\"");
        assert_eq!(mention_text("say \"hi\".txt"), "@\"say \\\"hi\\\".txt\"");
        m.chose(mention_text("src/main.rs"));
        assert_eq!(
            m.chosen_before("look at @src/main.rs"),
            Some("@src/main.rs")
        );
        assert_eq!(m.chosen_before("look at x@src/main.rs"), None);
        assert_eq!(m.chosen_before("look at @src/main.rs "), None);
        m.sent();
        assert_eq!(m.chosen_before("@src/main.rs"), None);
    }
}
