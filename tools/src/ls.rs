//! The `ls` tool: one directory's entries, sorted, directories marked with `/`.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolUpdates};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::read::{optional_count, optional_str};
use crate::truncate::{MAX_BYTES, format_size, truncate_head};

/// Entries listed when the call gives no limit.
const DEFAULT_LIMIT: usize = 500;

/// Lists a directory: dotfiles included, case-insensitive order, `/` after directories.
pub struct LsTool {
    ctx: ToolContext,
    parameters: Value,
}

impl LsTool {
    /// An ls tool for the session described by `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Directory to list (default: current directory)"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum number of entries to return (default: 500)"
                }
            }
        });
        LsTool { ctx, parameters }
    }

    fn dir(&self, args: &Value) -> PathBuf {
        let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
        self.ctx.resolve(raw).absolute
    }
}

#[async_trait]
impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        "List a directory's contents, sorted alphabetically (case-insensitive), with '/' after \
         directory names. Dotfiles are included. Output stops at 500 entries or 50KB, whichever \
         comes first."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("List directory contents")
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        vec![self.dir(args)]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        optional_str(&args, "path")?;
        let limit = optional_count(&args, "limit")?.unwrap_or(DEFAULT_LIMIT);
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let dir = self.dir(&args);
        let task = {
            let (dir, cancel) = (dir.clone(), cancel.clone());
            tokio::task::spawn_blocking(move || list(&dir, limit, &cancel))
        };
        let listing = task
            .await
            .map_err(|e| ToolError::new(format!("Listing {} failed: {e}", dir.display())))?
            .map_err(|e| ls_error(e, &dir))?;
        Ok(outcome(listing, limit))
    }
}

/// The entries shown, and whether more were left out.
#[derive(Debug)]
struct Listing {
    entries: Vec<String>,
    limit_reached: bool,
}

/// Why a directory could not be listed.
#[derive(Debug)]
enum LsError {
    NotFound,
    NotADirectory,
    CannotRead(io::Error),
    Cancelled,
}

/// Read, sort and describe the entries of `dir`, up to `limit` of them.
fn list(dir: &Path, limit: usize, cancel: &CancellationToken) -> Result<Listing, LsError> {
    let meta = std::fs::metadata(dir).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => LsError::NotFound,
        _ => LsError::CannotRead(e),
    })?;
    if !meta.is_dir() {
        return Err(LsError::NotADirectory);
    }
    let mut names: Vec<(String, OsString)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(LsError::CannotRead)? {
        if cancel.is_cancelled() {
            return Err(LsError::Cancelled);
        }
        // An entry that vanished or cannot be read is skipped, like one that cannot be stat'ed.
        if let Ok(entry) = entry {
            let name = entry.file_name();
            names.push((name.to_string_lossy().to_lowercase(), name));
        }
    }
    // pi compares lowercased names with localeCompare; code-point order of the lowercased
    // names is the locale-free equivalent, with the raw name as a tie-break for stability.
    names.sort_unstable();
    let mut entries = Vec::new();
    let mut limit_reached = false;
    for (_, name) in names {
        if entries.len() >= limit {
            limit_reached = true;
            break;
        }
        if cancel.is_cancelled() {
            return Err(LsError::Cancelled);
        }
        // Follows symlinks, as pi's stat does: a link to a directory gets `/`, a broken one
        // is skipped.
        let Ok(meta) = std::fs::metadata(dir.join(&name)) else {
            continue;
        };
        let mut shown = name.to_string_lossy().into_owned();
        if meta.is_dir() {
            shown.push('/');
        }
        entries.push(shown);
    }
    Ok(Listing {
        entries,
        limit_reached,
    })
}

