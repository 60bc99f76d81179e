//! Memory: markdown notes that outlive a session. Global files (`memory/*.md` in the data
//! dir) apply to every project; one project file (`.march/memory.md` unless configured) to
//! one project.
//!
//! This module finds, reads and searches the files and computes appends by `## ` section; the
//! `profiles` context layer and the memory tool both use it. Writing is the tool's job, so
//! that it goes through the permission gate and the tools' atomic write like any write.

mod sections;

pub use sections::{Appended, Section, append_entry, sections};

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::config::MemoryConfig;
use crate::paths::MarchPaths;

/// The global file used when a call names none.
pub const DEFAULT_GLOBAL_FILE: &str = "notes.md";

/// Which memory a file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MemoryScope {
    /// The current project's memory file.
    Project,
    /// The global files shared by every project.
    Global,
    /// The files of a memory server (`[memory] remote`), as last mirrored here.
    Remote,
}

impl MemoryScope {
    /// `project` or `global`, as the memory tool spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryScope::Project => "project",
            MemoryScope::Global => "global",
            MemoryScope::Remote => "remote",
        }
    }
}

/// Why memory could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A global memory file name that is not a plain `*.md` file name.
    #[error("invalid memory file name {name:?}: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A section name that cannot be a heading.
    #[error("invalid section name: {0}")]
    InvalidSection(&'static str),
    /// An append with nothing to add.
    #[error("nothing to append: the text is empty")]
    EmptyEntry,
    /// Something other than a regular file is where a memory file should be.
    #[error("cannot read memory file {}: it is not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A memory file or the global directory exists but could not be read.
    #[error("cannot read memory file {}: {error}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error (part of the message, so not also a `source`).
        error: std::io::Error,
    },
}

/// One memory file, named as the model and the context see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// Project or global.
    pub scope: MemoryScope,
    /// The file name (global) or the path relative to the project, absolute when outside it.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
}

/// A memory file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryText {
    /// The text, invalid UTF-8 replaced; only the first bytes when `cut`.
    pub text: String,
    /// The file's size in bytes.
    pub total_bytes: u64,
    /// Whether the text stops before the end of the file.
    pub cut: bool,
}

/// A line of memory that matched a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// The file it is in.
    pub file: MemoryFile,
    /// Its line number, from 1.
    pub line: usize,
    /// The line, without its line ending.
    pub text: String,
}

/// What a search found, and the files it could not read.
#[derive(Debug, Default)]
pub struct SearchResults {
    /// Matching lines: project file first, then global files by name, each in line order.
    pub hits: Vec<SearchHit>,
    /// Files (or the global directory) that could not be read.
    pub errors: Vec<MemoryError>,
}

/// Largest memory file read whole; past it only this much is read (a memory file that big
/// is a mistake, and reading it must not exhaust memory).
pub const MAX_READ_BYTES: usize = 8 * 1024 * 1024;

/// The memory files of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// The directory of the global files.
    pub global_dir: PathBuf,
    /// The project directory; the project file is named relative to it.
    pub project_dir: PathBuf,
    /// The project memory file (absolute).
    pub project_file: PathBuf,
    /// Most tokens (bytes / 4) of memory the system prompt carries.
    pub budget_tokens: u64,
    /// The local mirror of a memory server's files, when `[memory] remote` names one.
    pub remote_dir: Option<PathBuf>,
}

impl Memory {
    /// Memory for `project_dir`, its file at `project_file` (relative to the project, or
    /// absolute) and the global files in `global_dir`.
    pub fn new(
        global_dir: PathBuf,
        project_dir: PathBuf,
        project_file: &Path,
        budget_tokens: u64,
    ) -> Self {
        Memory {
            global_dir,
            project_file: project_dir.join(project_file),
            project_dir,
            budget_tokens,
            remote_dir: None,
        }
    }

    /// The same memory, with a memory server's files mirrored in `dir`.
    pub fn with_remote(mut self, dir: PathBuf) -> Self {
        self.remote_dir = Some(dir);
        self
    }

    /// Memory as `[memory]` configures it for `project_dir`; `None` when it is disabled.
    pub fn from_config(
        paths: &MarchPaths,
        project_dir: &Path,
        config: &MemoryConfig,
    ) -> Option<Self> {
        config.enabled.then(|| {
            Memory::new(
                paths.memory_dir(),
                project_dir.to_path_buf(),
                &config.project_file,
                config.budget_tokens,
            )
        })
    }

