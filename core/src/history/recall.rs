//! Recall: the earlier turns of a project most relevant to a new prompt, for the
//! ContextEngine's `recent_chat` layer.
//!
//! Unlike [`HistoryIndex::search`], where every word must occur, a prompt is matched by any
//! of its significant words and ranked by bm25, so a turn sharing its rare words comes first.

use rusqlite::params;

use super::search::{text, words};
use super::{HistoryError, HistoryIndex};

/// Prompt words considered at most, so a pasted log does not become a huge query.
const MAX_WORDS: usize = 32;

/// Words too common to say anything about relevance.
const STOP_WORDS: &[&str] = &[
    "about", "after", "again", "all", "also", "and", "any", "are", "but", "can", "could", "did",
    "does", "done", "for", "from", "get", "had", "has", "have", "her", "his", "how", "into", "its",
    "just", "let", "like", "make", "may", "more", "most", "much", "must", "need", "not", "now",
    "off", "once", "only", "other", "our", "out", "over", "please", "same", "see", "should",
    "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "too", "use", "very", "was", "way", "were", "what", "when", "where", "which",
    "while", "who", "why", "will", "with", "would", "yes", "you", "your",
];

/// What to recall.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallQuery<'a> {
    /// The new prompt.
    pub prompt: &'a str,
    /// Only turns of sessions in this working directory.
    pub project: &'a str,
    /// Turns of this session are left out (they are in its transcript already).
    pub exclude_session: Option<&'a str>,
    /// At most this many turns.
    pub limit: usize,
}

/// An earlier turn recalled for a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct RecalledTurn {
    /// The session it belongs to.
    pub session_id: String,
    /// When its user message was written (milliseconds since the epoch).
    pub time_ms: i64,
    /// What the user wrote.
    pub user_text: String,
    /// What the assistant answered (text only).
    pub assistant_text: String,
    /// Relevance (the negated bm25 score): higher is better.
    pub score: f64,
}

/// The prompt's significant words as an FTS5 query matching any of them; `None` when the
/// prompt has none.
pub(super) fn any_word_query(prompt: &str) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    let phrases: Vec<String> = words(prompt)
        .into_iter()
        .filter_map(|(parts, _)| {
            let phrase = parts.join(" ").to_lowercase();
            let significant = parts.len() > 1
                || (phrase.chars().count() >= 3 && !STOP_WORDS.contains(&phrase.as_str()));
            (significant && seen.insert(phrase.clone())).then_some(phrase)
        })
        .take(MAX_WORDS)
        // Only letters, digits and spaces remain, so no quote needs escaping.
        .map(|phrase| format!("\"{phrase}\""))
        .collect();
    (!phrases.is_empty()).then(|| phrases.join(" OR "))
}

impl HistoryIndex {
    /// The turns of `query.project` most relevant to `query.prompt`, best first; empty when
    /// the prompt has no significant word.
    pub fn recall(&self, query: &RecallQuery<'_>) -> Result<Vec<RecalledTurn>, HistoryError> {
        let Some(fts) = any_word_query(query.prompt) else {
            return Ok(Vec::new());
        };
        let run = || -> rusqlite::Result<Vec<RecalledTurn>> {
            let mut stmt = self.conn.prepare_cached(
                "SELECT t.session_id, t.time_ms, t.user_text, t.assistant_text,
                        bm25(turns_fts, 2.0, 1.0, 0.5, 1.0) AS score
                 FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
                 WHERE turns_fts MATCH ?1 AND t.project = ?2
                   AND (?3 IS NULL OR t.session_id <> ?3)
                 ORDER BY score, t.id DESC LIMIT ?4",
            )?;
            let rows = stmt.query_map(
                params![
                    fts,
                    query.project,
                    query.exclude_session,
                    i64::try_from(query.limit).unwrap_or(i64::MAX),
                ],
                |row| {
                    Ok(RecalledTurn {
                        session_id: row.get(0)?,
                        time_ms: row.get(1)?,
                        user_text: text(row, 2)?.into_owned(),
                        assistant_text: text(row, 3)?.into_owned(),
                        score: -row.get::<_, f64>(4)?,
                    })
                },
            )?;
            rows.collect()
        };
        run().map_err(|e| match e {
            rusqlite::Error::SqliteFailure(_, Some(ref msg)) if msg.contains("fts5") => {
                HistoryError::Query {
                    query: query.prompt.chars().take(80).collect(),
                    reason: msg.clone(),
                }
            }
            e => self.sql_error(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_keeps_significant_words_once_and_matches_any() {
        assert_eq!(
            any_word_query("How do I fix the Parser? the parser, src/lib.rs and a \"quote\""),
            Some("\"fix\" OR \"parser\" OR \"src lib rs\" OR \"quote\"".to_string())
        );
        assert_eq!(any_word_query("is it ok? -- ** ()"), None);
        let long: String = (0..100).map(|i| format!("word{i} ")).collect();
        let q = any_word_query(&long).unwrap();
        assert_eq!(q.matches(" OR ").count(), MAX_WORDS - 1);
    }
}
