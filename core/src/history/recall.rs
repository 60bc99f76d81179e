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

/// The prompt's significant words, lowercased, each once: a word of several parts
/// (`src/lib.rs`) as its parts joined by spaces, the others when they are not stop words and
/// have three letters or more.
pub(super) fn significant_phrases(prompt: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    words(prompt)
        .into_iter()
        .filter_map(|(parts, _)| {
            let phrase = parts.join(" ").to_lowercase();
            let significant = parts.len() > 1
                || (phrase.chars().count() >= 3 && !STOP_WORDS.contains(&phrase.as_str()));
            (significant && seen.insert(phrase.clone())).then_some(phrase)
        })
        .take(MAX_WORDS)
        .collect()
}

/// Phrases as an FTS5 query matching any of them; `None` when there are none.
pub(super) fn any_of(phrases: &[String]) -> Option<String> {
    // Only letters, digits and spaces remain, so no quote needs escaping.
    let quoted: Vec<String> = phrases.iter().map(|p| format!("\"{p}\"")).collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

/// Words found in more than this share of turns say little about relevance, and ranking
/// every turn that has one is what makes a recall slow.
const COMMON_SHARE: f64 = 0.2;
/// Words in more than this share of turns are in nearly all of them.
const VERY_COMMON_SHARE: f64 = 0.5;
/// Turns counted at most per phrase when judging how common it is.
const DF_CAP: i64 = 1_000;
/// Below this many turns every word is used.
const SMALL_INDEX: i64 = 200;
/// Most phrases a recall query keeps (the rarest).
const MAX_QUERY_PHRASES: usize = 8;

impl HistoryIndex {
    /// The turns of `query.project` most relevant to `query.prompt`, best first; empty when
    /// the prompt has no significant word.
    pub fn recall(&self, query: &RecallQuery<'_>) -> Result<Vec<RecalledTurn>, HistoryError> {
        let phrases = self
            .rarest(significant_phrases(query.prompt))
            .map_err(|e| self.sql_error(e))?;
        let Some(fts) = any_of(&phrases) else {
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

impl HistoryIndex {
    /// The phrases that occur in the index, rarest first, without the common ones (unless
    /// nothing else is left: then the two rarest), at most [`MAX_QUERY_PHRASES`].
    fn rarest(&self, phrases: Vec<String>) -> rusqlite::Result<Vec<String>> {
        if phrases.is_empty() {
            return Ok(phrases);
        }
        let turns: i64 =
            self.conn
                .query_row("SELECT coalesce(max(id), 0) FROM turns", [], |r| r.get(0))?;
        // Counting stops at DF_CAP: a phrase in that many turns is common whatever the rest,
        // and reading no further keeps each count cheap.
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM
               (SELECT 1 FROM turns_fts WHERE turns_fts MATCH ?1 LIMIT ?2)",
        )?;
        let mut counted = Vec::with_capacity(phrases.len());
        for phrase in phrases {
            // Only letters, digits and spaces: the quoted phrase is plain text to FTS5.
            let df: i64 = stmt.query_row(params![format!("\"{phrase}\""), DF_CAP], |r| r.get(0))?;
            if df > 0 {
                counted.push((df, phrase));
            }
        }
        counted.sort();
        let common = |df: i64| df >= DF_CAP || df as f64 > turns as f64 * COMMON_SHARE;
        let keep = if turns < SMALL_INDEX {
            // Too few turns for frequencies to mean anything.
            MAX_QUERY_PHRASES
        } else {
            match counted.iter().take_while(|(df, _)| !common(*df)).count() {
                // Only common words: the two rarest, unless they are everywhere (then no
                // turn is more relevant than another and nothing is recalled).
                0 => counted
                    .iter()
                    .take(2)
                    .take_while(|(df, _)| {
                        *df < DF_CAP && *df as f64 <= turns as f64 * VERY_COMMON_SHARE
                    })
                    .count(),
                rare => rare.min(MAX_QUERY_PHRASES),
            }
        };
        Ok(counted.into_iter().take(keep).map(|(_, p)| p).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_keeps_significant_words_once_and_matches_any() {
        let phrases =
            significant_phrases("How do I fix the Parser? the parser, src/lib.rs and a \"quote\"");
        assert_eq!(phrases, ["fix", "parser", "src lib rs", "quote"]);
        assert_eq!(
            any_of(&phrases),
            Some("\"fix\" OR \"parser\" OR \"src lib rs\" OR \"quote\"".to_string())
        );
        assert!(significant_phrases("is it ok? -- ** ()").is_empty());
        assert_eq!(any_of(&[]), None);
        let long: String = (0..100).map(|i| format!("word{i} ")).collect();
        assert_eq!(significant_phrases(&long).len(), MAX_WORDS);
    }
}
