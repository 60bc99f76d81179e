//! Which files the summarised history read and changed, carried from one compaction to the
//! next in the entry's `details` (pi's `{readFiles, modifiedFiles}`) and listed after the
//! summary so the model still knows them.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::message::AssistantContent;
use crate::session::{Compaction, SessionMessage};

/// Files touched by `read`, `write` and `edit` tool calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    /// Paths read.
    pub read: BTreeSet<String>,
    /// Paths written whole.
    pub written: BTreeSet<String>,
    /// Paths edited (and, from earlier compactions, every modified path).
    pub edited: BTreeSet<String>,
}

impl FileOperations {
    /// Start from a previous compaction's `details`: its read files as read, its modified
    /// files as edited. Summaries an extension produced (`fromHook`) carry none, as in pi.
    pub fn from_previous(compaction: &Compaction) -> Self {
        let mut ops = FileOperations::default();
        if compaction.from_hook == Some(true) {
            return ops;
        }
        if let Some(details) = &compaction.details {
            ops.add_details(details);
        }
        ops
    }

    /// Take in an earlier summary's `details`: its read files as read, its modified files
    /// as edited.
    pub fn add_details(&mut self, details: &Value) {
        let strings = |key: &str| -> Vec<String> {
            details
                .get(key)
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// Record the file tool calls of an assistant message (others are ignored): the
    /// call's name decides the set, its string `path` argument the entry.
    pub fn add_message(&mut self, message: &SessionMessage) {
        let SessionMessage::Assistant(a) = message else {
            return;
        };
        for block in &a.content {
            let AssistantContent::ToolCall(call) = block else {
                continue;
            };
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_string());
        }
    }

    /// Files only read (never modified), sorted.
    pub fn read_files(&self) -> Vec<String> {
        self.read
            .iter()
            .filter(|p| !self.written.contains(*p) && !self.edited.contains(*p))
            .cloned()
            .collect()
    }

    /// Files written or edited, sorted.
    pub fn modified_files(&self) -> Vec<String> {
        self.written.union(&self.edited).cloned().collect()
    }

    /// The lists as the compaction entry's `details`: `{"readFiles", "modifiedFiles"}`.
    pub fn details(&self) -> Value {
        json!({"readFiles": self.read_files(), "modifiedFiles": self.modified_files()})
    }

    /// The lists as appended to the summary (empty when there are none).
    pub fn format(&self) -> String {
        format_file_operations(&self.read_files(), &self.modified_files())
    }
}

/// `<read-files>` and `<modified-files>` blocks, each only when it has entries, preceded by
/// a blank line so they can be appended to a summary (pi's `formatFileOperations`).
pub fn format_file_operations(read_files: &[String], modified_files: &[String]) -> String {
    let mut sections = Vec::new();
    if !read_files.is_empty() {
        sections.push(format!(
            "<read-files>\n{}\n</read-files>",
            read_files.join("\n")
        ));
    }
    if !modified_files.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified_files.join("\n")
        ));
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\n{}", sections.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, ToolCall};
    use crate::model::Model;

    fn calls(calls: &[(&str, Value)]) -> SessionMessage {
        let mut a = AssistantMessage::empty(&Model::openai_compatible("p", "m", "http://x"));
        for (i, (name, args)) in calls.iter().enumerate() {
            a.content.push(AssistantContent::ToolCall(ToolCall {
                id: format!("c{i}"),
                name: name.to_string(),
                arguments: args.clone(),
                thought_signature: None,
            }));
        }
        SessionMessage::Assistant(a)
    }

    fn previous(details: Value, from_hook: Option<bool>) -> Compaction {
        Compaction {
            summary: "s".into(),
            first_kept_entry_id: "x".into(),
            tokens_before: 0,
            details: Some(details),
            from_hook,
        }
    }

    #[test]
    fn file_ops_accumulate_with_the_previous_compaction() {
        let prev = previous(
            json!({"readFiles": ["old/read.rs", "b.rs"], "modifiedFiles": ["old/mod.rs"]}),
            None,
        );
        let mut ops = FileOperations::from_previous(&prev);
        ops.add_message(&calls(&[
            ("read", json!({"path": "b.rs"})),
            ("read", json!({"path": "a.rs"})),
            (
                "edit",
                json!({"path": "b.rs", "oldText": "x", "newText": "y"}),
            ),
            ("write", json!({"path": "new.rs", "content": ""})),
            ("bash", json!({"path": "ignored.rs"})),
            ("read", json!({"path": 7})),
            ("read", json!({})),
        ]));
        assert_eq!(ops.read_files(), ["a.rs", "old/read.rs"]);
        assert_eq!(ops.modified_files(), ["b.rs", "new.rs", "old/mod.rs"]);
        assert_eq!(
            ops.details(),
            json!({"readFiles": ["a.rs", "old/read.rs"],
                   "modifiedFiles": ["b.rs", "new.rs", "old/mod.rs"]})
        );
        assert_eq!(
            ops.format(),
            "\n\n<read-files>\na.rs\nold/read.rs\n</read-files>\n\n\
             <modified-files>\nb.rs\nnew.rs\nold/mod.rs\n</modified-files>"
        );
    }

    #[test]
    fn hook_summaries_and_odd_details_carry_nothing() {
        let hook = previous(json!({"readFiles": ["a"]}), Some(true));
        assert_eq!(
            FileOperations::from_previous(&hook),
            FileOperations::default()
        );
        let odd = previous(json!({"readFiles": "a", "modifiedFiles": [1, "m"]}), None);
        let ops = FileOperations::from_previous(&odd);
        assert!(ops.read.is_empty());
        assert_eq!(ops.modified_files(), ["m"]);
        assert_eq!(FileOperations::default().format(), "");
        assert_eq!(
            format_file_operations(&[], &["x".to_string()]),
            "\n\n<modified-files>\nx\n</modified-files>"
        );
    }
}
