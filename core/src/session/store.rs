//! The session store: one append-only JSONL file, its entries in memory, and the leaf.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::SessionError;
use super::context::{SessionContext, SessionTree, build_context, build_tree};
use super::entry::{
    ActiveToolsChange, BranchSummary, CURRENT_VERSION, Compaction, CustomEntry, CustomMessageEntry,
    EntryKind, Label, LeafMove, ModelChange, SessionEntry, SessionHeader, SessionInfo,
    ThinkingLevelChange,
};
use super::ids::{is_valid_session_id, new_entry_id};
use super::lines::{LineReader, LineRef};
use super::location::{march_session_dir, session_file_name};
use super::messages::SessionMessage;
use super::read::{LoadReport, read_session};
use crate::atomic_file::sync_dir;
use crate::message::UserBody;
use crate::paths::MarchPaths;
use crate::usage::UsageTotals;

/// A session transcript: an append-only JSONL file in pi's v3 format, held in memory as a
/// tree of entries with a movable leaf.
///
/// One writer per file: the runner that owns the session. Every append reaches the disk
/// (`sync_data`) before it returns.
///
/// Entries hold their parsed form and where their line is in the file, not the line
/// itself: re-emitting the session ([`SessionStore::to_jsonl`],
/// [`SessionStore::continue_in_new_file`], [`SessionEntry::json_line`]) reads the file
/// again, so a loaded session costs about its parsed size rather than twice that.
#[derive(Debug)]
pub struct SessionStore {
    path: Arc<Path>,
    header: SessionHeader,
    header_line: Box<str>,
    source_version: u32,
    entries: Vec<SessionEntry>,
    by_id: HashMap<String, usize>,
    labels: HashMap<String, String>,
    leaf: Option<String>,
    /// Tokens and cost of every model call in the file (all branches: spent is spent),
    /// summed while entries are read and appended, never by a second pass.
    usage: UsageTotals,
    /// Opened on the first append, so reading a session never needs write access.
    file: Option<File>,
}

impl SessionStore {
    /// Create a new session file for `cwd` in March's session directory for it.
    pub fn create_for_cwd(paths: &MarchPaths, cwd: &Path) -> Result<Self, SessionError> {
        let header = SessionHeader::new(cwd.to_string_lossy());
        Self::create(&march_session_dir(paths, cwd), header)
    }

