//! The `ls` tool: one directory's entries, sorted, directories marked with `/`.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::{optional_count, optional_str, search_root};
use crate::context::ToolContext;
use crate::listing::{LimitReached, listing_outcome};
use crate::stat::{DirError, open_dir};
use crate::task::run_on_path;

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

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Search
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("path").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        vec![search_root(&self.ctx, args)]
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
        let dir = search_root(&self.ctx, &args);
        let listing = run_on_path("Listing", &dir, &cancel, move |dir, cancel| {
            list(dir, limit, cancel)
        })
        .await?
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

/// Read, sort and describe the entries of `dir`, up to `limit` of them.
fn list(dir: &Path, limit: usize, cancel: &CancellationToken) -> Result<Listing, DirError> {
    let mut names: Vec<(String, OsString)> = Vec::new();
    for entry in open_dir(dir)? {
        if cancel.is_cancelled() {
            return Err(DirError::Cancelled);
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
            return Err(DirError::Cancelled);
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
    let limit_reached = listing.limit_reached.then(|| LimitReached {
        notice: format!(
            "{limit} entries limit reached. Use limit={} for more",
            limit.saturating_mul(2)
        ),
        key: "entryLimitReached",
        limit,
    });
    listing_outcome(&listing.entries, "(empty directory)", limit_reached)
}

/// The error the model sees, naming the resolved path.
fn ls_error(e: DirError, dir: &Path) -> ToolError {
    let p = dir.display();
    e.into_tool_error(dir, |e| match e.kind() {
        io::ErrorKind::PermissionDenied => format!("Cannot read directory: permission denied, {p}"),
        _ => format!("Cannot read directory: {p}: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::ffi::OsStrExt as _;

    use crate::test_support::{
        cancelled, chmod, long_names, permissions_enforced, run_tool, run_tool_with,
    };
    use crate::truncate::MAX_BYTES;

    async fn run(cwd: &Path, args: Value) -> Result<ToolOutcome, ToolError> {
        run_tool(&LsTool::new(ToolContext::local(cwd)), args).await
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
        chmod(&locked, 0o000);
        let result = run(dir.path(), json!({"path": "locked"})).await;
        chmod(&locked, 0o755);
        if permissions_enforced() {
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
        let e = run_tool_with(&t, json!({}), cancelled()).await.unwrap_err();
        assert_eq!(e.0, "Operation aborted");
    }
}