/// The model-facing text: entries, then pi's notices in one bracket.
fn outcome(listing: Listing, limit: usize) -> ToolOutcome {
    if listing.entries.is_empty() {
        return ToolOutcome::text("(empty directory)");
    }
    // Only the byte limit applies; the entry limit already bounds the lines.
    let truncation = truncate_head(&listing.entries.join("\n"), usize::MAX, MAX_BYTES);
    let mut notices = Vec::new();
    let mut details = Map::new();
    if listing.limit_reached {
        notices.push(format!(
            "{limit} entries limit reached. Use limit={} for more",
            limit.saturating_mul(2)
        ));
        details.insert("entryLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(MAX_BYTES)));
        details.insert("truncation".into(), json!(truncation));
    }
    let mut text = truncation.content;
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    ToolOutcome {
        content: vec![march_core::message::UserContent::text(text)],
        details: if details.is_empty() {
            Value::Null
        } else {
            Value::Object(details)
        },
        terminate: false,
    }
}

/// The error the model sees, naming the resolved path.
fn ls_error(e: LsError, dir: &Path) -> ToolError {
    let p = dir.display();
    match e {
        LsError::NotFound => ToolError::new(format!("Path not found: {p}")),
        LsError::NotADirectory => ToolError::new(format!("Not a directory: {p}")),
        LsError::CannotRead(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            ToolError::new(format!("Cannot read directory: permission denied, {p}"))
        }
        LsError::CannotRead(e) => ToolError::new(format!("Cannot read directory: {p}: {e}")),
        LsError::Cancelled => aborted(),
    }
}

/// The error for a call cancelled while it ran.
fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::fs::PermissionsExt as _;

    async fn run(cwd: &Path, args: Value) -> Result<ToolOutcome, ToolError> {
        LsTool::new(ToolContext::local(cwd))
            .execute(
                "call",
                args,
                CancellationToken::new(),
                ToolUpdates::discard(),
            )
            .await
    }

    async fn text(cwd: &Path, args: Value) -> String {
        run(cwd, args).await.unwrap().text_content()
    }

    fn touch(dir: &Path, names: &[&str]) {
        for n in names {
            fs::write(dir.join(n), "").unwrap();
        }
    }

    #[tokio::test]
    async fn sorted_case_insensitively_with_dirs_marked_and_dotfiles() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), &["b.txt", "A.txt", "c", "B2", ".hidden", "_x"]);
        fs::create_dir(dir.path().join("Dir")).unwrap();
        fs::create_dir(dir.path().join(".git")).unwrap();
        std::os::unix::fs::symlink("Dir", dir.path().join("to_dir")).unwrap();
        std::os::unix::fs::symlink("missing", dir.path().join("broken")).unwrap();
        let out = run(dir.path(), json!({})).await.unwrap();
        assert_eq!(
            out.text_content(),
            ".git/\n.hidden\n_x\nA.txt\nb.txt\nB2\nc\nDir/\nto_dir/"
        );
        assert_eq!(out.details, Value::Null);
        // The same directory by explicit paths.
        let again = text(
            Path::new("/"),
            json!({"path": dir.path().to_str().unwrap()}),
        )
        .await;
        assert_eq!(again, out.text_content());
        fs::create_dir(dir.path().join("Dir/empty")).unwrap();
        assert_eq!(
            text(dir.path(), json!({"path": "Dir/empty"})).await,
            "(empty directory)"
        );
    }

    #[tokio::test]
    async fn entry_limit_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..5 {
            fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        assert_eq!(
            text(dir.path(), json!({"limit": 5})).await,
            "f0\nf1\nf2\nf3\nf4"
        );
        let out = run(dir.path(), json!({"limit": 4})).await.unwrap();
        assert_eq!(
            out.text_content(),
            "f0\nf1\nf2\nf3\n\n[4 entries limit reached. Use limit=8 for more]"
        );
        assert_eq!(out.details, json!({"entryLimitReached": 4}));

        let big = tempfile::tempdir().unwrap();
        for i in 0..501 {
            fs::write(big.path().join(format!("{i:04}")), "").unwrap();
        }
        let t = text(big.path(), json!({})).await;
        assert!(t.starts_with("0000\n0001\n"));
        assert!(t.ends_with("0499\n\n[500 entries limit reached. Use limit=1000 for more]"));
        fs::remove_file(big.path().join("0500")).unwrap();
        assert!(text(big.path(), json!({})).await.ends_with("\n0499"));
    }

    /// 200 names of 254 bytes and a last one of `last` bytes: 51200 bytes listed when `last`
    /// is 200.
    fn long_names(dir: &Path, last: usize) {
        for i in 0..200 {
            fs::write(dir.join(format!("{i:03}{}", "x".repeat(251))), "").unwrap();
        }
        fs::write(dir.join(format!("200{}", "y".repeat(last - 3))), "").unwrap();
    }

    #[tokio::test]
    async fn byte_limit_boundaries() {
        let exact = tempfile::tempdir().unwrap();
        long_names(exact.path(), 200);
        let t = text(exact.path(), json!({})).await;
        assert_eq!(t.len(), MAX_BYTES);
        assert!(!t.contains('['));

        let over = tempfile::tempdir().unwrap();
        long_names(over.path(), 201);
        let out = run(over.path(), json!({})).await.unwrap();
        let t = out.text_content();
        let (body, notice) = t.split_once("\n\n").unwrap();
        assert_eq!(notice, "[50.0KB limit reached]");
        assert_eq!(body.lines().count(), 200);
        assert!(body.ends_with(&format!("199{}", "x".repeat(251))));
        assert_eq!(out.details["truncation"]["truncatedBy"], "bytes");
        assert!(out.details.get("entryLimitReached").is_none());

        // Both limits at once share one bracket.
        let t = text(over.path(), json!({"limit": 201})).await;
        assert!(t.ends_with("\n\n[50.0KB limit reached]"));
        let t = text(exact.path(), json!({"limit": 200})).await;
        assert!(t.ends_with("\n\n[200 entries limit reached. Use limit=400 for more]"));
        let t = text(over.path(), json!({"limit": 200})).await;
        assert!(t.ends_with("\n\n[200 entries limit reached. Use limit=400 for more]"));
        long_names(over.path(), 201);
        fs::write(over.path().join(format!("201{}", "z".repeat(251))), "").unwrap();
        let t = text(over.path(), json!({"limit": 201})).await;
        assert!(
            t.ends_with(
                "\n\n[201 entries limit reached. Use limit=402 for more. 50.0KB limit reached]"
            ),
            "{}",
            &t[t.len() - 100..]
        );
    }

    #[tokio::test]
    async fn non_utf8_names_are_shown_lossily() {
        let dir = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(b"bad\xff.txt");
        fs::write(dir.path().join(name), "").unwrap();
        fs::create_dir(dir.path().join(std::ffi::OsStr::from_bytes(b"d\xfe"))).unwrap();
        assert_eq!(
            text(dir.path(), json!({})).await,
            "bad\u{FFFD}.txt\nd\u{FFFD}/"
        );
    }

    #[tokio::test]
    async fn errors_name_the_resolved_path() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), &["file"]);
        let err = |args: Value| {
            let dir = dir.path().to_path_buf();
            async move { run(&dir, args).await.unwrap_err().0 }
        };
        assert_eq!(
            err(json!({"path": "nope"})).await,
            format!("Path not found: {}", dir.path().join("nope").display())
        );
        assert_eq!(
            err(json!({"path": "file"})).await,
            format!("Not a directory: {}", dir.path().join("file").display())
        );
        assert!(
            err(json!({"limit": 0}))
                .await
                .contains("\"limit\" must be a whole number")
        );
        assert!(
            err(json!({"path": 3}))
                .await
                .contains("\"path\" must be a string")
        );
        let locked = dir.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        let result = run(dir.path(), json!({"path": "locked"})).await;
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
        // Root bypasses permission bits.
        if !rustix::process::geteuid().is_root() {
            assert_eq!(
                result.unwrap_err().0,
                format!(
                    "Cannot read directory: permission denied, {}",
                    locked.display()
                )
            );
        }
    }

    #[tokio::test]
    async fn declarations_and_cancellation() {
        let dir = tempfile::tempdir().unwrap();
        let t = LsTool::new(ToolContext::local(dir.path()));
        assert_eq!(t.name(), "ls");
        assert_eq!(t.annotations(), ToolAnnotations::READ_ONLY);
        assert_eq!(t.target_paths(&json!({})), vec![dir.path().to_path_buf()]);
        assert_eq!(
            t.target_paths(&json!({"path": "a/.."})),
            vec![dir.path().to_path_buf()]
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        let e = t
            .execute("c", json!({}), cancel, ToolUpdates::discard())
            .await
            .unwrap_err();
        assert_eq!(e.0, "Operation aborted");
    }
}
