//! pi's format migrations, v1 → v2 → v3, applied in memory to each line as it is read.
//!
//! v1 is linear: no ids, and compactions name their first kept entry by index. v2 assigns
//! ids (parent = previous entry) and turns the index into an id; v3 renames the message
//! role `hookMessage` to `custom`. pi rewrites the file afterwards; March never does.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::ids::new_entry_id;

/// Rename pi v2's `hookMessage` role to v3's `custom`; true when something changed.
pub(crate) fn rename_hook_message(entry: &mut Map<String, Value>) -> bool {
    if entry.get("type").and_then(Value::as_str) != Some("message") {
        return false;
    }
    match entry.get_mut("message").and_then(Value::as_object_mut) {
        Some(message) if message.get("role").and_then(Value::as_str) == Some("hookMessage") => {
            message.insert("role".into(), Value::from("custom"));
            true
        }
        _ => false,
    }
}

/// State of a v1 → v3 migration over one file, fed one parsed JSON value per line.
pub(crate) struct V1Migration {
    /// Id of each parsed JSON value by position (the header is 0), as pi's index counts.
    ids_by_index: Vec<Option<String>>,
    taken: HashSet<String>,
    prev: Option<String>,
}

/// Result of migrating one v1 line.
pub(crate) enum Migrated {
    /// The v3 line, with a note when the compaction index named no entry.
    Entry { line: String, note: Option<String> },
    /// Not an entry (not an object, no `type`, or another header); it still counts for indexes.
    NotAnEntry(&'static str),
}

impl V1Migration {
    /// A migration whose header already took index 0.
    pub(crate) fn new() -> Self {
        V1Migration {
            ids_by_index: vec![None],
            taken: HashSet::new(),
            prev: None,
        }
    }

    /// Migrate one parsed line: assign an id, chain it to the previous entry, resolve
    /// `firstKeptEntryIndex`, rename `hookMessage`.
    pub(crate) fn migrate(&mut self, value: Value) -> Result<Migrated, serde_json::Error> {
        let Value::Object(mut entry) = value else {
            self.ids_by_index.push(None);
            return Ok(Migrated::NotAnEntry("not a JSON object"));
        };
        match entry.get("type").and_then(Value::as_str) {
            None => {
                self.ids_by_index.push(None);
                return Ok(Migrated::NotAnEntry("entry has no string `type`"));
            }
            Some("session") => {
                self.ids_by_index.push(None);
                return Ok(Migrated::NotAnEntry("a second session header; ignored"));
            }
            Some(_) => {}
        }
        let id = new_entry_id(|c| self.taken.contains(c));
        self.taken.insert(id.clone());
        self.ids_by_index.push(Some(id.clone()));
        entry.insert("id".into(), Value::from(id.clone()));
        entry.insert(
            "parentId".into(),
            self.prev.replace(id).map_or(Value::Null, Value::from),
        );

        let mut note = None;
        let is_compaction = entry.get("type").and_then(Value::as_str) == Some("compaction");
        if is_compaction
            && entry
                .get("firstKeptEntryIndex")
                .is_some_and(Value::is_number)
        {
            let index = entry.remove("firstKeptEntryIndex").and_then(|v| v.as_u64());
            let target = index
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| self.ids_by_index.get(i).cloned().flatten());
            match target {
                Some(target) => {
                    entry.insert("firstKeptEntryId".into(), Value::from(target));
                }
                None => {
                    note = Some(format!(
                        "compaction's firstKeptEntryIndex {} names no entry of this file; \
                         only its summary and later entries are in context",
                        index.map_or_else(|| "(not an index)".to_string(), |i| i.to_string())
                    ));
                }
            }
        }
        rename_hook_message(&mut entry);
        let line = serde_json::to_string(&Value::Object(entry))?;
        Ok(Migrated::Entry { line, note })
    }
}
