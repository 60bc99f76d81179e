//! Searching: the user's words as a safe FTS5 query, ranked by bm25, with snippets and
//! filters.

use std::borrow::Cow;

use rusqlite::types::ValueRef;
use rusqlite::{Row, params};

use super::{HistoryError, HistoryIndex};

/// Marks the start of a matched word in [`SearchHit::snippet`].
pub const SNIPPET_START: &str = "**";
/// Marks the end of a matched word in [`SearchHit::snippet`].
pub const SNIPPET_END: &str = "**";
/// Words a snippet holds, and how many of them come before the first match.
const SNIPPET_WORDS: usize = 24;
const SNIPPET_BEFORE: usize = 8;
/// Results returned when the query asks for none.
const DEFAULT_LIMIT: usize = 20;

/// What to look for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchQuery {
    /// The words, as the user typed them. Every word must occur in the turn (in any of its
    /// user text, assistant text, tool names or paths); a word of several parts
    /// (`src/lib.rs`) matches them as a phrase; a trailing `*` matches a prefix. Nothing
    /// else is syntax: quotes, parentheses, `AND`/`OR`/`NOT`/`NEAR`, `-`, `:` and `^` are
    /// plain text.
    pub text: String,
    /// Only turns of sessions in this working directory.
    pub project: Option<String>,
    /// Only turns of this session.
    pub session_id: Option<String>,
    /// Only turns at or after this time (milliseconds since the epoch).
    pub since_ms: Option<i64>,
    /// Only turns before this time (milliseconds since the epoch).
    pub until_ms: Option<i64>,
    /// At most this many results; 0 means the default of 20.
    pub limit: usize,
}

impl SearchQuery {
    /// A query for `text` without filters.
    pub fn new(text: impl Into<String>) -> Self {
        SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        }
    }
}

/// One matching turn (camelCase field names in JSON, as clients see it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session's id.
    pub session_id: String,
    /// The session file.
    pub session_file: String,
    /// The id of the entry holding the turn's user message.
    pub entry_id: String,
    /// The turn's number within its session file, from 0.
    pub seq: i64,
    /// The session's working directory.
    pub project: String,
    /// When the user message was written (milliseconds since the epoch).
    pub time_ms: i64,
    /// The model that answered, if any did.
    pub model: Option<String>,
    /// Input tokens over the turn's assistant messages.
    pub input_tokens: u64,
    /// Output tokens over the turn's assistant messages.
    pub output_tokens: u64,
    /// Cost over the turn's assistant messages.
    pub cost: f64,
    /// Tools called in the turn, in order of first use.
    pub tools: Vec<String>,
    /// Paths the turn's tool calls touched, in order of first use.
    pub paths: Vec<String>,
    /// The best-matching passage, matches between [`SNIPPET_START`] and [`SNIPPET_END`].
    pub snippet: String,
    /// Relevance (the negated bm25 score): higher is better.
    pub score: f64,
}

