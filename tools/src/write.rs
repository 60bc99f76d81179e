//! The `write` tool: create or replace a whole file, atomically.

use std::fs::{self, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use march_core::event::ToolOutcome;
use march_core::tool::{
    CallPreview, FileChange, Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::{file_target, required_str};
use crate::context::ToolContext;
use crate::mutation_queue::MutationQueue;
use crate::stat::{FileError, regular_file};
use crate::task::{check_cancelled, run_blocking};
use march_core::atomic_file::{FileMode, ReplaceError, replace_file};

/// How many symbolic links are followed before giving up (Linux's limit).
const MAX_LINK_DEPTH: usize = 40;

/// Writes whole files: parents created, existing files replaced atomically.
pub struct WriteTool {
    ctx: ToolContext,
    parameters: Value,
}

impl WriteTool {
    /// A write tool for the session described by `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to write (relative or absolute)"
                },
                "content": {
                    "type": "string",
                    "description": "Content to write to the file"
                }
            },
            "required": ["path", "content"]
        });
        WriteTool { ctx, parameters }
    }
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        "Write content to a file. Creates the file if it does not exist and overwrites it if it \
         does; missing parent directories are created."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: false,
            destructive: true,
            open_world: false,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Create or overwrite files")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &["Use write only for new files or complete rewrites."]
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

    /// The file as it would be: new, or its text before and after.
    fn preview(&self, args: &Value) -> Option<CallPreview> {
        let path = args.get("path").and_then(Value::as_str)?;
        let content = args.get("content").and_then(Value::as_str)?;
        let absolute = self.ctx.resolve(path).absolute;
        let before = match regular_file(&absolute) {
            Ok(meta) if meta.len() <= FileChange::MAX_BYTES as u64 => {
                Some(fs::read(&absolute).ok()?)
            }
            Err(FileError::NotFound) => None,
            // Too big, not a regular file, unreadable: the write says what it finds.
            _ => return None,
        };
        FileChange::new(&absolute, before.as_deref(), content.as_bytes()).map(CallPreview::Change)
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let raw = required_str(&args, "path")?;
        let content = required_str(&args, "content")?.to_string();
        check_cancelled(&cancel)?;
        let abs = self.ctx.resolve(raw).absolute;
        let _guard = MutationQueue::global().lock(&abs).await;
        check_cancelled(&cancel)?;
        // pi reports the JS string length (UTF-16 units); we report UTF-8 bytes, which is what
        // actually lands on disk.
        let bytes = content.len();
        // Once started the write runs to completion: it is atomic, so there is nothing half
        // done to abandon, and reporting "aborted" for a file that was written would mislead.
        let failed = format!("Writing {} failed", abs.display());
        let target = abs.clone();
        // The content goes to the blocking write and comes back for the change it reports.
        let (before, content) = match self.ctx.writer.clone() {
            None => run_blocking(failed, move || {
                write_atomically(&target, content.as_bytes()).map(|before| (before, content))
            })
            .await?
            .map_err(|e| write_error(e, &abs))?,
            Some(writer) => {
                // Every local check first, and the parents created, so the client is only
                // handed a write that would have succeeded here.
                let prepared = run_blocking(failed, move || prepare_write(&target))
                    .await?
                    .map_err(|e| write_error(e, &abs))?;
                writer
                    .write_text(&prepared.target, &content)
                    .await
                    .map_err(|e| write_error(WriteError::Client(e), &abs))?;
                prepared.created.keep();
                (prepared.before, content)
            }
        };
        let shown = self.ctx.display(&abs);
        let mut text = format!("Successfully wrote {bytes} bytes to {shown}");
        if let Some(lsp) = &self.ctx.lsp
            && let Some(note) = lsp.note_after_write(&abs, &shown).await
        {
            text.push_str("\n\n");
            text.push_str(&note);
        }
        Ok(ToolOutcome {
            change: before.change(&abs, content.as_bytes()),
            ..ToolOutcome::text(text)
        })
    }
}

/// Why a write was refused or failed. Nothing on disk changed in any case.
#[derive(Debug)]
enum WriteError {
    /// The path is a directory.
    IsDirectory,
    /// The path is a FIFO, socket or device.
    NotRegular,
    /// An ancestor that should be a directory is something else.
    NotADirectory(PathBuf),
    /// Permission denied at this path.
    PermissionDenied(PathBuf),
    /// A symbolic link chain that does not end.
    LinkLoop,
    /// Anything else.
    Io(io::Error),
    /// The client the write was handed to failed (its message).
    Client(String),
}

