//! The `memory` tool: read, search and append to the markdown memory files (the project's
//! `.march/memory.md` and the global `memory/*.md`), which the `profiles` context layer puts
//! into every run's system prompt.
//!
//! Appends are serialised per file through the mutation queue and written atomically; they
//! always write locally, never through the client's [`FileWriter`](crate::context::FileWriter),
//! because global memory is March's own state outside any project the client knows.

use std::fs::{self, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::memory::{
    DEFAULT_GLOBAL_FILE, MAX_READ_BYTES, Memory, MemoryError, MemoryFile, MemoryScope,
    append_entry, read_file,
};
use march_core::tool::{
    CallPreview, FileChange, Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::{optional_str, required_str};
use crate::context::ToolContext;
use crate::mutation_queue::MutationQueue;
use crate::paths::normalize;
use crate::task::{check_cancelled, run_blocking};
use crate::truncate::{MAX_BYTES, MAX_LINE_CHARS, MAX_LINES, TruncatedBy, format_size};
use march_core::atomic_file::{FileMode, ReplaceError, replace_file};

pub mod remote;
pub mod server;

/// Permission hints of an append. Marked destructive although it only adds: an append
/// rewrites the file, and what it writes steers every later session, so it asks like write.
const APPEND: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: true,
    open_world: false,
};

/// Reads, searches and appends to memory.
pub struct MemoryTool {
    ctx: ToolContext,
    parameters: Value,
}

impl MemoryTool {
    /// A memory tool for the session described by `ctx` (its `memory` says where the files
    /// are; without it every call says memory is not available).
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["read", "append", "search"],
                    "description": "read a memory file, append to a section of one, or search all memory"
                },
                "scope": {
                    "type": "string",
                    "enum": ["project", "global", "remote"],
                    "description": "project (default): this project's memory file; global: files shared by every project on this machine; remote: the memory server's files shared by every machine (when the user set one up). search looks in all unless a scope is given"
                },
                "file": {
                    "type": "string",
                    "description": "Global and remote scopes: the file name (default notes.md; .md is added if missing). read without it shows every file of the scope"
                },
                "section": {
                    "type": "string",
                    "description": "append: the '## ' heading to add under (created at the end of the file if missing)"
                },
                "text": {
                    "type": "string",
                    "description": "append: what to remember (one line becomes a bullet)"
                },
                "query": {
                    "type": "string",
                    "description": "search: words that must all appear in a line (case-insensitive)"
                }
            },
            "required": ["action"]
        });
        MemoryTool { ctx, parameters }
    }

    fn memory(&self) -> Result<&Memory, ToolError> {
        self.ctx.memory.as_ref().ok_or_else(|| {
            ToolError::new(
                "Memory is not available in this session (it is turned off with \
                 `[memory] enabled = false` in config.toml, or this runner did not set it up).",
            )
        })
    }

    /// The file an append or a one-file read is about.
    fn file(&self, args: &Value) -> Result<MemoryFile, ToolError> {
        let memory = self.memory()?;
        let name = optional_str(args, "file")?.unwrap_or(DEFAULT_GLOBAL_FILE);
        match scope(args)? {
            Some(MemoryScope::Global) => memory
                .global(name)
                .map_err(|e| ToolError::new(e.to_string())),
            Some(MemoryScope::Remote) => memory
                .remote(name)
                .ok_or_else(no_remote)?
                .map_err(|e| ToolError::new(e.to_string())),
            _ => Ok(memory.project()),
        }
    }
}

/// The `scope` argument, `None` when absent.
fn scope(args: &Value) -> Result<Option<MemoryScope>, ToolError> {
    match optional_str(args, "scope")? {
        None => Ok(None),
        Some("project") => Ok(Some(MemoryScope::Project)),
        Some("global") => Ok(Some(MemoryScope::Global)),
        Some("remote") => Ok(Some(MemoryScope::Remote)),
        Some(other) => Err(ToolError::new(format!(
            "Argument \"scope\" must be \"project\", \"global\" or \"remote\", got \"{other}\""
        ))),
    }
}

fn no_remote() -> ToolError {
    ToolError::new(
        "There is no memory server: the user sets one with [memory] remote in config.toml",
    )
}

fn is_append(args: &Value) -> bool {
    args.get("action").and_then(Value::as_str) == Some("append")
}

#[async_trait]
impl Tool for MemoryTool {
    fn name(&self) -> &str {
        "memory"
    }

    fn description(&self) -> &str {
        "Long-lived memory in markdown files: the project's memory file and global files \
         shared by every project. Both are shown in the system prompt (cut to a budget). \
         action=read shows a whole file, action=append adds text under a '## ' section \
         (created if missing), action=search finds lines in all memory."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        APPEND
    }

