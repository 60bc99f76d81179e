//! Syntax highlighting of code blocks with syntect, cached.
//!
//! Syntaxes and syntect themes load at the first code block that names a language, not
//! before (idle memory stays flat). Highlighting happens when a block is first drawn, never
//! while keys are handled, and the result is kept in a cache keyed by the code, its language
//! and the theme, bounded in entries and in bytes, so later frames cost a lookup. The API
//! takes `&self` and returns shared lines, so the work can move to a worker later.
//!
//! Memory: loading syntect's default syntaxes and themes costs about 0.5 MiB; what grows is
//! each grammar's regexes, compiled at first use. The workspace builds syntect with the
//! Oniguruma engine (`default-onig`): with `fancy-regex` the Rust grammar alone took 10 MiB
//! and five more languages 21 MiB more, with Oniguruma about 2 MiB for all six (see
//! `examples/highlight_memory.rs`).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::mem::size_of;
use std::sync::{Arc, OnceLock};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme as SyntectTheme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::theme::{Slot, Theme};

/// Code with more lines than this is shown unhighlighted.
pub const MAX_HIGHLIGHT_LINES: usize = 2000;
/// Code larger than this (bytes) is shown unhighlighted.
pub const MAX_HIGHLIGHT_BYTES: usize = 200 * 1024;
/// Code with a line longer than this (bytes) is shown unhighlighted: regex-based grammars
/// can take very long on minified one-liners.
pub const MAX_HIGHLIGHT_LINE_BYTES: usize = 4096;
/// The syntect theme used when the UI theme names one syntect does not have.
pub const FALLBACK_SYNTAX_THEME: &str = "base16-ocean.dark";
/// Highlighted blocks kept in the cache.
const CACHE_ENTRIES: usize = 256;
/// Estimated bytes of highlighted lines kept in the cache. The newest block is always kept,
/// so one block larger than this (at most [`MAX_HIGHLIGHT_BYTES`] of code) can exceed it.
const CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Highlighted code, shared between the cache and the panes drawing it.
pub type HighlightedLines = Arc<Vec<Line<'static>>>;

/// Highlights code blocks for the current theme, caching the results. One per process is
/// enough: each loads its own syntaxes at its first code block.
#[derive(Debug, Default)]
pub struct Highlighter {
    state: Mutex<State>,
    sets: OnceLock<Sets>,
}

/// syntect's bundled grammars and themes.
#[derive(Debug)]
struct Sets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

#[derive(Debug, Default)]
struct State {
    theme: ThemeKey,
    cache: HashMap<Key, Entry>,
    /// Sum of the cached entries' `bytes`.
    bytes: usize,
    tick: u64,
    misses: u64,
}

/// What of the UI theme a highlighted block depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct ThemeKey {
    name: String,
    syntax: String,
    base: Style,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    code_hash: u64,
    code_len: usize,
    lang: String,
    theme: ThemeKey,
}

#[derive(Debug)]
struct Entry {
    lines: HighlightedLines,
    bytes: usize,
    used: u64,
}

impl Highlighter {
    /// A highlighter with an empty cache and nothing loaded, using the fallback theme until
    /// [`Self::set_theme`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Follows the UI theme: its syntect theme ([`Theme::syntax`]) and its code block style.
    pub fn set_theme(&self, theme: &Theme) {
        let key = ThemeKey {
            name: theme.name.clone(),
            syntax: theme.syntax.clone(),
            base: theme.style(Slot::CodeBlock),
        };
        let mut state = self.state.lock();
        if state.theme != key {
            state.theme = key;
        }
    }

    /// [`Highlighter::highlight`] for a language March has a grammar for, else `None` (and
    /// for oversized code): the caller keeps its own colours.
    pub fn highlight_known(&self, code: &str, lang: &str) -> Option<HighlightedLines> {
        if too_big(code) || fence_tag(lang).is_none() {
            return None;
        }
        find_syntax(&self.sets().syntaxes, lang)?;
        Some(self.highlight(code, lang))
    }