impl From<ReplaceError> for WriteError {
    fn from(e: ReplaceError) -> Self {
        match &e.path {
            Some(path) => at(path)(e.error),
            None => WriteError::Io(e.error),
        }
    }
}

/// Name `path` in an I/O error, turning permission problems into [`WriteError::PermissionDenied`].
fn at(path: &Path) -> impl Fn(io::Error) -> WriteError + '_ {
    move |e| match e.kind() {
        io::ErrorKind::PermissionDenied => WriteError::PermissionDenied(path.to_path_buf()),
        _ => WriteError::Io(e),
    }
}

/// Follow symbolic links so that a link keeps pointing at its (now rewritten) target, as a
/// plain `open` + write would.
fn follow_links(path: &Path) -> Result<PathBuf, WriteError> {
    let mut target = path.to_path_buf();
    for _ in 0..MAX_LINK_DEPTH {
        match fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&target).map_err(at(&target))?;
                target = match target.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(target),
        }
    }
    Err(WriteError::LinkLoop)
}

/// The directories to create (outermost first) so that `dir` exists, after checking that the
/// nearest existing ancestor is a directory.
fn missing_dirs(dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(p) = cur {
        match fs::metadata(p) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => return Err(WriteError::NotADirectory(p.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(p.to_path_buf()),
            // ENOTDIR: some ancestor is a file; keep climbing to name it.
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => missing.push(p.to_path_buf()),
            Err(e) => return Err(at(p)(e)),
        }
        cur = p.parent();
    }
    missing.reverse();
    Ok(missing)
}

/// Directories this write created, removed again if the write fails.
struct CreatedDirs(Vec<PathBuf>);

impl CreatedDirs {
    fn create(dirs: &[PathBuf]) -> Result<Self, WriteError> {
        let mut created = CreatedDirs(Vec::new());
        for d in dirs {
            match fs::create_dir(d) {
                Ok(()) => created.0.push(d.clone()),
                // Someone else made it meanwhile: fine, but not ours to remove.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => {}
                // Creating needs write access to the parent, so name that.
                Err(e) => return Err(at(d.parent().unwrap_or(d))(e)),
            }
        }
        Ok(created)
    }

    /// Keep the directories.
    fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        for d in self.0.iter().rev() {
            let _ = fs::remove_dir(d);
        }
    }
}

/// A write checked and ready to happen.
struct PreparedWrite {
    /// The file to write: the path with symbolic links followed.
    target: PathBuf,
    /// The file being replaced, if there is one.
    existing: Option<Metadata>,
    /// The parent directories made for it, removed again unless kept.
    created: CreatedDirs,
    /// What it held.
    before: Before,
}

/// Replace `path`'s content atomically (see [`replace_file`]), following symbolic links and
/// creating missing parent directories, which are removed again should the write fail.
fn write_atomically(path: &Path, data: &[u8]) -> Result<Before, WriteError> {
    let prepared = prepare_write(path)?;
    replace_file(
        &prepared.target,
        data,
        prepared.existing.as_ref(),
        FileMode::Kept,
    )?;
    prepared.created.keep();
    Ok(prepared.before)
}

/// Everything before the bytes land: follow symbolic links, refuse what cannot be written
/// (directories, special files, read-only files, a file where a directory should be), and
/// create the missing parent directories.
fn prepare_write(path: &Path) -> Result<PreparedWrite, WriteError> {
    let target = follow_links(path)?;
    let (Some(dir), Some(_)) = (target.parent(), target.file_name()) else {
        return Err(WriteError::IsDirectory);
    };
    let existing = match regular_file(&target) {
        Ok(m) => Some(m),
        Err(FileError::NotFound) => None,
        // ENOTDIR: an ancestor is a file, which `missing_dirs` names.
        Err(FileError::Io(e)) if e.kind() == io::ErrorKind::NotADirectory => None,
        Err(FileError::IsDirectory) => return Err(WriteError::IsDirectory),
        Err(FileError::NotRegular) => return Err(WriteError::NotRegular),
        Err(FileError::PermissionDenied(e) | FileError::Io(e)) => return Err(at(&target)(e)),
    };
    if existing.is_some() {
        // Replacing by rename only needs the directory writable; a read-only file must stay
        // read-only as with a plain write. Opening without truncating changes nothing.
        OpenOptions::new()
            .write(true)
            .open(&target)
            .map_err(at(&target))?;
    }
    let created = CreatedDirs::create(&missing_dirs(dir)?)?;
    let before = match &existing {
        None => Before::Absent,
        Some(m) if m.len() <= FileChange::MAX_BYTES as u64 => {
            fs::read(&target).map_or(Before::Unknown, Before::Bytes)
        }
        Some(_) => Before::Unknown,
    };
    Ok(PreparedWrite {
        target,
        existing,
        created,
        before,
    })
}

