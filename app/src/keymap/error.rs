//! What can be wrong with a keymap file, said with the file and line to fix.

use std::fmt;

/// A problem in a keymap file. None is fatal: the entry is skipped and the default binding
/// for that key stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeymapError {
    /// The file, as shown to the user.
    pub file: String,
    /// 1-based line, when the problem is at a place in the file.
    pub line: Option<usize>,
    /// What is wrong, naming the key or field involved.
    pub message: String,
}

impl KeymapError {
    /// An error at `line` of `file`.
    pub fn at(file: &str, line: usize, message: impl Into<String>) -> KeymapError {
        KeymapError {
            file: file.to_string(),
            line: Some(line),
            message: message.into(),
        }
    }

    /// An error about the file as a whole (e.g. it cannot be read).
    pub fn whole_file(file: &str, message: impl Into<String>) -> KeymapError {
        KeymapError {
            file: file.to_string(),
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for KeymapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for KeymapError {}