    /// `code` in language `lang` (a fence tag such as `rust`, `py` or `sh`), one line per
    /// source line, without line endings. Unknown languages and oversized code come back
    /// in the plain code block style.
    pub fn highlight(&self, code: &str, lang: &str) -> HighlightedLines {
        let theme = self.state.lock().theme.clone();
        let key = Key {
            code_hash: hash(code),
            code_len: code.len(),
            lang: lang.to_string(),
            theme,
        };
        {
            let mut state = self.state.lock();
            state.tick += 1;
            let tick = state.tick;
            if let Some(entry) = state.cache.get_mut(&key) {
                entry.used = tick;
                return Arc::clone(&entry.lines);
            }
            state.misses += 1;
        }
        // The work happens without the lock so other panes are not held up.
        let lines = Arc::new(self.highlight_uncached(code, lang, &key.theme));
        let bytes = estimated_bytes(&lines);
        let mut state = self.state.lock();
        while !state.cache.is_empty()
            && (state.cache.len() >= CACHE_ENTRIES || state.bytes + bytes > CACHE_BYTES)
        {
            evict_oldest(&mut state);
        }
        let used = state.tick;
        let entry = Entry {
            lines: Arc::clone(&lines),
            bytes,
            used,
        };
        state.bytes += bytes;
        // Another thread may have highlighted the same block meanwhile.
        if let Some(old) = state.cache.insert(key, entry) {
            state.bytes -= old.bytes;
        }
        lines
    }

    /// How many blocks were highlighted rather than found in the cache.
    pub fn misses(&self) -> u64 {
        self.state.lock().misses
    }

    /// syntect's grammars and themes, loaded on first use.
    fn sets(&self) -> &Sets {
        self.sets.get_or_init(|| Sets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            themes: ThemeSet::load_defaults(),
        })
    }

    fn highlight_uncached(&self, code: &str, lang: &str, theme: &ThemeKey) -> Vec<Line<'static>> {
        let base = theme.base;
        // Neither a block without a language nor an oversized one loads the sets.
        if too_big(code) || fence_tag(lang).is_none() {
            return plain(code, base);
        }
        let sets = self.sets();
        let Some(syntax) = find_syntax(&sets.syntaxes, lang) else {
            return plain(code, base);
        };
        let Some(st) = syntect_theme(&sets.themes, &theme.syntax) else {
            return plain(code, base);
        };
        let mut h = HighlightLines::new(syntax, st);
        let mut out = Vec::new();
        for line in LinesWithEndings::from(code) {
            let Ok(regions) = h.highlight_line(line, &sets.syntaxes) else {
                return plain(code, base);
            };
            let spans: Vec<Span<'static>> = regions
                .into_iter()
                .filter_map(|(style, text)| {
                    let text = text.trim_end_matches(['\n', '\r']);
                    (!text.is_empty()).then(|| Span::styled(text.to_string(), convert(style, base)))
                })
                .collect();
            out.push(Line::from(spans));
        }
        out
    }
}

fn evict_oldest(state: &mut State) {
    let oldest = state
        .cache
        .iter()
        .min_by_key(|(_, e)| e.used)
        .map(|(k, _)| k.clone());
    if let Some(entry) = oldest.and_then(|k| state.cache.remove(&k)) {
        state.bytes -= entry.bytes;
    }
}

/// Roughly the heap bytes of highlighted lines: each line and span, and each span's text
/// with the allocator's overhead.
fn estimated_bytes(lines: &[Line<'_>]) -> usize {
    lines
        .iter()
        .map(|l| {
            size_of::<Line<'_>>()
                + l.spans
                    .iter()
                    .map(|s| size_of::<Span<'_>>() + s.content.len() + 16)
                    .sum::<usize>()
        })
        .sum()
}

fn hash(code: &str) -> u64 {
    let mut h = DefaultHasher::new();
    code.hash(&mut h);
    h.finish()
}

fn syntect_theme<'a>(set: &'a ThemeSet, name: &str) -> Option<&'a SyntectTheme> {
    set.themes
        .get(name)
        .or_else(|| set.themes.get(FALLBACK_SYNTAX_THEME))
}

/// The language word of a fence info string (`rust,ignore` → `rust`), lower-cased.
fn fence_tag(lang: &str) -> Option<String> {
    let tag = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
        .find(|s| !s.is_empty())?
        .trim_start_matches('.');
    Some(tag.to_ascii_lowercase())
}

/// The grammar for a fence tag, trying common aliases syntect does not know.
fn find_syntax<'a>(set: &'a SyntaxSet, lang: &str) -> Option<&'a SyntaxReference> {
    let tag = fence_tag(lang)?;
    let alias = match tag.as_str() {
        "sh" | "shell" | "zsh" | "console" | "shellsession" | "bash" => "bash",
        "ts" | "typescript" | "tsx" | "jsx" | "mjs" | "cjs" | "javascript" => "js",
        "jsonc" | "json5" => "json",
        "yml" => "yaml",
        "c++" => "cpp",
        "golang" => "go",
        "py3" | "python3" => "py",
        other => other,
    };
    set.find_syntax_by_token(alias)
        .or_else(|| set.find_syntax_by_token(&tag))
}