    /// Create a new session file in `dir` (created if missing) and write its header now.
    ///
    /// Unlike pi, which writes nothing until the first assistant message, the header is on
    /// disk when this returns, so an empty session is visible and resumable.
    pub fn create(dir: &Path, mut header: SessionHeader) -> Result<Self, SessionError> {
        if !is_valid_session_id(&header.id) {
            return Err(SessionError::InvalidSessionId(header.id));
        }
        header.version = Some(CURRENT_VERSION);
        let header_line = header.to_json_line()?;
        fs::create_dir_all(dir).map_err(|source| SessionError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        let file = write_new_file(&path, &header_line, |_| Ok(()))?;
        sync_dir(dir);
        Ok(SessionStore {
            path: path.into(),
            header,
            header_line: header_line.into(),
            source_version: CURRENT_VERSION,
            entries: Vec::new(),
            by_id: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            usage: UsageTotals::default(),
            file: Some(file),
        })
    }

    /// Load a session file. The file is never modified; pi v1/v2 files are migrated in
    /// memory. The leaf is the last entry in file order, or where a last `leaf` entry moved
    /// it (pi's harness reopens the same way).
    pub fn open(path: &Path) -> Result<(Self, LoadReport), SessionError> {
        let file = File::open(path).map_err(|source| SessionError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let path: Arc<Path> = path.into();
        let loaded = read_session(BufReader::new(file), &path)?;
        let mut store = SessionStore {
            path,
            header: loaded.header,
            header_line: loaded.header_line,
            source_version: loaded.report.source_version,
            by_id: HashMap::with_capacity(loaded.entries.len()),
            // Taken as they are: a copy would briefly hold every entry twice.
            entries: loaded.entries,
            labels: HashMap::new(),
            leaf: None,
            usage: UsageTotals::default(),
            file: None,
        };
        for index in 0..store.entries.len() {
            store.track(index);
        }
        store.leaf = store.entries.last().and_then(|last| match &last.kind {
            EntryKind::Leaf(moved) => match &moved.target_id {
                // A target lost with a damaged line: stay where the move was made from.
                Some(target) if !store.by_id.contains_key(target) => last.parent_id.clone(),
                target => target.clone(),
            },
            _ => Some(last.id.clone()),
        });
        Ok((store, loaded.report))
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header (as migrated to v3 for older files).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The format version of the file on disk; only v3 files accept appends.
    pub fn source_version(&self) -> u32 {
        self.source_version
    }

    /// Every entry in file order (the header excluded).
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The entry with `id`.
    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.by_id.get(id).and_then(|&i| self.entries.get(i))
    }

    /// The id of the current leaf; `None` before the first entry.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// The current leaf entry.
    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf.as_deref().and_then(|id| self.entry(id))
    }

    /// The direct children of `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        let parent = Some(id);
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == parent)
            .collect()
    }

    /// The entries from the root to `id` (or to the leaf when `None`), all types included.
    pub fn branch_path(&self, id: Option<&str>) -> Vec<&SessionEntry> {
        let start = id.or(self.leaf.as_deref());
        let start = start.and_then(|id| self.by_id.get(id).copied());
        super::context::path_to(&self.entries, &self.by_id, start)
            .into_iter()
            .filter_map(|i| self.entries.get(i))
            .collect()
    }

    /// Tokens and cost of every model call the session made that a model answered.
    pub fn usage(&self) -> UsageTotals {
        self.usage
    }

    /// The label on `id`, if any.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(String::as_str)
    }

    /// The session's name: the latest `session_info` entry's, unless that one cleared it.
    pub fn session_name(&self) -> Option<&str> {
        let info = self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::SessionInfo(info) => Some(info),
            _ => None,
        })?;
        info.name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
    }

    /// The context for the model at the current leaf.
    pub fn context(&self) -> SessionContext {
        self.build_context(self.leaf.as_deref())
    }

    /// The context for the model at `leaf` (pi's `buildSessionContext`): `None` gives an
    /// empty context; an unknown id falls back to the last entry, as in pi.
    pub fn build_context(&self, leaf: Option<&str>) -> SessionContext {
        build_context(&self.entries, &self.by_id, leaf)
    }

    /// The entry tree, children sorted by timestamp.
    pub fn tree(&self) -> SessionTree {
        build_tree(&self.entries, &self.by_id)
    }

    /// Move the leaf to `id`; the next append starts a branch there.
    pub fn branch(&mut self, id: &str) -> Result<(), SessionError> {
        if !self.by_id.contains_key(id) {
            return Err(SessionError::EntryNotFound(id.to_string()));
        }
        self.leaf = Some(id.to_string());
        Ok(())
    }

    /// Move the leaf before the first entry; the next append makes a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Move the leaf to `target` (`None`: before the first entry) and record the move as a
    /// `leaf` entry under the leaf being left, so the session reopens at `target`. Nothing
    /// is written when the leaf is already there.
    pub fn move_leaf(&mut self, target: Option<&str>) -> Result<(), SessionError> {
        if let Some(id) = target
            && !self.by_id.contains_key(id)
        {
            return Err(SessionError::EntryNotFound(id.to_string()));
        }
        if self.leaf.as_deref() == target {
            return Ok(());
        }
        self.append(EntryKind::Leaf(LeafMove {
            target_id: target.map(str::to_string),
        }))?;
        self.leaf = target.map(str::to_string);
        Ok(())
    }

    /// Move the leaf to `from` (`None`: before the first entry) and append a
    /// `branch_summary` there describing the branch being left.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: impl Into<String>,
        details: Option<Value>,
    ) -> Result<&SessionEntry, SessionError> {
        self.ensure_writable()?;
        match from {
            Some(id) => self.branch(id)?,
            None => self.reset_leaf(),
        }
        self.append(EntryKind::BranchSummary(BranchSummary {
            from_id: from.unwrap_or("root").to_string(),
            summary: summary.into(),
            details,
            from_hook: None,
        }))
    }

    /// Append an entry as a child of the leaf and move the leaf to it.
    ///
    /// The line is written and `sync_data`'d before this returns, so a message is on disk
    /// before anyone is told about it; a crash loses at most this line.
    pub fn append(&mut self, kind: impl Into<EntryKind>) -> Result<&SessionEntry, SessionError> {
        self.ensure_writable()?;
        let id = new_entry_id(|c| self.by_id.contains_key(c));
        let mut entry = SessionEntry::new(id, self.leaf.clone(), kind.into());
        let mut bytes = entry.serialize()?.into_bytes();
        bytes.push(b'\n');
        let mut file = match self.file.take() {
            Some(file) => file,
            None => open_for_append(&self.path)?,
        };
        // The handle appends, so the line starts at the current end.
        let offset = file
            .seek(SeekFrom::End(0))
            .and_then(|offset| file.write_all(&bytes).map(|()| offset))
            .and_then(|offset| file.sync_data().map(|()| offset))
            .map_err(|source| self.write_error(source))?;
        // Only a healthy handle is kept: after a failed write the next append reopens the
        // file and repairs a torn tail first.
        self.file = Some(file);
        let line = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        entry.line = LineRef::in_file(&self.path, offset, line);
        let index = self.index(entry);
        Ok(&self.entries[index])
    }

    /// Append a conversation message.
    pub fn append_message(
        &mut self,
        message: impl Into<SessionMessage>,
    ) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::Message(Arc::new(message.into())))
    }

    /// Append a thinking level change (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`).
    pub fn append_thinking_level(&mut self, level: &str) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::ThinkingLevelChange(ThinkingLevelChange {
            thinking_level: level.to_string(),
        }))
    }

    /// Append a model change.
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::ModelChange(ModelChange {
            provider: provider.to_string(),
            model_id: model_id.to_string(),
        }))
    }

    /// Append a compaction: `summary` replaces the path before `first_kept_entry_id`.
    pub fn append_compaction(
        &mut self,
        summary: impl Into<String>,
        first_kept_entry_id: &str,
        tokens_before: u64,
        details: Option<Value>,
    ) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::Compaction(Compaction {
            summary: summary.into(),
            first_kept_entry_id: first_kept_entry_id.to_string(),
            tokens_before,
            details,
            from_hook: None,
        }))
    }

    /// Append extension state (never part of the model's context).
    pub fn append_custom(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::Custom(CustomEntry {
            custom_type: custom_type.to_string(),
            data,
        }))
    }

    /// Append an extension's message that the model sees as a user message.
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: UserBody,
        display: bool,
        details: Option<Value>,
    ) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::CustomMessage(CustomMessageEntry {
            custom_type: custom_type.to_string(),
            content,
            display,
            details,
        }))
    }

    /// Set (or with `None`/empty, clear) the label of an existing entry.
    pub fn append_label(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<&SessionEntry, SessionError> {
        if !self.by_id.contains_key(target_id) {
            return Err(SessionError::EntryNotFound(target_id.to_string()));
        }
        self.append(EntryKind::Label(Label {
            target_id: target_id.to_string(),
            label: label.map(str::to_string),
        }))
    }

    /// Record the tools the model has from here on (`active_tools_change`).
    pub fn append_active_tools(&mut self, names: &[String]) -> Result<&SessionEntry, SessionError> {
        self.append(EntryKind::ActiveToolsChange(ActiveToolsChange {
            active_tool_names: names.to_vec(),
        }))
    }

    /// Name the session; newlines become spaces and the name is trimmed (empty clears it).
    pub fn append_session_info(&mut self, name: &str) -> Result<&SessionEntry, SessionError> {
        let name = name.replace(['\r', '\n'], " ").trim().to_string();
        self.append(EntryKind::SessionInfo(SessionInfo { name: Some(name) }))
    }

    /// Continue this session in a new v3 file in `dir`: header with `parentSession` set to
    /// the current file, then every entry (migrated ids kept), then later appends.
    ///
    /// This is how a pi v1/v2 file is continued: March never appends v3 lines to an older
    /// file, because pi would migrate and rewrite it on the next load and March's own
    /// reader would see a mix of layouts. The old file is left untouched. Entry lines are
    /// copied from it byte for byte; if it no longer holds them (replaced or truncated since
    /// it was loaded) this fails with [`SessionError::Changed`], removes the partial new
    /// file and leaves the store as it was.
    pub fn continue_in_new_file(&mut self, dir: &Path) -> Result<&Path, SessionError> {
        let (header, header_line, path) = self.child_file(dir)?;
        let path: Arc<Path> = path.into();
        let mut reader = LineReader::sequential();
        let mut lines = Vec::with_capacity(self.entries.len());
        let file = write_new_file(&path, &header_line, |out| {
            for entry in &self.entries {
                let line = read_line(&mut reader, entry)?;
                let offset = out.line(line)?;
                lines.push(LineRef::in_file(&path, offset, line.as_bytes()));
            }
            Ok(())
        })?;
        sync_dir(dir);
        // Every line is in the new file now, migrated ones included.
        for (entry, line) in self.entries.iter_mut().zip(lines) {
            entry.line = line;
        }
        self.path = path;
        self.header = header;
        self.header_line = header_line.into();
        self.source_version = CURRENT_VERSION;
        self.file = Some(file);
        Ok(&self.path)
    }

    /// Copy the path from the root to `leaf` (the current leaf when `None`) into a new v3
    /// session file in `dir` (pi's branched session): its header's `parentSession` names this
    /// file; `label` and `leaf` entries are left out (the entries after one are chained to
    /// the entry before it) and the path's labels are written again at its end. Entry lines
    /// whose parent is unchanged are copied byte for byte. This session is not changed.
    pub fn fork(&self, leaf: Option<&str>, dir: &Path) -> Result<SessionStore, SessionError> {
        if let Some(id) = leaf
            && !self.by_id.contains_key(id)
        {
            return Err(SessionError::EntryNotFound(id.to_string()));
        }
        let path = self.branch_path(leaf);
        let kept: Vec<&SessionEntry> = path
            .into_iter()
            .filter(|e| !matches!(e.kind, EntryKind::Label(_) | EntryKind::Leaf(_)))
            .collect();
        let (_, header_line, new_path) = self.child_file(dir)?;
        let mut reader = LineReader::sequential();
        let file = write_new_file(&new_path, &header_line, |out| {
            let mut parent: Option<&str> = None;
            for entry in &kept {
                if entry.parent_id.as_deref() == parent {
                    out.line(read_line(&mut reader, entry)?)?;
                } else {
                    let mut chained = (*entry).clone();
                    chained.parent_id = parent.map(str::to_string);
                    out.line(&chained.serialize()?)?;
                }
                parent = Some(&entry.id);
            }
            Ok(())
        })?;
        drop(file);
        sync_dir(dir);
        let (mut forked, _) = SessionStore::open(&new_path)?;
        for entry in &kept {
            if let Some(label) = self.label(&entry.id) {
                forked.append_label(&entry.id, Some(label))?;
            }
        }
        Ok(forked)
    }

    /// The header of a new session file in `dir` (created if missing) whose parent is this
    /// one, its line, and the file's path.
    fn child_file(&self, dir: &Path) -> Result<(SessionHeader, String, PathBuf), SessionError> {
        let mut header = SessionHeader::new(self.header.cwd.clone());
        header.parent_session = Some(self.path.to_string_lossy().into_owned());
        let header_line = header.to_json_line()?;
        fs::create_dir_all(dir).map_err(|source| SessionError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        Ok((header, header_line, path))
    }

    /// The session as JSONL: a file March wrote comes back byte for byte; a migrated pi
    /// v1/v2 file comes back in its v3 form.
    ///
    /// Lines are read from the file. Should it no longer hold one (replaced or truncated
    /// since it was loaded), that entry is logged and re-serialised instead;
    /// [`SessionStore::try_to_jsonl`] reports it as an error.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::with_capacity(self.jsonl_len());
        let mut reader = LineReader::sequential();
        push_line(&mut out, &self.header_line);
        let mut failed = 0usize;
        for entry in &self.entries {
            match read_line(&mut reader, entry) {
                Ok(line) => push_line(&mut out, line),
                Err(e) => {
                    if failed == 0 {
                        tracing::warn!("{e}; re-serialising such entries instead");
                    }
                    failed += 1;
                    push_line(&mut out, &entry.serialize().unwrap_or_default());
                }
            }
        }
        if failed > 1 {
            tracing::warn!("{failed} entries of {} re-serialised", self.path.display());
        }
        out
    }

    /// The session as JSONL, byte for byte as [`SessionStore::to_jsonl`], or
    /// [`SessionError::Changed`] when the file no longer holds an entry's line.
    pub fn try_to_jsonl(&self) -> Result<String, SessionError> {
        let mut out = String::with_capacity(self.jsonl_len());
        let mut reader = LineReader::sequential();
        push_line(&mut out, &self.header_line);
        for entry in &self.entries {
            push_line(&mut out, read_line(&mut reader, entry)?);
        }
        Ok(out)
    }

    fn jsonl_len(&self) -> usize {
        let entries: u64 = self
            .entries
            .iter()
            .map(|e| match &e.line {
                LineRef::Owned(line) => line.len() as u64 + 1,
                LineRef::File(at) => at.len + 1,
            })
            .sum();
        usize::try_from(entries).map_or(0, |n| n + self.header_line.len() + 1)
    }

    fn ensure_writable(&self) -> Result<(), SessionError> {
        if self.source_version == CURRENT_VERSION {
            Ok(())
        } else {
            Err(SessionError::LegacyFormat {
                path: self.path.to_path_buf(),
                version: self.source_version,
            })
        }
    }

    fn write_error(&self, source: std::io::Error) -> SessionError {
        SessionError::Write {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// Add an entry to the in-memory index and move the leaf to it; returns its position.
    fn index(&mut self, entry: SessionEntry) -> usize {
        let index = self.entries.len();
        self.leaf = Some(entry.id.clone());
        self.entries.push(entry);
        self.track(index);
        index
    }

    /// Index the entry at `index`: its id, and the label it sets or clears.
    fn track(&mut self, index: usize) {
        let Some(entry) = self.entries.get(index) else {
            return;
        };
        match entry.message() {
            // A request no model answered (a refused connection, an error status) is no call.
            Some(SessionMessage::Assistant(a)) if a.answered() => self.usage.add(&a.usage),
            // A call that cost something itself (a generated image).
            Some(SessionMessage::ToolResult(t)) => {
                if let Some(usage) = &t.usage {
                    self.usage.add(usage);
                }
            }
            _ => {}
        }
        if let EntryKind::Label(label) = &entry.kind {
            match label.label.as_deref().filter(|l| !l.is_empty()) {
                Some(text) => self
                    .labels
                    .insert(label.target_id.clone(), text.to_string()),
                None => self.labels.remove(&label.target_id),
            };
        }
        self.by_id.insert(entry.id.clone(), index);
    }
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

/// An entry's exact line, from memory or from its file.
fn read_line<'a>(
    reader: &'a mut LineReader,
    entry: &'a SessionEntry,
) -> Result<&'a str, SessionError> {
    match &entry.line {
        LineRef::Owned(line) => Ok(line),
        LineRef::File(at) => reader.read(at, &entry.id),
    }
}

/// Lines going into a new session file, with the offset each starts at.
struct NewFile<'a> {
    out: BufWriter<&'a mut File>,
    offset: u64,
    path: &'a Path,
}

