//! `edit`: exact-text replacements in one file, several disjoint edits per call (pi §4.4).

mod diff;
mod fuzzy;
#[cfg(test)]
mod tests;

use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::message::UserContent;
use march_core::tool::{
    CallPreview, FileChange, Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use diff::{EditDiff, edit_diff};
pub use fuzzy::{Applied, Edit, apply_edits, normalize_for_fuzzy};

use crate::args::file_target;
use crate::context::ToolContext;
use crate::mutation_queue::MutationQueue;
use crate::stat::{FileError, regular_file};
use crate::task::{aborted, run_blocking};
use march_core::atomic_file::{FileMode, replace_file};

/// How much of a file is sniffed for NUL bytes to tell binary from text.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

const DESCRIPTION: &str = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";

const PROMPT_SNIPPET: &str = "Make precise file edits with exact text replacement, including multiple disjoint edits in one call";

const PROMPT_GUIDELINES: &[&str] = &[
    "Use edit for precise changes (edits[].oldText must match exactly)",
    "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls",
    "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
    "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions.",
];

/// Replaces unique text regions of one file; serialised per file with other mutations.
pub struct EditTool {
    ctx: ToolContext,
    schema: OnceLock<Value>,
}

impl EditTool {
    /// An edit tool working in `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        EditTool {
            ctx,
            schema: OnceLock::new(),
        }
    }
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "Path to the file to edit (relative or absolute)"
            },
            "edits": {
                "type": "array",
                "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."
                        },
                        "newText": {
                            "type": "string",
                            "description": "Replacement text for this targeted edit."
                        }
                    },
                    "required": ["oldText", "newText"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["path", "edits"]
    })
}

/// Models send `edits` as a JSON string, or the older single `oldText`/`newText` pair.
fn prepare(args: Value) -> Value {
    let Value::Object(mut map) = args else {
        return args;
    };
    if let Some(Value::String(raw)) = map.get("edits")
        && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(raw)
    {
        map.insert("edits".into(), parsed);
    }
    let legacy = match (map.get("oldText"), map.get("newText")) {
        (Some(Value::String(old)), Some(Value::String(new))) => {
            json!({"oldText": old, "newText": new})
        }
        _ => return Value::Object(map),
    };
    map.remove("oldText");
    map.remove("newText");
    let mut edits = match map.remove("edits") {
        Some(Value::Array(edits)) => edits,
        _ => Vec::new(),
    };
    edits.push(legacy);
    map.insert("edits".into(), Value::Array(edits));
    Value::Object(map)
}

/// Validated arguments.
fn parse_args(args: &Value) -> Result<(String, Vec<Edit>), ToolError> {
    let invalid = |why: &str| ToolError::new(format!("Edit tool input is invalid. {why}"));
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| invalid("path must be a non-empty string."))?;
    let edits = args
        .get("edits")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
        .ok_or_else(|| invalid("edits must contain at least one replacement."))?;
    let edits = edits
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let field = |name: &str| e.get(name).and_then(Value::as_str).map(str::to_string);
            match (field("oldText"), field("newText")) {
                (Some(old_text), Some(new_text)) => Ok(Edit { old_text, new_text }),
                _ => Err(invalid(&format!(
                    "edits[{i}] must be an object with string fields oldText and newText."
                ))),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((path.to_string(), edits))
}

/// Errno-style name of an I/O error, as pi reports `Error code: <code>`.
fn error_code(err: &io::Error) -> String {
    let name = match err.kind() {
        io::ErrorKind::NotFound => "ENOENT",
        io::ErrorKind::PermissionDenied => "EACCES",
        io::ErrorKind::ReadOnlyFilesystem => "EROFS",
        io::ErrorKind::IsADirectory => "EISDIR",
        io::ErrorKind::NotADirectory => "ENOTDIR",
        io::ErrorKind::ResourceBusy => "EBUSY",
        _ => return err.to_string(),
    };
    format!("{name} ({err})")
}

/// What a successful edit reports.
struct Success {
    replaced: usize,
    diff: EditDiff,
    /// The whole file before and after, for a diff in the client.
    change: Option<FileChange>,
}

/// An edit computed and ready to be written.
struct Prepared {
    /// The file to write (symbolic links followed).
    target: PathBuf,
    /// The file's metadata before the edit.
    meta: Metadata,
    /// The whole new text, BOM and line endings as the file had them.
    output: String,
    success: Success,
}

impl Prepared {
    /// Write the new text to disk atomically. Blocking.
    fn write_locally(self, shown: &Path) -> Result<Success, String> {
        replace_file(
            &self.target,
            self.output.as_bytes(),
            Some(&self.meta),
            FileMode::Kept,
        )
        .map_err(|e| {
            format!(
                "Could not write {}: {e}. The file was left unchanged.",
                shown.display()
            )
        })?;
        Ok(self.success)
    }
}

/// The text of a file after `edits` (its BOM and line endings kept), and the edits as applied
/// to its normalized text.
fn edited_text(raw: &str, edits: &[Edit], display: &str) -> Result<(String, Applied), String> {
    let (bom, content) = fuzzy::strip_bom(raw);
    let ending = fuzzy::detect_line_ending(content);
    let normalized = fuzzy::normalize_to_lf(content);
    let applied = apply_edits(&normalized, edits, display)?;
    let mut output = String::with_capacity(raw.len() + 64);
    output.push_str(bom);
    output.push_str(&fuzzy::restore_line_endings(&applied.new, ending));
    Ok((output, applied))
}

