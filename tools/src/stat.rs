//! What stands at a path, checked before a tool opens it, with the failures sorted into the
//! cases the tools word differently.

use std::fs::{self, Metadata, ReadDir};
use std::io;
use std::path::Path;

use march_core::tool::ToolError;

use crate::task::aborted;

/// Why a path could not be used as a regular file.
#[derive(Debug)]
pub(crate) enum FileError {
    /// Nothing is there.
    NotFound,
    /// It is a directory.
    IsDirectory,
    /// A FIFO, socket or device: opening one could block forever or have side effects.
    NotRegular,
    /// Access was refused (the error as the system gave it).
    PermissionDenied(io::Error),
    /// Anything else.
    Io(io::Error),
}

impl From<io::Error> for FileError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => FileError::NotFound,
            io::ErrorKind::PermissionDenied => FileError::PermissionDenied(e),
            io::ErrorKind::IsADirectory => FileError::IsDirectory,
            _ => FileError::Io(e),
        }
    }
}

/// The metadata of the regular file at `path`, symbolic links followed.
pub(crate) fn regular_file(path: &Path) -> Result<Metadata, FileError> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        Err(FileError::IsDirectory)
    } else if !meta.is_file() {
        Err(FileError::NotRegular)
    } else {
        Ok(meta)
    }
}

/// Why a directory could not be searched or listed.
#[derive(Debug)]
pub(crate) enum DirError {
    /// Nothing is there.
    NotFound,
    /// Something other than a directory is there.
    NotADirectory,
    /// It could not be looked at or read (permission denied, among others).
    Unreadable(io::Error),
    /// The call was cancelled while it ran.
    Cancelled,
}

impl DirError {
    /// The error the model sees, naming `dir`; `unreadable` words an I/O error, which each
    /// tool does its own way.
    pub(crate) fn into_tool_error(
        self,
        dir: &Path,
        unreadable: impl FnOnce(&io::Error) -> String,
    ) -> ToolError {
        let p = dir.display();
        match self {
            DirError::NotFound => ToolError::new(format!("Path not found: {p}")),
            DirError::NotADirectory => ToolError::new(format!("Not a directory: {p}")),
            DirError::Unreadable(e) => ToolError::new(unreadable(&e)),
            DirError::Cancelled => aborted(),
        }
    }
}

/// Open the directory at `path` for reading, after checking that it is one.
pub(crate) fn open_dir(path: &Path) -> Result<ReadDir, DirError> {
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => DirError::NotFound,
        _ => DirError::Unreadable(e),
    })?;
    if !meta.is_dir() {
        return Err(DirError::NotADirectory);
    }
    fs::read_dir(path).map_err(DirError::Unreadable)
}