    fn kind(&self, args: &Value) -> ToolKind {
        match args.get("action").and_then(Value::as_str) {
            Some("read") => ToolKind::Read,
            Some("search") => ToolKind::Search,
            _ => ToolKind::Edit,
        }
    }

    /// `memory append Build`, `memory search cargo`, `memory read`.
    fn title(&self, args: &Value) -> String {
        let action = args
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let main = match action {
            "append" => args.get("section"),
            "search" => args.get("query"),
            _ => None,
        };
        call_title(
            &call_title(self.name(), Some(action)),
            main.and_then(Value::as_str),
        )
    }

    fn call_annotations(&self, args: &Value) -> ToolAnnotations {
        match args.get("action").and_then(Value::as_str) {
            Some("read" | "search") => ToolAnnotations::READ_ONLY,
            _ => APPEND,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read, search and append to long-lived project and global memory")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &[
            "Append to memory only what stays true across sessions (commands, conventions, \
             the user's preferences); keep entries short and in a fitting section.",
            "Use global memory for facts about the user that hold in every project.",
        ]
    }

    /// An append: the text and the file (and section) it goes to.
    fn preview(&self, args: &Value) -> Option<CallPreview> {
        if !is_append(args) {
            return None;
        }
        let section = args.get("section").and_then(Value::as_str)?;
        let text = args.get("text").and_then(Value::as_str)?;
        let file = self.file(args).ok()?;
        Some(CallPreview::Text {
            target: format!("{} · ## {section}", self.ctx.display(&file.path)),
            text: text.to_string(),
        })
    }

    /// Only an append names its file: reads and searches touch nothing, so the permission
    /// gate must not treat global memory (outside the project) as a reason to ask for them.
    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        if !is_append(args) {
            return Vec::new();
        }
        // Lexically normalised: the gate decides "inside the project" by path prefix.
        self.file(args)
            .map(|f| vec![normalize(&f.path)])
            .unwrap_or_default()
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        check_cancelled(&cancel)?;
        let memory = self.memory()?.clone();
        match required_str(&args, "action")? {
            "read" => {
                let scope = scope(&args)?;
                let file = optional_str(&args, "file")?;
                let one = match (scope, file) {
                    (Some(MemoryScope::Global | MemoryScope::Remote), None) => None,
                    _ => Some(self.file(&args)?),
                };
                let all = scope.unwrap_or(MemoryScope::Global);
                if all == MemoryScope::Remote && memory.remote_dir.is_none() {
                    return Err(no_remote());
                }
                run_blocking("Reading memory failed".into(), move || {
                    read(&memory, one, all)
                })
                .await?
            }
            "append" => {
                let section = required_str(&args, "section")?.to_string();
                let text = required_str(&args, "text")?.to_string();
                let file = self.file(&args)?;
                if file.scope == MemoryScope::Remote {
                    let remote = self.ctx.remote_memory.clone().ok_or_else(no_remote)?;
                    return append_remote(&remote, file, section, text).await;
                }
                append(file, section, text, &cancel).await
            }
            "search" => {
                let query = required_str(&args, "query")?.to_string();
                if query.trim().is_empty() {
                    return Err(ToolError::new("Argument \"query\" must not be empty"));
                }
                let scope = scope(&args)?;
                run_blocking("Searching memory failed".into(), move || {
                    search(&memory, &query, scope)
                })
                .await?
            }
            other => Err(ToolError::new(format!(
                "Argument \"action\" must be \"read\", \"append\" or \"search\", got \"{other}\""
            ))),
        }
    }
}

/// The header that introduces a file in read output.
fn header(file: &MemoryFile) -> String {
    format!("==> {} memory: {} <==", file.scope.as_str(), file.name)
}