impl HistoryIndex {
    /// The turns matching `query`, best first.
    pub fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>, HistoryError> {
        let words = words(&query.text);
        let fts = fts_query(&words).ok_or(HistoryError::EmptyQuery)?;
        let terms = terms(&words);
        let limit = if query.limit == 0 {
            DEFAULT_LIMIT
        } else {
            query.limit
        };
        // The best turns first (ids and scores only: the sorter then holds no text), then
        // their columns. Without filters the turns table is not touched until then.
        const TOP: &str = "SELECT rowid AS id, bm25(turns_fts, 2.0, 1.0, 0.5, 1.0) AS score
             FROM turns_fts WHERE turns_fts MATCH ?1
             ORDER BY score, rowid DESC LIMIT ?6";
        const TOP_FILTERED: &str = "SELECT t.id AS id, bm25(turns_fts, 2.0, 1.0, 0.5, 1.0) AS score
             FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
             WHERE turns_fts MATCH ?1
               AND (?2 IS NULL OR t.project = ?2)
               AND (?3 IS NULL OR t.session_id = ?3)
               AND (?4 IS NULL OR t.time_ms >= ?4)
               AND (?5 IS NULL OR t.time_ms < ?5)
             ORDER BY score, t.id DESC LIMIT ?6";
        let filtered = query.project.is_some()
            || query.session_id.is_some()
            || query.since_ms.is_some()
            || query.until_ms.is_some();
        let sql = format!(
            "WITH top AS ({})
             SELECT t.session_id, t.file, t.entry_id, t.seq, t.project, t.time_ms, t.model,
                    t.input_tokens, t.output_tokens, t.cost, t.tools, t.paths,
                    t.user_text, t.assistant_text, top.score
             FROM top JOIN turns t ON t.id = top.id
             ORDER BY top.score, top.id DESC",
            if filtered { TOP_FILTERED } else { TOP }
        );
        let run = || -> rusqlite::Result<Vec<SearchHit>> {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(
                params![
                    fts,
                    query.project,
                    query.session_id,
                    query.since_ms,
                    query.until_ms,
                    i64::try_from(limit).unwrap_or(i64::MAX),
                ],
                |row| hit(row, &terms),
            )?;
            rows.collect()
        };
        run().map_err(|e| match e {
            // The query is built from quoted words, so this should not happen; if it does,
            // say which query failed rather than showing SQL.
            rusqlite::Error::SqliteFailure(_, Some(ref msg)) if msg.contains("fts5") => {
                HistoryError::Query {
                    query: query.text.clone(),
                    reason: msg.clone(),
                }
            }
            e => self.sql_error(e),
        })
    }
}

fn hit(row: &Row<'_>, terms: &[Term]) -> rusqlite::Result<SearchHit> {
    let list = |s: Cow<'_, str>| -> Vec<String> {
        s.split('\n')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let tools = text(row, 10)?;
    let paths = text(row, 11)?;
    let snippet = {
        let user = text(row, 12)?;
        let assistant = text(row, 13)?;
        make_snippet(&[&user, &assistant, &tools, &paths], terms)
    };
    Ok(SearchHit {
        session_id: text(row, 0)?.into_owned(),
        session_file: text(row, 1)?.into_owned(),
        entry_id: text(row, 2)?.into_owned(),
        seq: row.get(3)?,
        project: text(row, 4)?.into_owned(),
        time_ms: row.get(5)?,
        model: row.get(6)?,
        input_tokens: u64::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
        output_tokens: u64::try_from(row.get::<_, i64>(8)?).unwrap_or(0),
        cost: row.get(9)?,
        tools: list(tools),
        paths: list(paths),
        snippet,
        score: -row.get::<_, f64>(14)?,
    })
}

/// A text column, read lossily: a snippet or a damaged row never fails the search.
pub(super) fn text<'r>(row: &'r Row<'_>, index: usize) -> rusqlite::Result<Cow<'r, str>> {
    Ok(match row.get_ref(index)? {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => String::from_utf8_lossy(bytes),
        ValueRef::Null => Cow::Borrowed(""),
        ValueRef::Integer(i) => Cow::Owned(i.to_string()),
        ValueRef::Real(f) => Cow::Owned(f.to_string()),
    })
}

/// One word of a query: its letter-and-digit parts, and whether it ends in `*`.
type Word<'a> = (Vec<&'a str>, bool);

/// The words of a query. Brackets, quotes, whitespace and `,;!?+^|&=` separate words; other
/// punctuation (`/`, `.`, `-`, `:`…) joins the parts of one word, such as a path. Words
/// without a letter or digit are dropped.
pub(super) fn words(text: &str) -> Vec<Word<'_>> {
    let separator = |c: char| c.is_whitespace() || "\"'`()[]{}<>,;!?+^|&=".contains(c);
    text.split(separator)
        .filter_map(|word| {
            let parts: Vec<&str> = word
                .split(|c: char| !c.is_alphanumeric())
                .filter(|p| !p.is_empty())
                .collect();
            (!parts.is_empty()).then(|| (parts, word.ends_with('*')))
        })
        .collect()
}