/// The change `edits` would make to `absolute`, read without locking or writing: what a
/// permission request shows. `None` when the edit would fail or the file is no small text.
fn preview_edit(absolute: &Path, display: &str, edits: &[Edit]) -> Option<FileChange> {
    let meta = regular_file(absolute).ok()?;
    if meta.len() > FileChange::MAX_BYTES as u64 {
        return None;
    }
    let bytes = fs::read(absolute).ok()?;
    let raw = String::from_utf8(bytes).ok()?;
    let (output, _) = edited_text(&raw, edits, display).ok()?;
    FileChange::new(absolute, Some(raw.as_bytes()), output.as_bytes())
}

/// Read and match `absolute` under the caller's file lock, and compute the new text. Blocking.
fn edit_file(
    absolute: &Path,
    display: &str,
    edits: &[Edit],
    cancel: &CancellationToken,
) -> Result<Prepared, String> {
    let shown = absolute.display();
    let could_not_edit = |e: &io::Error| {
        format!(
            "Could not edit file: {shown}. Error code: {}.",
            error_code(e)
        )
    };
    // Only regular files: opening a FIFO or device could block or have side effects.
    let meta = regular_file(absolute).map_err(|e| match e {
        FileError::NotFound => format!("File not found: {shown}"),
        FileError::IsDirectory => format!(
            "Cannot edit {shown}: it is a directory, not a file. Give the path of a file inside it."
        ),
        FileError::NotRegular => format!("Cannot edit {shown}: it is not a regular file."),
        FileError::PermissionDenied(e) | FileError::Io(e) => could_not_edit(&e),
    })?;
    // Write through symlinks: replace the target, keep the link. Opening it for writing
    // checks that it may be written before anything is matched.
    let target = fs::canonicalize(absolute).unwrap_or_else(|_| absolute.to_path_buf());
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&target)
        .map_err(|e| could_not_edit(&e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| format!("Could not read {shown}: {e}."))?;
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return Err(format!(
            "Cannot edit {shown}: it looks like a binary file (NUL byte in the first 8 KB). The edit tool only changes text files."
        ));
    }
    let raw = String::from_utf8(bytes).map_err(|_| {
        format!("Cannot edit {shown}: the file is not valid UTF-8, so it cannot be edited safely as text.")
    })?;

    let (output, applied) = edited_text(&raw, edits, display)?;
    if cancel.is_cancelled() {
        return Err(aborted().0);
    }
    let change = FileChange::new(absolute, Some(raw.as_bytes()), output.as_bytes());

    Ok(Prepared {
        target,
        meta,
        output,
        success: Success {
            replaced: edits.len(),
            diff: edit_diff(display, &applied.base, &applied.new),
            change,
        },
    })
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        self.schema.get_or_init(schema)
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: false,
            destructive: true,
            open_world: false,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some(PROMPT_SNIPPET)
    }

    fn prompt_guidelines(&self) -> &[&str] {
        PROMPT_GUIDELINES
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Edit
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("path").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        file_target(&self.ctx, args)
    }

    fn prepare_arguments(&self, args: Value) -> Value {
        prepare(args)
    }

    fn preview(&self, args: &Value) -> Option<CallPreview> {
        let (path, edits) = parse_args(args).ok()?;
        let absolute = self.ctx.resolve(&path).absolute;
        let display = self.ctx.display(&absolute);
        preview_edit(&absolute, &display, &edits).map(CallPreview::Change)
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let (path, edits) = parse_args(&args)?;
        let absolute = self.ctx.resolve(&path).absolute;
        let display = self.ctx.display(&absolute);
        let written = absolute.clone();

        // Hold the lock across read-modify-write so concurrent edits of a file never interleave.
        let guard = tokio::select! {
            guard = MutationQueue::global().lock(&absolute) => guard,
            () = cancel.cancelled() => return Err(aborted()),
        };
        let failed = format!("Edit of {display} failed unexpectedly");
        let shown = display.clone();
        let success = match self.ctx.writer.clone() {
            // The guard moves along: should this future be dropped, the lock still lasts until
            // the blocking read-modify-write has finished.
            None => run_blocking(failed, move || {
                let result = edit_file(&absolute, &shown, &edits, &cancel)
                    .and_then(|prepared| prepared.write_locally(&absolute));
                drop(guard);
                result
            })
            .await?
            .map_err(ToolError::new)?,
            // The lock comes back with the computed edit and is held until the client has
            // written it, so no other mutation of the file slips in between.
            Some(writer) => {
                let path = absolute.clone();
                let (guard, prepared) = run_blocking(failed, move || {
                    (guard, edit_file(&absolute, &shown, &edits, &cancel))
                })
                .await?;
                let prepared = prepared.map_err(ToolError::new)?;
                writer
                    .write_text(&prepared.target, &prepared.output)
                    .await
                    .map_err(|e| {
                        ToolError::new(format!("Could not write {}: {e}.", path.display()))
                    })?;
                drop(guard);
                prepared.success
            }
        };

        let mut text = format!(
            "Successfully replaced {} block(s) in {display}.",
            success.replaced
        );
        if let Some(lsp) = &self.ctx.lsp
            && let Some(note) = lsp.note_after_write(&written, &display).await
        {
            text.push_str("\n\n");
            text.push_str(&note);
        }
        let mut details = Map::new();
        details.insert("diff".into(), Value::String(success.diff.diff));
        details.insert("patch".into(), Value::String(success.diff.patch));
        if let Some(line) = success.diff.first_changed_line {
            details.insert("firstChangedLine".into(), json!(line));
        }
        Ok(ToolOutcome {
            content: vec![UserContent::text(text)],
            details: Value::Object(details),
            terminate: false,
            change: success.change,
            usage: None,
        })
    }
}