/// One file (`Some`) or every global file, with the read tool's 2000-line / 50 KB limit.
/// Reads `one` file, or every file of `all` (global or remote).
fn read(
    memory: &Memory,
    one: Option<MemoryFile>,
    all: MemoryScope,
) -> Result<ToolOutcome, ToolError> {
    let err = |e: MemoryError| ToolError::new(e.to_string());
    let files = match one {
        Some(f) => vec![f],
        None if all == MemoryScope::Remote => memory.remote_files().map_err(err)?,
        None => memory.global_files().map_err(err)?,
    };
    if files.is_empty() {
        return Ok(ToolOutcome::text(match all {
            MemoryScope::Remote => "Remote memory is empty (as last read from the memory \
                                    server). Use action \"append\" with scope \"remote\" to \
                                    start a file."
                .to_string(),
            _ => format!(
                "Global memory is empty: there are no files in {} yet. Use action \"append\" \
                 with scope \"global\" to start one.",
                memory.global_dir.display()
            ),
        }));
    }
    let mut parts = Vec::new();
    let mut cut_files = Vec::new();
    for file in &files {
        let body = match read_file(&file.path, MAX_READ_BYTES).map_err(err)? {
            Some(t) if !t.text.trim().is_empty() => {
                if t.cut {
                    cut_files.push(format!("{} ({} bytes)", file.name, t.total_bytes));
                }
                t.text
            }
            _ => format!(
                "(empty: nothing has been saved in {} yet)",
                file.path.display()
            ),
        };
        parts.push(format!("{}\n{}", header(file), body.trim_end()));
    }
    let all = parts.join("\n\n");
    let t = crate::truncate::truncate_head(&all, MAX_LINES, MAX_BYTES);
    let mut text = t.content.clone();
    if t.truncated {
        let why = match t.truncated_by {
            Some(TruncatedBy::Bytes) => format!(" ({} limit)", format_size(MAX_BYTES)),
            _ => String::new(),
        };
        let how = match files.as_slice() {
            [f] => format!(
                "The read tool pages through {} with offset={}",
                f.path.display(),
                t.output_lines
            ),
            _ => "Read one file with the file argument".to_string(),
        };
        text.push_str(&format!(
            "\n\n[Showing lines 1-{} of {}{why}. {how}; action \"search\" finds specific \
             lines.]",
            t.output_lines, t.total_lines
        ));
    }
    if !cut_files.is_empty() {
        text.push_str(&format!(
            "\n\n[Only the first {} of these files were read: {}.]",
            format_size(MAX_READ_BYTES),
            cut_files.join(", ")
        ));
    }
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let mut details = json!({ "files": names });
    if t.truncated {
        details["truncation"] = json!(t);
    }
    Ok(ToolOutcome {
        content: vec![march_core::message::UserContent::text(text)],
        details,
        terminate: false,
        change: None,
        usage: None,
    })
}

/// Matching lines as `[scope] file:line: text`, long lines cut as grep cuts them.
fn search(
    memory: &Memory,
    query: &str,
    scope: Option<MemoryScope>,
) -> Result<ToolOutcome, ToolError> {
    let found = memory.search(query, scope);
    let mut lines: Vec<String> = found
        .hits
        .iter()
        .map(|h| {
            let mut text: String = h.text.chars().take(MAX_LINE_CHARS).collect();
            if text.len() < h.text.len() {
                text.push_str("… [truncated]");
            }
            format!(
                "[{}] {}:{}: {text}",
                h.file.scope.as_str(),
                h.file.name,
                h.line
            )
        })
        .collect();
    if lines.is_empty() {
        lines.push(format!("No memory lines match \"{query}\"."));
    }
    for e in &found.errors {
        lines.push(format!("[skipped: {e}]"));
    }
    let t = crate::truncate::truncate_head(&lines.join("\n"), MAX_LINES, MAX_BYTES);
    let mut text = t.content.clone();
    if t.truncated {
        text.push_str(&format!(
            "\n\n[Showing {} of {} lines; narrow the query.]",
            t.output_lines, t.total_lines
        ));
    }
    Ok(ToolOutcome {
        content: vec![march_core::message::UserContent::text(text)],
        details: json!({ "matches": found.hits.len() }),
        terminate: false,
        change: None,
        usage: None,
    })
}

/// Add `text` under `section` of `file`: serialised with every other mutation of the file,
/// then read, changed and replaced atomically.
async fn append(
    file: MemoryFile,
    section: String,
    text: String,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let heading = section.trim().trim_start_matches('#').trim().to_string();
    let (created, change) = append_to(&file.path, section, text, cancel).await?;
    let how = if created {
        "Created section"
    } else {
        "Appended to section"
    };
    Ok(ToolOutcome {
        content: vec![march_core::message::UserContent::text(format!(
            "{how} \"{heading}\" of {} memory {}.",
            file.scope.as_str(),
            file.name
        ))],
        details: json!({ "scope": file.scope.as_str(), "file": file.name, "newSection": created }),
        terminate: false,
        change,
        usage: None,
    })
}