/// What a file held before a write, for the change the write reports.
enum Before {
    /// There was no file.
    Absent,
    /// Its bytes.
    Bytes(Vec<u8>),
    /// Too big or unreadable: no diff.
    Unknown,
}

impl Before {
    /// The change from this to `new` at `path`, if one can be shown.
    fn change(self, path: &Path, new: &[u8]) -> Option<FileChange> {
        match self {
            Before::Absent => FileChange::new(path, None, new),
            Before::Bytes(old) => FileChange::new(path, Some(&old), new),
            Before::Unknown => None,
        }
    }
}

/// The error the model sees, naming the resolved path.
fn write_error(e: WriteError, abs: &Path) -> ToolError {
    let p = abs.display();
    ToolError::new(match e {
        WriteError::IsDirectory => format!("Cannot write {p}: it is a directory"),
        WriteError::NotRegular => {
            format!("Cannot write {p}: it is not a regular file (a FIFO, socket or device)")
        }
        WriteError::NotADirectory(file) => format!(
            "Cannot write {p}: {} is a file, not a directory",
            file.display()
        ),
        WriteError::PermissionDenied(at) if at == abs => {
            format!("Permission denied: cannot write {p}")
        }
        WriteError::PermissionDenied(at) => format!(
            "Permission denied: cannot write {p} (no write access to {})",
            at.display()
        ),
        WriteError::LinkLoop => {
            format!("Cannot write {p}: too many levels of symbolic links")
        }
        WriteError::Io(e) => format!("Cannot write {p}: {e}"),
        WriteError::Client(e) => format!("Cannot write {p}: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;
    use std::sync::Arc;

    use crate::context::recording::RecordingWriter;
    use crate::test_support::{cancelled, chmod, permissions_enforced, run_tool, run_tool_with};

    fn tool(dir: &Path) -> WriteTool {
        WriteTool::new(ToolContext::local(dir))
    }

    #[test]
    fn the_preview_says_new_file_or_shows_the_text_before() {
        let dir = tempfile::tempdir().unwrap();
        let t = tool(dir.path());
        let args = json!({"path": "sub/new.txt", "content": "hi\n"});
        let Some(CallPreview::Change(change)) = t.preview(&args) else {
            panic!("no preview");
        };
        assert_eq!(change.old_text, None, "a new file");
        assert_eq!(change.path, dir.path().join("sub/new.txt"));
        assert!(!dir.path().join("sub").exists(), "nothing written");
        std::fs::write(dir.path().join("old.txt"), "before\n").unwrap();
        let args = json!({"path": "old.txt", "content": "after\n"});
        let Some(CallPreview::Change(change)) = t.preview(&args) else {
            panic!("no preview");
        };
        assert_eq!(change.old_text.as_deref(), Some("before\n"));
        assert_eq!(change.new_text, "after\n");
        std::fs::create_dir(dir.path().join("d")).unwrap();
        assert_eq!(t.preview(&json!({"path": "d", "content": "x"})), None);
    }

    async fn run(dir: &Path, args: Value) -> Result<ToolOutcome, ToolError> {
        run_tool(&tool(dir), args).await
    }

    /// Every entry under `dir`, relative, sorted: to prove nothing else changed.
    fn tree(dir: &Path) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(root).unwrap().display().to_string());
                if p.is_dir() && !p.is_symlink() {
                    walk(root, &p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, &mut out);
        out.sort();
        out
    }

    #[tokio::test]
    async fn creates_parents_and_reports_utf8_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(dir.path(), json!({"path": "a/b/c.txt", "content": "héllo"}))
            .await
            .unwrap();
        // "é" is two bytes.
        assert_eq!(
            out.text_content(),
            "Successfully wrote 6 bytes to a/b/c.txt"
        );
        assert_eq!(out.details, Value::Null);
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "héllo"
        );
        assert_eq!(tree(dir.path()), ["a", "a/b", "a/b/c.txt"]);
        let out = run(dir.path(), json!({"path": "empty", "content": ""}))
            .await
            .unwrap();
        assert_eq!(out.text_content(), "Successfully wrote 0 bytes to empty");
        // Outside the project the absolute path is shown.
        let other = tempfile::tempdir().unwrap();
        let target = other.path().join("x.txt");
        let out = run(
            dir.path(),
            json!({"path": target.to_str().unwrap(), "content": "x"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.text_content(),
            format!("Successfully wrote 1 bytes to {}", target.display())
        );
    }

    #[tokio::test]
    async fn overwrites_keeping_permissions_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run.sh");
        fs::write(&p, "old content that is longer\n").unwrap();
        chmod(&p, 0o750);
        run(dir.path(), json!({"path": "run.sh", "content": "new\n"}))
            .await
            .unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new\n");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
            0o750
        );
        // A new file gets the mode any new file gets here (0666 less the umask).
        fs::write(dir.path().join("probe"), "").unwrap();
        run(dir.path(), json!({"path": "fresh.txt", "content": "x"}))
            .await
            .unwrap();
        let mode = |n: &str| {
            fs::metadata(dir.path().join(n))
                .unwrap()
                .permissions()
                .mode()
        };
        assert_eq!(mode("fresh.txt"), mode("probe"));
        assert_eq!(tree(dir.path()), ["fresh.txt", "probe", "run.sh"]);
    }

    #[tokio::test]
    async fn writes_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("real.txt"), "old").unwrap();
        std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
        std::os::unix::fs::symlink("sub/made.txt", dir.path().join("dangling")).unwrap();
        run(dir.path(), json!({"path": "link.txt", "content": "new"}))
            .await
            .unwrap();
        assert!(dir.path().join("link.txt").is_symlink());
        assert_eq!(
            fs::read_to_string(dir.path().join("real.txt")).unwrap(),
            "new"
        );
        run(dir.path(), json!({"path": "dangling", "content": "made"}))
            .await
            .unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("sub/made.txt")).unwrap(),
            "made"
        );
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        let e = run(dir.path(), json!({"path": "loop", "content": "x"}))
            .await
            .unwrap_err();
        assert!(e.0.contains("too many levels of symbolic links"), "{e}");
    }

    #[tokio::test]
    async fn refusals_change_nothing_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("f.txt"), "keep").unwrap();
        let before = tree(dir.path());
        let err = |path: &str| {
            let dir = dir.path().to_path_buf();
            let path = path.to_string();
            async move {
                run(&dir, json!({"path": path, "content": "x"}))
                    .await
                    .unwrap_err()
                    .0
            }
        };
        let abs = |p: &str| dir.path().join(p).display().to_string();
        assert_eq!(
            err("d").await,
            format!("Cannot write {}: it is a directory", abs("d"))
        );
        assert_eq!(
            err("f.txt/x.txt").await,
            format!(
                "Cannot write {}: {} is a file, not a directory",
                abs("f.txt/x.txt"),
                abs("f.txt")
            )
        );
        assert_eq!(
            err("f.txt/deeper/x.txt").await,
            format!(
                "Cannot write {}: {} is a file, not a directory",
                abs("f.txt/deeper/x.txt"),
                abs("f.txt")
            )
        );
        assert_eq!(tree(dir.path()), before);
        assert_eq!(
            fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "keep"
        );
        let e = run(dir.path(), json!({"path": "f.txt"})).await.unwrap_err();
        assert_eq!(e.0, "Missing required argument \"content\"");
        let e = run(dir.path(), json!({"path": "f.txt", "content": 5}))
            .await
            .unwrap_err();
        assert_eq!(e.0, "Argument \"content\" must be a string, got 5");
        assert_eq!(
            fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "keep"
        );
    }

    #[tokio::test]
    async fn permission_denied_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::write(locked.join("in.txt"), "keep").unwrap();
        let ro = dir.path().join("ro.txt");
        fs::write(&ro, "keep").unwrap();
        chmod(&ro, 0o444);
        chmod(&locked, 0o555);
        let new_in_locked = run(
            dir.path(),
            json!({"path": "locked/new/x.txt", "content": "x"}),
        )
        .await;
        // A writable file in a read-only directory is still writable, in place.
        let in_place = run(
            dir.path(),
            json!({"path": "locked/in.txt", "content": "changed"}),
        )
        .await;
        let over_ro = run(dir.path(), json!({"path": "ro.txt", "content": "x"})).await;
        chmod(&locked, 0o755);
        assert_eq!(
            in_place.unwrap().text_content(),
            "Successfully wrote 7 bytes to locked/in.txt"
        );
        assert_eq!(
            fs::read_to_string(locked.join("in.txt")).unwrap(),
            "changed"
        );
        if permissions_enforced() {
            assert_eq!(
                new_in_locked.unwrap_err().0,
                format!(
                    "Permission denied: cannot write {} (no write access to {})",
                    locked.join("new/x.txt").display(),
                    locked.display()
                )
            );
            assert_eq!(
                over_ro.unwrap_err().0,
                format!("Permission denied: cannot write {}", ro.display())
            );
            assert_eq!(tree(dir.path()), ["locked", "locked/in.txt", "ro.txt"]);
            assert_eq!(fs::read_to_string(&ro).unwrap(), "keep");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let t = Arc::new(tool(dir.path()));
        let contents: Vec<String> = (0..12).map(|i| format!("{i:02}").repeat(100_000)).collect();
        let mut tasks = Vec::new();
        for c in contents.clone() {
            let t = t.clone();
            tasks.push(tokio::spawn(async move {
                run_tool(t.as_ref(), json!({"path": "same.txt", "content": c}))
                    .await
                    .unwrap()
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let last = fs::read_to_string(dir.path().join("same.txt")).unwrap();
        assert!(contents.contains(&last));
        assert_eq!(tree(dir.path()), ["same.txt"]);
    }

    #[tokio::test]
    async fn a_writer_gets_exactly_the_bytes_a_local_write_would_land() {
        let local = tempfile::tempdir().unwrap();
        let routed = tempfile::tempdir().unwrap();
        let content = "\u{feff}line one\r\nlíne two\r\n";
        for dir in [local.path(), routed.path()] {
            fs::write(dir.join("real.txt"), "old").unwrap();
            std::os::unix::fs::symlink("real.txt", dir.join("link.txt")).unwrap();
        }
        let writer = Arc::new(RecordingWriter::default());
        let t = WriteTool::new(ToolContext::local(routed.path()).with_writer(writer.clone()));
        for path in ["link.txt", "new/deeper/file.txt"] {
            let args = json!({"path": path, "content": content});
            let here = run(local.path(), args.clone()).await.unwrap();
            let there = run_tool(&t, args).await.unwrap();
            assert_eq!(
                here.text_content(),
                there.text_content(),
                "same report either way"
            );
        }
        // The link is followed before handing over; the content is byte for byte what landed
        // locally.
        assert_eq!(
            writer.writes(),
            [
                (routed.path().join("real.txt"), content.to_string()),
                (
                    routed.path().join("new/deeper/file.txt"),
                    content.to_string()
                ),
            ]
        );
        assert_eq!(
            fs::read(local.path().join("real.txt")).unwrap(),
            content.as_bytes()
        );
        assert_eq!(
            fs::read(local.path().join("new/deeper/file.txt")).unwrap(),
            content.as_bytes()
        );
        // Nothing was written here, but the parents the client needs exist.
        assert_eq!(
            fs::read_to_string(routed.path().join("real.txt")).unwrap(),
            "old"
        );
        assert_eq!(
            tree(routed.path()),
            ["link.txt", "new", "new/deeper", "real.txt"]
        );
    }

    #[tokio::test]
    async fn a_failing_writer_is_an_error_and_local_refusals_never_reach_it() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        let writer = Arc::new(RecordingWriter {
            fail: Some("the client refused: disk full".into()),
            ..RecordingWriter::default()
        });
        let t = WriteTool::new(ToolContext::local(dir.path()).with_writer(writer.clone()));
        let e = run_tool(&t, json!({"path": "a/b.txt", "content": "x"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.0,
            format!(
                "Cannot write {}: the client refused: disk full",
                dir.path().join("a/b.txt").display()
            )
        );
        // The directory made for the failed write is gone again.
        assert_eq!(tree(dir.path()), ["d"]);
        let e = run_tool(&t, json!({"path": "d", "content": "x"}))
            .await
            .unwrap_err();
        assert!(e.0.ends_with("it is a directory"), "{e}");
        assert_eq!(writer.writes().len(), 1);
    }

    #[tokio::test]
    async fn cancelled_before_writing_writes_nothing_and_declarations() {
        let dir = tempfile::tempdir().unwrap();
        let t = tool(dir.path());
        let e = run_tool_with(&t, json!({"path": "x.txt", "content": "x"}), cancelled())
            .await
            .unwrap_err();
        assert_eq!(e.0, "Operation aborted");
        assert!(tree(dir.path()).is_empty());

        assert_eq!(t.name(), "write");
        assert_eq!(
            t.annotations(),
            ToolAnnotations {
                read_only: false,
                destructive: true,
                open_world: false
            }
        );
        assert_eq!(t.parameters()["required"], json!(["path", "content"]));
        assert_eq!(
            t.target_paths(&json!({"path": "a/../b.txt", "content": ""})),
            vec![dir.path().join("b.txt")]
        );
    }
}