/// The words as an FTS5 query in which nothing is syntax: each word becomes a quoted phrase
/// of its parts (`src/lib.rs` → `"src lib rs"`), followed by ` *` (a prefix) when it ended
/// in `*`. `None` when there is no word.
pub(super) fn fts_query(words: &[Word<'_>]) -> Option<String> {
    let phrases: Vec<String> = words
        .iter()
        .map(|(parts, prefix)| {
            // Only letters and digits remain, so no quote needs escaping.
            let mut phrase = format!("\"{}\"", parts.join(" "));
            if *prefix {
                phrase.push_str(" *");
            }
            phrase
        })
        .collect();
    (!phrases.is_empty()).then(|| phrases.join(" "))
}

/// A part of a query word to mark in snippets, lowercased.
struct Term {
    text: String,
    prefix: bool,
}

fn terms(words: &[Word<'_>]) -> Vec<Term> {
    let mut terms = Vec::new();
    for (parts, prefix) in words {
        for (i, part) in parts.iter().enumerate() {
            terms.push(Term {
                text: part.to_lowercase(),
                prefix: *prefix && i + 1 == parts.len(),
            });
        }
    }
    terms
}

fn term_matches(word: &str, terms: &[Term]) -> bool {
    let lower: Cow<'_, str> = if word.is_ascii() {
        if word.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(word.to_ascii_lowercase())
        } else {
            Cow::Borrowed(word)
        }
    } else {
        Cow::Owned(word.to_lowercase())
    };
    terms.iter().any(|t| {
        if t.prefix {
            lower.starts_with(&t.text)
        } else {
            *lower == t.text
        }
    })
}

/// Byte ranges of the letter-and-digit runs of `text`.
fn word_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = None;
    text.char_indices()
        .map(Some)
        .chain(std::iter::once(None))
        .filter_map(move |item| match item {
            Some((i, c)) if c.is_alphanumeric() => {
                start.get_or_insert(i);
                None
            }
            Some((i, _)) => start.take().map(|s| (s, i)),
            None => start.take().map(|s| (s, text.len())),
        })
}

/// A passage around the first match in the first column that has one, matches marked; the
/// start of the first non-empty column when no word matches as written (FTS5 also folds
/// diacritics). Linear in the text, unlike FTS5's `snippet()`, which is quadratic in the
/// number of matches in a document.
fn make_snippet(columns: &[&str], terms: &[Term]) -> String {
    for column in columns {
        let mut before = std::collections::VecDeque::with_capacity(SNIPPET_BEFORE + 1);
        let mut spans = word_spans(column);
        let mut first = None;
        for span in spans.by_ref() {
            if term_matches(&column[span.0..span.1], terms) {
                first = Some(span);
                break;
            }
            before.push_back(span);
            if before.len() > SNIPPET_BEFORE {
                before.pop_front();
            }
        }
        let Some(first) = first else {
            continue;
        };
        let mut window: Vec<(usize, usize)> = before.into_iter().collect();
        window.push(first);
        let room = SNIPPET_WORDS.saturating_sub(window.len());
        window.extend(spans.take(room));
        return render(column, &window, terms);
    }
    let column = columns.iter().find(|c| !c.trim().is_empty()).unwrap_or(&"");
    let window: Vec<(usize, usize)> = word_spans(column).take(SNIPPET_WORDS).collect();
    render(column, &window, &[])
}

fn render(text: &str, window: &[(usize, usize)], terms: &[Term]) -> String {
    let (Some(&(start, _)), Some(&(_, end))) = (window.first(), window.last()) else {
        return String::new();
    };
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    for &(s, e) in window {
        out.push_str(&text[at..s]);
        let word = &text[s..e];
        if term_matches(word, terms) {
            out.push_str(SNIPPET_START);
            out.push_str(word);
            out.push_str(SNIPPET_END);
        } else {
            out.push_str(word);
        }
        at = e;
    }
    if end < text.len() {
        out.push('…');
    }
    // One line: newlines and tabs in the passage become spaces.
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