/// Appends to the memory server's file (kept and sent later while it is down).
async fn append_remote(
    remote: &remote::RemoteMemory,
    file: MemoryFile,
    section: String,
    text: String,
) -> Result<ToolOutcome, ToolError> {
    let heading = section.trim().trim_start_matches('#').trim().to_string();
    let done = remote.append(&file.name, &section, &text).await?;
    let said = match done {
        remote::RemoteAppend::Sent { new_section: true } => {
            format!(
                "Created section \"{heading}\" of remote memory {}.",
                file.name
            )
        }
        remote::RemoteAppend::Sent { new_section: false } => {
            format!(
                "Appended to section \"{heading}\" of remote memory {}.",
                file.name
            )
        }
        remote::RemoteAppend::Queued => format!(
            "The memory server ({}) is down: the entry for \"{heading}\" of remote memory {} \
             is kept here and sent when it answers again.",
            remote.url(),
            file.name
        ),
    };
    let mut outcome = ToolOutcome::text(said);
    outcome.details = json!({
        "scope": "remote",
        "file": file.name,
        "queued": done == remote::RemoteAppend::Queued,
    });
    Ok(outcome)
}

/// Adds `text` under `## section` of the memory file at `path` (made with its directory when
/// missing), serialised with every other append in this process (the mutation queue) and in
/// other March processes (a lock beside the file), and written atomically: whether the
/// section had to be made, and the change. The memory tool and the memory server both append
/// so. A cancel before the append starts stops it; once started it completes.
pub(crate) async fn append_to(
    path: &Path,
    section: String,
    text: String,
    cancel: &CancellationToken,
) -> Result<(bool, Option<FileChange>), ToolError> {
    let path = path.to_path_buf();
    // Parents first, so every caller locks the same canonical key for the file.
    if let Some(dir) = path.parent() {
        let dir = dir.to_path_buf();
        run_blocking("Creating the memory directory failed".into(), move || {
            fs::create_dir_all(&dir).map_err(|e| (dir, e))
        })
        .await?
        .map_err(|(dir, e)| {
            ToolError::new(format!(
                "cannot write memory file {}: cannot create directory {}: {}",
                path.display(),
                dir.display(),
                describe(&e)
            ))
        })?;
    }
    let _guard = MutationQueue::global().lock(&path).await;
    check_cancelled(cancel)?;
    let target = path.clone();
    run_blocking(format!("Writing {} failed", target.display()), move || {
        append_locked(&target, &section, &text)
    })
    .await?
}

/// An I/O error in words, without Rust's `(os error N)` noise for the common case.
fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// An exclusive `flock` on `.<name>.lock` next to `path`, held until the file is dropped.
fn lock_beside(path: &Path) -> io::Result<fs::File> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock_path = path.with_file_name(format!(".{name}.lock"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
    Ok(file)
}

/// The read-change-replace of an append, under the file's lock: whether a section was made,
/// and the change to show.
fn append_locked(
    path: &Path,
    section: &str,
    text: &str,
) -> Result<(bool, Option<FileChange>), ToolError> {
    let fail = |what: String| {
        ToolError::new(format!(
            "cannot write memory file {}: {what}",
            path.display()
        ))
    };
    // A symbolic link keeps pointing at its (rewritten) target.
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    // The mutation queue orders appends within this process; runners in other processes
    // (other panes on the same project, global memory) are kept out by an advisory lock on
    // a file beside it. Not the memory file itself: the rename replaces that inode.
    let _other_processes = lock_beside(&target).map_err(|e| {
        fail(format!(
            "cannot lock it against other March processes: {}",
            describe(&e)
        ))
    })?;
    let existing: Option<Metadata> = match fs::metadata(&target) {
        Ok(m) if m.is_file() => Some(m),
        Ok(_) => return Err(fail("it is not a regular file".into())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail(describe(&e))),
    };
    let old = match &existing {
        Some(_) => {
            // Replacing by rename only needs the directory writable; a read-only file must
            // stay unchanged, as a plain write would leave it. Opening changes nothing.
            if let Err(e) = OpenOptions::new().write(true).open(&target) {
                return Err(fail(match e.kind() {
                    io::ErrorKind::PermissionDenied => {
                        "permission denied (the file is read-only; make it writable to \
                         add to it)"
                            .to_string()
                    }
                    _ => e.to_string(),
                }));
            }
            fs::read(&target).map_err(|e| fail(format!("cannot read it: {}", describe(&e))))?
        }
        None => Vec::new(),
    };
    let appended = append_entry(&old, section, text).map_err(|e| ToolError::new(e.to_string()))?;
    replace_file(&target, &appended.bytes, existing.as_ref(), FileMode::Kept).map_err(
        |e: ReplaceError| match (&e.path, e.error.kind()) {
            (Some(at), io::ErrorKind::PermissionDenied) if at != &target => fail(format!(
                "permission denied (no write access to {})",
                at.display()
            )),
            _ => fail(describe(&e.error)),
        },
    )?;
    let before = existing.is_some().then_some(old.as_slice());
    let change = FileChange::new(path, before, &appended.bytes);
    Ok((appended.new_section, change))
}

#[cfg(test)]
mod tests;
