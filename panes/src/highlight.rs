//! Syntax highlighting of code blocks with syntect, cached.
//!
//! Syntaxes and syntect themes load once per process (lazily). Highlighting happens when a
//! block is first drawn, never while keys are handled, and the result is kept in a bounded
//! cache keyed by the code, its language and the theme, so later frames cost a lookup. The
//! API takes `&self` and returns shared lines, so the work can move to a worker later.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

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

/// Highlighted code, shared between the cache and the panes drawing it.
pub type HighlightedLines = Arc<Vec<Line<'static>>>;

/// Highlights code blocks for the current theme, caching the results.
#[derive(Debug, Default)]
pub struct Highlighter {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    theme: ThemeKey,
    cache: HashMap<Key, Entry>,
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
    used: u64,
}

impl Highlighter {
    /// A highlighter with an empty cache, using the fallback theme until [`Self::set_theme`].
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
        let mut state = self.lock();
        if state.theme != key {
            state.theme = key;
        }
    }

    /// `code` in language `lang` (a fence tag such as `rust`, `py` or `sh`), one line per
    /// source line, without line endings. Unknown languages and oversized code come back
    /// in the plain code block style.
    pub fn highlight(&self, code: &str, lang: &str) -> HighlightedLines {
        let theme = self.lock().theme.clone();
        let key = Key {
            code_hash: hash(code),
            code_len: code.len(),
            lang: lang.to_string(),
            theme,
        };
        {
            let mut state = self.lock();
            state.tick += 1;
            let tick = state.tick;
            if let Some(entry) = state.cache.get_mut(&key) {
                entry.used = tick;
                return Arc::clone(&entry.lines);
            }
            state.misses += 1;
        }
        // The work happens without the lock so other panes are not held up.
        let lines = Arc::new(highlight_uncached(code, lang, &key.theme));
        let mut state = self.lock();
        if state.cache.len() >= CACHE_ENTRIES {
            evict_oldest(&mut state.cache);
        }
        let used = state.tick;
        state.cache.insert(
            key,
            Entry {
                lines: Arc::clone(&lines),
                used,
            },
        );
        lines
    }

    /// How many blocks were highlighted rather than found in the cache.
    pub fn misses(&self) -> u64 {
        self.lock().misses
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the cache half-written in a harmful way.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn evict_oldest(cache: &mut HashMap<Key, Entry>) {
    let oldest = cache
        .iter()
        .min_by_key(|(_, e)| e.used)
        .map(|(k, _)| k.clone());
    if let Some(k) = oldest {
        cache.remove(&k);
    }
}

fn hash(code: &str) -> u64 {
    let mut h = DefaultHasher::new();
    code.hash(&mut h);
    h.finish()
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

fn syntect_theme(name: &str) -> Option<&'static SyntectTheme> {
    let set = themes();
    set.themes
        .get(name)
        .or_else(|| set.themes.get(FALLBACK_SYNTAX_THEME))
}

/// The grammar for a fence tag, trying common aliases syntect does not know.
fn find_syntax(lang: &str) -> Option<&'static SyntaxReference> {
    let tag = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
        .find(|s| !s.is_empty())?
        .trim_start_matches('.')
        .to_ascii_lowercase();
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
    let set = syntaxes();
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

fn highlight_uncached(code: &str, lang: &str, theme: &ThemeKey) -> Vec<Line<'static>> {
    let base = theme.base;
    if too_big(code) {
        return plain(code, base);
    }
    let (Some(syntax), Some(st)) = (find_syntax(lang), syntect_theme(&theme.syntax)) else {
        return plain(code, base);
    };
    let mut h = HighlightLines::new(syntax, st);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let Ok(regions) = h.highlight_line(line, syntaxes()) else {
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
        assert!(find_syntax("sh").is_some());
        assert!(find_syntax("ts").is_some());
        assert!(find_syntax("rust,ignore").is_some());
        assert!(find_syntax("no-such-language").is_none());
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
        assert!(h.lock().cache.len() <= CACHE_ENTRIES);
    }
}