impl NewFile<'_> {
    /// Write `line` and its newline; returns the offset it starts at.
    fn line(&mut self, line: &str) -> Result<u64, SessionError> {
        let offset = self.offset;
        self.out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|source| SessionError::Create {
                path: self.path.to_path_buf(),
                source,
            })?;
        self.offset += line.len() as u64 + 1;
        Ok(offset)
    }
}

/// Create `path` (it must not exist), write `header` and whatever `body` writes, and make
/// them durable. On failure the partial file is removed.
fn write_new_file(
    path: &Path,
    header: &str,
    body: impl FnOnce(&mut NewFile<'_>) -> Result<(), SessionError>,
) -> Result<File, SessionError> {
    let create_error = |source| SessionError::Create {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create_new(true)
        .open(path)
        .map_err(create_error)?;
    let written = (|| {
        let mut out = NewFile {
            out: BufWriter::new(&mut file),
            offset: 0,
            path,
        };
        out.line(header)?;
        body(&mut out)?;
        out.out.flush().map_err(create_error)?;
        drop(out);
        file.sync_data().map_err(create_error)
    })();
    match written {
        Ok(()) => Ok(file),
        Err(e) => {
            drop(file);
            let _ = fs::remove_file(path);
            Err(e)
        }
    }
}

/// Open an existing session file for appending; if its last line is torn (no newline),
/// end it so the next entry starts on a line of its own. Nothing is ever truncated.
fn open_for_append(path: &Path) -> Result<File, SessionError> {
    let write_error = |source| SessionError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(write_error)?;
    let len = file.metadata().map_err(write_error)?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::End(-1))
            .and_then(|_| file.read_exact(&mut last))
            .map_err(write_error)?;
        if last[0] != b'\n' {
            file.write_all(b"\n").map_err(write_error)?;
        }
    }
    Ok(file)
}