    /// The project memory file.
    pub fn project(&self) -> MemoryFile {
        let name = match self.project_file.strip_prefix(&self.project_dir) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => self.project_file.display().to_string(),
        };
        MemoryFile {
            scope: MemoryScope::Project,
            name,
            path: self.project_file.clone(),
        }
    }

    /// The global file called `name` (`.md` added when missing); only plain file names are
    /// accepted, so a call can never reach outside the global directory.
    pub fn global(&self, name: &str) -> Result<MemoryFile, MemoryError> {
        let name = global_file_name(name)?;
        Ok(MemoryFile {
            scope: MemoryScope::Global,
            path: self.global_dir.join(&name),
            name,
        })
    }

    /// The memory server's file called `name`, in its mirror (named as [`Memory::global`]
    /// names them); `None` without a memory server.
    pub fn remote(&self, name: &str) -> Option<Result<MemoryFile, MemoryError>> {
        let dir = self.remote_dir.as_ref()?;
        Some(global_file_name(name).map(|name| MemoryFile {
            scope: MemoryScope::Remote,
            path: dir.join(&name),
            name,
        }))
    }

    /// The memory server's files as mirrored here, sorted by name; none without one.
    pub fn remote_files(&self) -> Result<Vec<MemoryFile>, MemoryError> {
        match &self.remote_dir {
            Some(dir) => md_files(dir, MemoryScope::Remote),
            None => Ok(Vec::new()),
        }
    }

    /// The global files (`*.md` regular files, symbolic links followed), sorted by name; none
    /// when the directory does not exist.
    pub fn global_files(&self) -> Result<Vec<MemoryFile>, MemoryError> {
        md_files(&self.global_dir, MemoryScope::Global)
    }

    /// Lines containing every word of `query` (ignoring case), in the project file then the
    /// global files; only one scope when `scope` is given.
    pub fn search(&self, query: &str, scope: Option<MemoryScope>) -> SearchResults {
        let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut results = SearchResults::default();
        if terms.is_empty() {
            return results;
        }
        let mut files = Vec::new();
        if scope.is_none() || scope == Some(MemoryScope::Project) {
            files.push(self.project());
        }
        if scope.is_none() || scope == Some(MemoryScope::Global) {
            match self.global_files() {
                Ok(global) => files.extend(global),
                Err(e) => results.errors.push(e),
            }
        }
        if scope.is_none() || scope == Some(MemoryScope::Remote) {
            match self.remote_files() {
                Ok(remote) => files.extend(remote),
                Err(e) => results.errors.push(e),
            }
        }
        for file in files {
            let text = match read_file(&file.path, MAX_READ_BYTES) {
                Ok(Some(t)) => t.text,
                Ok(None) => continue,
                Err(e) => {
                    results.errors.push(e);
                    continue;
                }
            };
            for (i, line) in text.lines().enumerate() {
                let lower = line.to_lowercase();
                if terms.iter().all(|t| lower.contains(t.as_str())) {
                    results.hits.push(SearchHit {
                        file: file.clone(),
                        line: i + 1,
                        text: line.to_string(),
                    });
                }
            }
        }
        results
    }
}

/// The `*.md` regular files of `dir` (symbolic links followed) as files of `scope`, sorted
/// by name; none when the directory does not exist.
fn md_files(dir: &Path, scope: MemoryScope) -> Result<Vec<MemoryFile>, MemoryError> {
    let read_error = |error| MemoryError::Read {
        path: dir.to_path_buf(),
        error,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(read_error(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(read_error)?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // Dot files include the atomic write's temporary files.
        if !name.ends_with(".md") || name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            files.push(MemoryFile { scope, name, path });
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// Check a global file name and add `.md` when it has no such ending.
fn global_file_name(name: &str) -> Result<String, MemoryError> {
    let bad = |reason| MemoryError::InvalidName {
        name: name.to_string(),
        reason,
    };
    if name.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if name.contains(['/', '\\']) {
        return Err(bad("it must be a file name without a directory"));
    }
    if name.contains('\0') || name.chars().any(char::is_control) {
        return Err(bad("it contains control characters"));
    }
    if name.starts_with('.') {
        return Err(bad("it must not start with a dot"));
    }
    let mut name = name.to_string();
    if !name.ends_with(".md") {
        name.push_str(".md");
    }
    if name.len() > 255 {
        return Err(MemoryError::InvalidName {
            name,
            reason: "it is longer than 255 bytes",
        });
    }
    Ok(name)
}

/// Read up to `limit` bytes of a memory file, invalid UTF-8 replaced; `None` when there is no
/// file. Symbolic links are followed; anything but a regular file is refused, since reading
/// a FIFO could block forever.
pub fn read_file(path: &Path, limit: usize) -> Result<Option<MemoryText>, MemoryError> {
    let read_error = |error| MemoryError::Read {
        path: path.to_path_buf(),
        error,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_error(e)),
    };
    if !meta.is_file() {
        return Err(MemoryError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        // Removed between the two calls: as if it had never been there.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_error(e)),
    };
    let mut bytes = Vec::new();
    // One byte past the limit tells whether the file goes on.
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    let cut = bytes.len() > limit;
    bytes.truncate(limit);
    Ok(Some(MemoryText {
        text: lossy(&bytes, cut),
        total_bytes: meta.len().max(bytes.len() as u64),
        cut,
    }))
}

/// Invalid UTF-8 replaced; a character split by a cut is dropped rather than replaced.
fn lossy(bytes: &[u8], cut: bool) -> String {
    let end = if cut {
        complete_prefix(bytes)
    } else {
        bytes.len()
    };
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The length of `bytes` without a trailing, unfinished multi-byte UTF-8 character.
fn complete_prefix(bytes: &[u8]) -> usize {
    for i in (bytes.len().saturating_sub(3)..bytes.len()).rev() {
        let need = match bytes[i] {
            b if b & 0xC0 == 0x80 => continue,
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 1,
        };
        return if bytes.len() - i < need {
            i
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

#[cfg(test)]
mod tests;