fn too_big(code: &str) -> bool {
    code.len() > MAX_HIGHLIGHT_BYTES
        || code.lines().count() > MAX_HIGHLIGHT_LINES
        || code.lines().any(|l| l.len() > MAX_HIGHLIGHT_LINE_BYTES)
}

fn plain(code: &str, base: Style) -> Vec<Line<'static>> {
    code.lines()
        .map(|l| Line::from(Span::styled(l.to_string(), base)))
        .collect()
}

/// A syntect style over the code block style. The colour is the syntect theme's, which the
/// UI theme chose by name, so this is theme data, not a colour picked here.
fn convert(style: syntect::highlighting::Style, base: Style) -> Style {
    let fg = style.foreground;
    let mut out = base.fg(Color::Rgb(fg.r, fg.g, fg.b));
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::dark;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn highlights_known_languages_in_colour() {
        let h = Highlighter::new();
        h.set_theme(&dark());
        let lines = h.highlight("fn main() {\n    let x = 1;\n}\n", "rust");
        assert_eq!(text(&lines), ["fn main() {", "    let x = 1;", "}"]);
        let colours: std::collections::HashSet<_> = lines
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.style.fg))
            .collect();
        assert!(colours.len() > 1, "expected several colours: {colours:?}");
    }

    #[test]
    fn aliases_and_unknown_languages() {
        let h = Highlighter::new();
        let set = &h.sets().syntaxes;
        assert!(find_syntax(set, "sh").is_some());
        assert!(find_syntax(set, "ts").is_some());
        assert!(find_syntax(set, "rust,ignore").is_some());
        assert!(find_syntax(set, "no-such-language").is_none());
        assert!(find_syntax(set, " ").is_none());
        let h = Highlighter::new();
        let lines = h.highlight("just text", "no-such-language");
        assert_eq!(text(&lines), ["just text"]);
    }

    #[test]
    fn repeated_blocks_come_from_the_cache() {
        let h = Highlighter::new();
        let a = h.highlight("let a = 1;", "rust");
        let b = h.highlight("let a = 1;", "rust");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(h.misses(), 1);
        h.highlight("let a = 1;", "py");
        assert_eq!(h.misses(), 2);
    }

    #[test]
    fn a_theme_change_rehighlights() {
        let h = Highlighter::new();
        h.set_theme(&dark());
        h.highlight("x = 1", "py");
        h.set_theme(&crate::test_support::light());
        h.highlight("x = 1", "py");
        assert_eq!(h.misses(), 2);
    }

    #[test]
    fn oversized_code_is_plain() {
        let h = Highlighter::new();
        let code = "let x = 1;\n".repeat(MAX_HIGHLIGHT_LINES + 1);
        let lines = h.highlight(&code, "rust");
        assert_eq!(lines.len(), MAX_HIGHLIGHT_LINES + 1);
        assert!(lines.iter().all(|l| l.spans.len() == 1));
        let long = "x".repeat(MAX_HIGHLIGHT_LINE_BYTES + 1);
        assert_eq!(h.highlight(&long, "rust")[0].spans.len(), 1);
    }

    #[test]
    fn the_cache_is_bounded() {
        let h = Highlighter::new();
        for i in 0..CACHE_ENTRIES + 10 {
            h.highlight(&format!("let v{i} = {i};"), "rust");
        }
        assert!(h.state.lock().cache.len() <= CACHE_ENTRIES);
    }

    #[test]
    fn the_cache_is_bounded_in_bytes() {
        let h = Highlighter::new();
        // Plain blocks of the largest size, so the byte bound is reached before the count.
        let block = "some text\n".repeat(MAX_HIGHLIGHT_LINES);
        let mut newest = Arc::new(Vec::new());
        for i in 0..40 {
            newest = h.highlight(&format!("{i}\n{block}"), "");
        }
        let state = h.state.lock();
        let sum: usize = state.cache.values().map(|e| e.bytes).sum();
        assert_eq!(state.bytes, sum);
        assert!(state.bytes <= CACHE_BYTES, "{} bytes cached", state.bytes);
        assert!(state.cache.len() < 40);
        assert!(state.cache.values().any(|e| Arc::ptr_eq(&e.lines, &newest)));
    }

    #[test]
    fn nothing_loads_before_the_first_code_block_with_a_language() {
        let h = Highlighter::new();
        h.set_theme(&dark());
        assert!(
            h.sets.get().is_none(),
            "Highlighter::new loaded syntect's sets"
        );
        h.highlight("no language", "");
        h.highlight(&"x".repeat(MAX_HIGHLIGHT_LINE_BYTES + 1), "rust");
        assert!(h.sets.get().is_none(), "plain blocks loaded syntect's sets");
        h.highlight("fn main() {}", "rust");
        assert!(h.sets.get().is_some());
    }
}
