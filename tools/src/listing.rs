//! The model-facing text of a list of paths (find, ls): one a line, then pi's notices.

use march_core::event::ToolOutcome;
use march_core::message::UserContent;
use serde_json::{Map, Value, json};

use crate::truncate::{MAX_BYTES, append_notices, format_size, truncate_head};

/// The entry limit a listing stopped at.
pub(crate) struct LimitReached {
    /// The notice, e.g. "500 entries limit reached. Use limit=1000 for more".
    pub notice: String,
    /// The details key the limit is reported under.
    pub key: &'static str,
    /// The limit.
    pub limit: usize,
}

/// `paths` one a line (or `empty` when there are none), cut at the byte limit (the entry
/// limit already bounds the lines), then the notices in one bracket, with their details.
pub(crate) fn listing_outcome(
    paths: &[String],
    empty: &str,
    limit_reached: Option<LimitReached>,
) -> ToolOutcome {
    if paths.is_empty() {
        return ToolOutcome::text(empty);
    }
    let truncation = truncate_head(&paths.join("\n"), usize::MAX, MAX_BYTES);
    let mut notices = Vec::new();
    let mut details = Map::new();
    if let Some(reached) = limit_reached {
        notices.push(reached.notice);
        details.insert(reached.key.into(), json!(reached.limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(MAX_BYTES)));
        details.insert("truncation".into(), json!(truncation));
    }
    let mut text = truncation.content;
    append_notices(&mut text, &notices);
    ToolOutcome {
        content: vec![UserContent::text(text)],
        details: if details.is_empty() {
            Value::Null
        } else {
            Value::Object(details)
        },
        terminate: false,
        change: None,
        usage: None,
    }
}
